import Testing

@testable import ObservationTokens

/// Bindings and pipelines show in `observationReport` where the user created them, once per
/// object they watch, and register nothing else.
@Suite struct BindingReportTests {
    /// The report's lines about observations (not headers or property names).
    static func observationLines(_ report: String) -> [Substring] {
        report.split(separator: "\n").filter { $0.contains(" created at ") }
    }

    @Test func aBindingToAModelIsListedOnceOnEachSideAtTheLineThatMadeIt() {
        // Given a binding from person.name to card.title
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let card = BindCard()
        let token = person.bind(\.name, to: card, \.title, queue: queue)
        let site = "ObservationTokensTests/BindingReportTests.swift:\(#line - 1)"

        // Then each object lists it once, at that line, under the property it watches
        let source = Self.observationLines(person.observationReport)
        let destination = Self.observationLines(card.observationReport)
        #expect(source.count == 1 && source.allSatisfy { $0.hasSuffix("created at \(site)") })
        #expect(destination.count == 1 && destination.allSatisfy { $0.hasSuffix("created at \(site)") })
        #expect(!card.observationReport.contains("observer-lifetime"))
        withExtendedLifetime(token) {}
    }

    @Test func noKindOfBindingListsALibraryFile() throws {
        // Given one binding or posting of every kind
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        person.friend = BindPerson()
        let other = BindPerson()
        let card = BindCard()
        let label = BindLabel()
        let firstLine = #line + 2
        let tokens = [
            person.bind(\.name, to: label, \.text, queue: queue),
            person.pipeline(of: \.name).map { $0 + "!" }.bind(to: card, \.title, queue: queue),
            person.bindTwoWay(\.nickname, with: other, \.nickname, queue: queue),
            person.bind([BindingPair(\.name, \.title), BindingPair(\.age, \.years)], to: card, queue: queue),
            person.pipeline(of: \.age).post(queue: queue) { _ in },
            ValuePipeline.combineLatest(person.pipeline(of: \.name), other.pipeline(of: \.age)) { "\($0)\($1)" }
                .bind(to: card, \.subtitle, queue: queue),
            other.pipeline(of: \.name).bind(to: person, KeyPathChain(\.friend), \.name, queue: queue),
            try other.pipeline(of: \.name).bind(to: person, path: "friend.nickname", queue: queue),
            try other.pipeline(of: \.age).bind(to: card, path: "years", queue: queue),
            person.bind(\.name, to: card, \.caption, queue: queue),
        ]
        let lastLine = #line - 2

        // Then every line of every object's report names this file, at one of those lines
        for object in [person, person.friend!, other, card] as [ObservableModel] {
            let report = object.observationReport
            #expect(!report.contains("ObservationTokens/"), "\(report)")
            for line in Self.observationLines(report) {
                let site = line.split(separator: " ").last.map(String.init) ?? ""
                let number = Int(site.split(separator: ":").last ?? "") ?? 0
                #expect(site.hasPrefix("ObservationTokensTests/BindingReportTests.swift:"), "\(line)")
                #expect((firstLine...lastLine).contains(number), "\(line)")
            }
        }
        withExtendedLifetime(tokens) {}
    }
}
