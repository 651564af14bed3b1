import Testing

@testable import ObservationTokens

// Every kind of token in the debugging aids: listed once in `observationReport`, counted once
// by the census and drawn once by `dotGraph`, named by what was written, at the line that
// wrote it, with the options it was given (the table in docs/Debugging.md).

/// A binding's destination.
final class DebugLabel: ObservableModel, @unchecked Sendable {
    @Observed var text = ""
}

/// A node whose paths can loop back to it.
final class DebugNode: ObservableModel, @unchecked Sendable {
    @Observed var name = ""
    @Observed var next: DebugNode?
}

/// A model with a computed property.
final class DebugBadge: ObservableModel, @unchecked Sendable {
    @Observed var title = ""
    @Computed({ (badge: DebugBadge) in badge.title.uppercased() }) var label: String
}

/// What the debugging aids show of the one token created at `line` of this file.
struct DebugShown {
    static let file = "ObservationTokensTests/TokenKindListingTests.swift"

    let site: String
    /// The lines of `observationReport` that name the token's site.
    let lines: [String]
    /// How many tokens the report says the object has.
    let summary: String
    /// The headings the token's line comes under.
    let heading: String?
    /// The census groups at the token's site.
    let census: [ObservationDebugging.CensusEntry]
    /// The token nodes of the object's graph, and the edges from them to the object.
    let graphTokenNodes: [String]
    let graphEdges: [String]

    init(on object: ObservableModel, line: Int) {
        let site = "\(Self.file):\(line)"
        self.site = site
        let report = object.observationReport.split(separator: "\n").map(String.init)
        lines = report.filter { $0.hasSuffix("created at \(site)") }
        summary = report[0].split(separator: ": ").last.map(String.init) ?? ""
        if let index = report.firstIndex(where: { $0.hasSuffix("created at \(site)") }) {
            heading = report[..<index].last { $0.hasPrefix("  ") && !$0.hasPrefix("    ") }
        } else {
            heading = nil
        }
        census = ObservationDebugging.census().filter { $0.site == site }
        let graph = ObservationDebugging.dotGraph(of: object).split(separator: "\n").map(String.init)
        graphTokenNodes = graph.filter { $0.contains("[shape=ellipse") }
        let objectNode = "\"o0x\(String(UInt(bitPattern: ObjectIdentifier(object)), radix: 16))\""
        graphEdges = graph.filter { $0.hasPrefix("  \"t") && $0.contains("-> \(objectNode)") }
    }

    /// The one line, or "" when there is not exactly one.
    var line: String { lines.count == 1 ? lines[0] : "" }
}

private func hex(_ object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: ObjectIdentifier(object)), radix: 16)
}

extension DebuggingTests {
    // MARK: Observations of properties

    /// A property token with `.endpointChanges` used to show as a `path` token.
    @Test func propertyChangeAndPathTokensShowTheirKindAndTheOptionsTheyWereGiven() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        // Given a property token with options and an observer, a change token, a string path
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        person.address = DebugAddress()
        let viewer = DebugViewer()
        let line = #line + 1
        let token = person.observe(\.name, observer: viewer, options: [.initial, .endpointChanges], queue: queue) {
            _, _ in
        }
        let changeLine = #line + 1
        let change = person.observe(.changes(\.name), options: .immediate, queue: queue) { _, _ in }
        let pathLine = #line + 1
        let path = try! person.observe(.path("address.zip"), options: .endpointChanges, queue: queue) { _ in }

        // When the aids show the person
        let shown = DebugShown(on: person, line: line)

        // Then each is one line under its property, one census entry, one node
        #expect(
            shown.line
                == "    property \(hex(token.subscription)) \"name\" observer: DebugViewer \(hex(viewer)) options: [.initial, .endpointChanges] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(shown.heading == "  name:")
        #expect(shown.summary == "3 observations")
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 3)
        #expect(shown.graphEdges.count == 3)
        let changeShown = DebugShown(on: person, line: changeLine)
        #expect(
            changeShown.line
                == "    change \(hex(change.subscription)) \"name\" observer: none options: [.immediate] queue: manual \(hex(queue)) created at \(changeShown.site)"
        )
        #expect(changeShown.census.map(\.count) == [1])
        let pathShown = DebugShown(on: person, line: pathLine)
        #expect(
            pathShown.line
                == "    path \(hex(path.subscription)) \"address.zip\" observer: none options: [.endpointChanges] queue: manual \(hex(queue)) created at \(pathShown.site)"
        )
        #expect(pathShown.heading == "  address:")
        #expect(pathShown.census.map(\.count) == [1])
        withExtendedLifetime((token, change, path, viewer)) {}
    }

    /// A computed property's token used to show no name, under `#serial`.
    @Test func aComputedPropertysTokenIsNamedByItsProperty() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let badge = DebugBadge()
        let line = #line + 1
        let token = badge.observe(\.label, queue: queue) { _ in }
        let shown = DebugShown(on: badge, line: line)
        #expect(
            shown.line
                == "    property \(hex(token.subscription)) \"label\" observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(shown.heading == "  label:")
        #expect(shown.census.map(\.count) == [1])
        withExtendedLifetime(token) {}
    }

    @Test func aListIsOneTokenUnderAllItsProperties() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let line = #line + 1
        let token = person.observe([\.name, \.address], queue: queue) { _ in }
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.line
                == "    list \(hex(token.subscription)) \"name, address\" observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(shown.heading == "  name, address:")
        #expect(shown.summary == "1 observation")
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        #expect(
            shown.graphEdges == ["  \"t\(hex(token.subscription))\" -> \"o\(hex(person))\" [label=\"name, address\"];"])
        withExtendedLifetime(token) {}
    }

    @Test func aChainIsOneTokenOnEveryObjectItRunsThroughCountedAtItsRoot() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let home = DebugAddress()
        person.address = home
        let line = #line + 1
        let token = person.observe(.chain(KeyPathChain(\DebugPerson.address).then(\.zip)), queue: queue) { _, _ in }
        let atRoot = DebugShown(on: person, line: line)
        let onTheWay = DebugShown(on: home, line: line)
        let id = hex(token.subscription)
        #expect(
            atRoot.line
                == "    chain \(id) \"address.zip\" observer: none options: [] queue: manual \(hex(queue)) created at \(atRoot.site)"
        )
        #expect(
            onTheWay.line
                == "    chain \(id) \"address.zip\" rooted at DebugPerson \(hex(person)) observer: none options: [] queue: manual \(hex(queue)) created at \(atRoot.site)"
        )
        #expect(atRoot.census == [.init(observedType: "DebugPerson", site: atRoot.site, count: 1)])
        #expect(atRoot.graphTokenNodes.count == 1)
        #expect(onTheWay.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aPathThatLoopsIsListedOnce() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        // Given two nodes pointing at each other, and a path that runs n → m → n → m
        let queue = CoalescingQueue(target: .manual)
        let n = DebugNode()
        let m = DebugNode()
        n.next = m
        m.next = n
        let line = #line + 1
        let token = try! n.observe(.path("next.next.next.name"), queue: queue) { _ in }

        // Then each node lists it once, under the one property it runs through there
        let id = hex(token.subscription)
        for (node, rooted) in [(n, ""), (m, " rooted at DebugNode \(hex(n))")] {
            let shown = DebugShown(on: node, line: line)
            #expect(
                shown.lines == [
                    "    path \(id) \"next.next.next.name\"\(rooted) observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
                ])
            #expect(shown.summary == "1 observation")
            #expect(shown.graphTokenNodes.count == 1)
            #expect(shown.graphEdges.count == 1)
        }
        #expect(DebugShown(on: n, line: line).heading == "  next:")
        #expect(DebugShown(on: m, line: line).heading == "  next, name:")
        #expect(DebugShown(on: n, line: line).census.map(\.count) == [1])
        withExtendedLifetime(token) {}
    }

    @Test func observeAllShowsAsAll() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let line = #line + 1
        let token = person.observe(.all, queue: queue) { _ in }
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.line
                == "    all \(hex(token.subscription)) \"*\" observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(shown.heading == "  *:")
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    // MARK: Tracked tokens

    @Test func aTrackedKeyPathIsNamedByItsKeyPath() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let home = DebugAddress()
        person.address = home
        let line = #line + 1
        let token = person.observe(\.address?.zip, queue: queue) { _ in }
        let shown = DebugShown(on: person, line: line)
        let id = hex(token.subscription)
        #expect(
            shown.line
                == "    tracked \(id) \"\\DebugPerson.address?.zip\" observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(
            DebugShown(on: home, line: line).line.hasPrefix(
                "    tracked \(id) \"\\DebugPerson.address?.zip\" rooted at"))
        #expect(token.debugDescription.contains("\\DebugPerson.address?.zip"))
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aTrackingClosureIsNamedAsOne() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let line = #line + 1
        let token = person.observe(options: .immediate, queue: queue) { person in _ = person.name }
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.line
                == "    tracked \(hex(token.subscription)) \"tracking closure\" observer: none options: [.immediate] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    // MARK: whichOf, will-change, tell

    @Test func aWhichOfTokenIsOneTokenWithTheCallersObserverAndOptions() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        // Given a whichOf token on two properties, with an observer (it is made of several
        // subscriptions: one per property, and one that delivers)
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let viewer = DebugViewer()
        let line = #line + 1
        let token = person.observe(.whichOf([\.name, \.address]), observer: viewer, queue: queue) { _, _, _ in }

        // Then it is one token, named by its key paths, without `.immediate`
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.lines == [
                "    whichOf \(hex(token.subscription)) \"name, address\" observer: DebugViewer \(hex(viewer)) options: [] queue: manual \(hex(queue)) created at \(shown.site)"
            ])
        #expect(shown.heading == "  name, address:")
        #expect(shown.summary == "1 observation")
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        #expect(shown.graphEdges.count == 1)
        #expect(token.debugDescription.contains("DebugPerson name, address, created at \(shown.site)"))
        withExtendedLifetime((token, viewer)) {}
    }

    @Test func aWillChangeTokenShowsBeforeEachSetNotAsATell() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let person = DebugPerson()
        let line = #line + 1
        let token = person.observe(.willChange) { _ in }
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.line
                == "    will-change \(hex(token.subscription)) \"*\" observer: none options: [] created at \(shown.site)"
        )
        #expect(shown.heading == "  before each set:")
        #expect(!person.observationReport.contains("tell"))
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        #expect(shown.graphEdges.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aTellIsOneObservationUnderItsProperty() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let viewer = DebugViewer()
        let line = #line + 1
        person.tell(viewer, when: \.name, options: .immediate, queue: queue) { _, _ in }
        let shown = DebugShown(on: person, line: line)
        #expect(shown.lines.count == 1)
        #expect(shown.line.hasPrefix("    tell 0x"))
        #expect(
            shown.line.hasSuffix(
                "\"name\" observer: DebugViewer \(hex(viewer)) options: [.immediate] queue: manual \(hex(queue)) created at \(shown.site)"
            ))
        #expect(shown.heading == "  name:")
        #expect(shown.summary == "1 observation")
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        person.stopTelling(viewer)
        withExtendedLifetime(viewer) {}
    }

    // MARK: Bindings and pipelines

    @Test func aBindingIsOneTokenAtItsSourceAndShowsOnItsDestination() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        // Given a one-way binding into a model (which watches the destination property)
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let label = DebugLabel()
        let line = #line + 1
        let token = person.bind(\.name, to: label, \.text, queue: queue)
        let id = hex(token.subscription)

        // Then the source lists it under its property, the destination as bound to it, and
        // the census counts it once, at the source
        let source = DebugShown(on: person, line: line)
        let destination = DebugShown(on: label, line: line)
        #expect(
            source.line
                == "    binding \(id) \"name\" observer: none options: [.initial] queue: manual \(hex(queue)) created at \(source.site)"
        )
        #expect(
            destination.line
                == "    binding \(id) \"name\" rooted at DebugPerson \(hex(person)) observer: none options: [.initial] queue: manual \(hex(queue)) created at \(source.site)"
        )
        #expect(destination.heading == "  text:")  // the destination property, which the binding watches
        #expect(source.census == [.init(observedType: "DebugPerson", site: source.site, count: 1)])
        #expect(ObservationDebugging.census().filter { $0.observedType == "DebugLabel" }.isEmpty)
        #expect(source.graphTokenNodes.count == 1)
        #expect(destination.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aTwoWayBindingIsOneTokenNamedByBothSides() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let label = DebugLabel()
        let line = #line + 1
        let token = person.bindTwoWay(\.name, with: label, \.text, queue: queue)
        let id = hex(token.subscription)
        let a = DebugShown(on: person, line: line)
        let b = DebugShown(on: label, line: line)
        #expect(
            a.line
                == "    binding \(id) \"name, text\" observer: none options: [.initial] queue: manual \(hex(queue)) created at \(a.site)"
        )
        #expect(b.line.hasPrefix("    binding \(id) \"name, text\" rooted at DebugPerson \(hex(person))"))
        #expect(a.heading == "  name:")
        #expect(b.heading == "  text:")
        #expect(a.census.map(\.count) == [1])
        #expect(a.graphTokenNodes.count == 1)
        #expect(b.graphTokenNodes.count == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aPipelineShowsAsAPipelineAndACombinedOneAsOneToken() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let line = #line + 1
        let posted = person.pipeline(of: \.name).map { $0.count }.post(options: [], queue: queue) { _ in }
        let both = ValuePipeline.combineLatest(person.pipeline(of: \.name), person.pipeline(of: \.address)) {
            name, _ in name
        }
        let combinedLine = #line + 1
        let combined = both.post(queue: queue) { _ in }
        let shown = DebugShown(on: person, line: line)
        #expect(
            shown.line
                == "    pipeline \(hex(posted.subscription)) \"name\" observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)"
        )
        let combinedShown = DebugShown(on: person, line: combinedLine)
        #expect(
            combinedShown.lines == [
                "    pipeline \(hex(combined.subscription)) \"name, address\" observer: none options: [.initial] queue: manual \(hex(queue)) created at \(combinedShown.site)"
            ])
        #expect(combinedShown.heading == "  name, address:")
        #expect(combinedShown.census.map(\.count) == [1])
        #expect(shown.summary == "2 observations")
        #expect(shown.graphTokenNodes.count == 2)
        withExtendedLifetime((posted, combined)) {}
    }

    // MARK: Collections and sequences

    @Test func collectionTokensShowWhatTheirCallWatches() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let items: ObservedArray<DebugAddress> = [DebugAddress(), DebugAddress()]
        let settings: ObservedDictionary<String, String> = [:]
        let tags: ObservedSet<String> = []
        let mutationsLine = #line + 1
        let mutations = items.observe(.mutations, queue: queue) { _, _ in }
        let elementLine = #line + 1
        let element = items.observe(.element(at: 1), queue: queue) { _ in }
        let objectLine = #line + 1
        let object = items.observe(.object(at: 0), queue: queue) { _, _ in }
        let eachLine = #line + 1
        let each = items.observe(.each(\.zip), queue: queue) { _ in }
        let keyLine = #line + 1
        let key = settings.observe(.key("theme"), queue: queue) { _ in }
        let memberLine = #line + 1
        let member = tags.observe(.member("urgent"), queue: queue) { _ in }

        let expected: [(ObservableModel, Int, ObservationToken, String, String)] = [
            (items, mutationsLine, mutations, "mutations \(hex(mutations.subscription))", "contents"),
            (items, elementLine, element, "element \(hex(element.subscription)) \"#1\"", "indexes"),
            (items, objectLine, object, "object \(hex(object.subscription)) \"(followed object)\"", "followed objects"),
            (items, eachLine, each, "each \(hex(each.subscription)) \"*.zip\"", "*"),
            (settings, keyLine, key, "key \(hex(key.subscription)) \"theme\"", "keys"),
            (tags, memberLine, member, "member \(hex(member.subscription)) \"urgent\"", "members"),
        ]
        for (collection, line, _, start, heading) in expected {
            let shown = DebugShown(on: collection, line: line)
            #expect(
                shown.line
                    == "    \(start) observer: none options: [] queue: manual \(hex(queue)) created at \(shown.site)")
            #expect(shown.heading == "  \(heading):")
            #expect(shown.census.map(\.count) == [1])
        }
        #expect(DebugShown(on: items, line: mutationsLine).graphTokenNodes.count == 4)
        #expect(DebugShown(on: settings, line: keyLine).graphTokenNodes.count == 1)
        withExtendedLifetime(expected.map(\.2)) {}
    }

    @Test func valuesOfIsListedAtTheCallersLine() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let line = #line + 1
        let values = person.values(of: \.name, queue: queue)
        let shown = DebugShown(on: person, line: line)
        #expect(shown.lines.count == 1)
        #expect(shown.line.hasPrefix("    values 0x"))
        #expect(shown.line.contains("\"name\" observer: ValueStream<String> 0x"))
        #expect(shown.line.hasSuffix("options: [.initial] queue: manual \(hex(queue)) created at \(shown.site)"))
        #expect(shown.census.map(\.count) == [1])
        #expect(shown.graphTokenNodes.count == 1)
        withExtendedLifetime(values) {}
    }

    // MARK: Debugging tokens

    @Test func breakpointsAndWatchpointsShowAsSuch() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let token = person.observe(\.name, queue: queue) { _ in }
        let breakpointLine = #line + 1
        let breakpoint = token.breakOnInvoke()
        let watchLine = #line + 1
        let watch = person.breakOnChange(of: \.name)
        let id = hex(token.subscription)
        let stop = DebugShown(on: person, line: breakpointLine)
        #expect(
            stop.line
                == "    breakpoint \(hex(breakpoint.subscription)) \"token \(id) \"name\"\" observer: none options: [] queue: manual \(hex(queue)) created at \(stop.site)"
        )
        let watchpoint = DebugShown(on: person, line: watchLine)
        #expect(
            watchpoint.line
                == "    watchpoint \(hex(watch.subscription)) \"\\DebugPerson.name\" observer: none options: [] queue: main created at \(watchpoint.site)"
        )
        #expect(stop.summary == "3 observations")
        #expect(stop.graphTokenNodes.count == 3)
        withExtendedLifetime((token, breakpoint, watch)) {}
    }
}
