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

    @Test func optionalDestination() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()

        let subtitle = person.bind(\.name, to: label, \.subtitle, queue: queue)   // subtitle: String?

        #expect(label.subtitle == "Ada")
        withExtendedLifetime(subtitle) {}
    }

    @Test func twoQueues() {
        let serviceQueue = CoalescingQueue(target: .manual)
        let screenQueue = CoalescingQueue(target: .manual)
        let service = BindPerson()
        let screen = BindPerson()

        let status = service.bindTwoWay(\.name, with: screen, \.name, queue: serviceQueue, otherQueue: screenQueue)
        #expect(screenQueue.drain() == 1)  // the initial value lands
        service.name = "online"
        #expect(serviceQueue.drain() == 0)
        #expect(screen.name == "")
        #expect(screenQueue.drain() == 1)
        #expect(screen.name == "online")
        withExtendedLifetime(status) {}
    }

    @Test func twoQueuesAsWritten() {
        let serviceQueue = CoalescingQueue(target: .manual)
        let screenQueue = CoalescingQueue(target: .manual)
        let service = BindPerson()
        let screen = BindPerson()

        let status = service.bindTwoWay(\.name, with: screen, \.name, options: [], queue: serviceQueue, otherQueue: screenQueue)
        service.name = "online"
        serviceQueue.drain()   // reads service.name here and hands the value over: returns 0
        screenQueue.drain()    // writes screen.name here: returns 1

        #expect(screen.name == "online")
        withExtendedLifetime(status) {}
    }

    @Test func cycles() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let c = BindPerson()

        // a → b → c → a
        let ring = [
            a.bind(\.name, to: b, \.name, options: [], queue: queue),
            b.bind(\.name, to: c, \.name, options: [], queue: queue),
            c.bind(\.name, to: a, \.name, options: [], queue: queue),
        ]
        a.name = "x"
        c.name = "y"    // in the same tick, later
        queue.drain()   // returns 3: b = "x"; then a = "y" and b = "y" (c holds "y" already)
        queue.drain()   // returns 0: settled

        #expect([a.name, b.name, c.name] == ["y", "y", "y"])
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(ring) {}
    }

    @Test func cyclesCount() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let c = BindPerson()
        let ring = [
            a.bind(\.name, to: b, \.name, options: [], queue: queue),
            b.bind(\.name, to: c, \.name, options: [], queue: queue),
            c.bind(\.name, to: a, \.name, options: [], queue: queue),
        ]
        a.name = "x"
        c.name = "y"
        #expect([queue.drain(), queue.drain()] == [3, 0])
        withExtendedLifetime(ring) {}
    }

    @Test func cuttingOff() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        var tokens = Set<ObservationToken>()

        person.bind(\.name, to: label, \.text, queue: queue).store(in: &tokens)
        person.pipeline(of: \.age).post(queue: queue) { print($0) }.store(in: &tokens)

        person.cutOffBinding(\.name, to: label, \.text)   // returns 1: label.text no longer follows name
        person.stopPosting(\.age)                          // returns 1
        try person.stopPosting(path: "friend.name")        // returns 0: no posting of that path

        #expect(tokens.allSatisfy { !$0.isValid })
    }

    @Test func cuttingOffCounts() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        var tokens = Set<ObservationToken>()
        person.bind(\.name, to: label, \.text, queue: queue).store(in: &tokens)
        person.pipeline(of: \.age).post(queue: queue) { print($0) }.store(in: &tokens)
        #expect(person.cutOffBinding(\.name, to: label, \.text) == 1)
        #expect(person.stopPosting(\.age) == 1)
        #expect(try person.stopPosting(path: "friend.name") == 0)
    }
}
