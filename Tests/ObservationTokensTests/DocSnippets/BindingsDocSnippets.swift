// swift-format-ignore-file
// The code blocks of docs/Bindings.md, verbatim (see scripts/check-doc-snippets.py), over the
// binding tests' fixtures (`BindPerson`, `BindLabel`, `BindCard`).

import Testing

@testable import ObservationTokens

@Suite struct BindingsDocSnippetTests {
    @Test func overview() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let label = BindLabel()
        let a = BindPerson(name: "a")
        let b = BindPerson(name: "b")
        let profileCard = BindCard()
        let foo = BindPerson(name: "foo")
        let bar = BindPerson(name: "bar")
        let clown = BindPerson()

        // one-way: label.text follows person.name, starting now
        let name = person.bind(\.name, to: label, \.text, queue: queue)

        // with operators: each runs in declaration order, once per delivery
        let badge = person.pipeline(of: \.name)
            .filter { $0.count > 5 }
            .map { $0.uppercased() }
            .onApply { _ in print("label updated") }
            .bind(to: label, \.text, queue: queue)

        // two-way: b takes a's value now; then either side's change reaches the other
        let sync = a.bindTwoWay(\.name, with: b, \.name, queue: queue)

        // group: several typed pairs, one token
        let card = person.bind([.init(\.name, \.title), .init(\.age, \.years)], to: profileCard, queue: queue)

        // posting: a closure that receives values instead of the object
        let log = person.pipeline(of: \.age).removeDuplicates().post(options: [], queue: queue) { print($0) }

        // combining: any number of typed sources, one value, at most once per tick
        let full = ValuePipeline.combineLatest(foo.pipeline(of: \.name), bar.pipeline(of: \.name)) { $0 + $1 }
            .bind(to: clown, \.name, queue: queue)

        #expect(label.text == "Ada")
        #expect(b.name == "a")
        #expect(profileCard.title == "Ada" && profileCard.years == 36)
        #expect(clown.name == "foobar")
        withExtendedLifetime((name, badge, sync, card, log, full)) {}
    }

    @Test func stringPathDestination() throws {
        let clown = BindPerson(name: "Bozo")
        let person = BindPerson()
        person.friend = BindPerson()

        // friend.name ← clown.name, whoever the friend is
        let token = try clown.pipeline(of: \.name).bind(to: person, path: "friend.name")

        #expect(person.friend?.name == "Bozo")  // the initial push; later ones on the main queue
        withExtendedLifetime(token) {}
    }

    @Test func nowPushesThroughThisTokenOnly() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        let token = person.pipeline(of: \.name).map { "[\($0)]" }.bind(to: label, \.text, options: [], queue: queue)
        label.text = "scribbled"
        token.now()   // label.text == "[Ada]" again; person's other observers heard nothing
        #expect(label.text == "[Ada]")
    }

    @Test func combineLatestOfFive() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let other = BindPerson(name: "Bo")
        let card = BindCard()
        let label = BindLabel()
        let token = ValuePipeline.combineLatest(
            person.pipeline(of: \.name), person.pipeline(of: \.age), other.pipeline(of: \.name),
            card.pipeline(of: \.subtitle), person.pipeline(of: \.point)
        ) { name, age, otherName, suffix, point in
            "\(name) \(age) \(otherName)\(suffix) \(point.x)"
        }
        .bind(to: label, \.text, queue: queue)
        #expect(label.text == "Ada 36 Bountouched 0")
        withExtendedLifetime(token) {}
    }
}
