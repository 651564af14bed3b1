import Testing

@testable import ObservationTokens

/// Issue 13: one-way bindings from a property, a typed chain or a string path to a property or
/// a destination path.
@Suite struct OneWayBindingTests {
    @Test func destinationTakesTheSourceValueAtCreation() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()

        let token = person.bind(\.name, to: label, \.text, queue: queue)

        #expect(label.text == "Ada")
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func optingOutOfTheInitialValueLeavesTheDestinationUntilAChange() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        label.text = "before"

        let token = person.bind(\.name, to: label, \.text, options: [], queue: queue)
        #expect(label.text == "before")

        person.name = "Grace"
        queue.drain()
        #expect(label.text == "Grace")
        withExtendedLifetime(token) {}
    }

    @Test func manySetsInOneTickWriteTheDestinationOnce() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let label = BindLabel()
        let token = person.bind(\.age, to: label, \.count, queue: queue)
        let writes = BindCounter()
        let countWatcher = person.pipeline(of: \.age).post(options: [], queue: queue) { _ in writes.increment() }

        for age in 1...1_000 { person.age = age }
        #expect(label.count == 0)
        #expect(queue.drain() == 2)

        #expect(label.count == 1_000)
        #expect(writes.value == 1)
        withExtendedLifetime((token, countWatcher)) {}
    }

    @Test func immediateBindingWritesInsideTheSetter() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let label = BindLabel()
        let token = person.bind(\.name, to: label, \.text, options: [.initial, .immediate], queue: queue)

        person.name = "a"
        #expect(label.text == "a")
        person.name = "b"
        #expect(label.text == "b")
        #expect(label.textWrites.value == 3)  // initial "", then a and b
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func chainSourceFollowsAReplacedIntermediate() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let first = BindPerson(name: "first")
        let second = BindPerson(name: "second")
        person.friend = first
        let label = BindLabel()

        let token = person.pipeline(of: KeyPathChain(\BindPerson.friend).then(\.name))
            .map { $0 ?? "nobody" }
            .bind(to: label, \.text, queue: queue)
        #expect(label.text == "first")

        person.friend = second
        queue.drain()
        #expect(label.text == "second")

        first.name = "old friend renamed"
        queue.drain()
        #expect(label.text == "second")

        second.name = "second renamed"
        queue.drain()
        #expect(label.text == "second renamed")

        person.friend = nil
        queue.drain()
        #expect(label.text == "nobody")
        withExtendedLifetime((token, first)) {}
    }

    @Test func stringPathSource() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        person.friend = BindPerson(name: "Ada")
        let label = BindLabel()

        let token = try person.pipeline(path: "friend.name")
            .compactMap { $0 as? String }
            .bind(to: label, \.text, queue: queue)
        #expect(label.text == "Ada")

        person.friend = BindPerson(name: "Grace")
        queue.drain()
        #expect(label.text == "Grace")

        // Unreachable: nil, which the compactMap stops.
        person.friend = nil
        queue.drain()
        #expect(label.text == "Grace")
        withExtendedLifetime(token) {}
    }

    @Test func badStringPathThrows() {
        let person = BindPerson()
        #expect(throws: KeyPathError.self) {
            _ = try person.pipeline(path: "friend.nope")
        }
    }

    @Test func keyPathThatIsNotObservableEndsTheTokenAtOnce() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let label = BindLabel()
        let token = person.bind(\.plain, to: label, \.text, queue: queue)
        #expect(!token.isValid)
        #expect(!token.now())
    }

    @Test func destinationPathFollowsAReplacedIntermediate() {
        // friend.name ← clown.name
        let queue = CoalescingQueue(target: .manual)
        let clown = BindPerson(name: "Bozo")
        let person = BindPerson()
        let firstFriend = BindPerson()
        person.friend = firstFriend

        let token = clown.pipeline(of: \.name).bind(to: person, KeyPathChain(\BindPerson.friend), \.name, queue: queue)
        #expect(firstFriend.name == "Bozo")

        let secondFriend = BindPerson()
        person.friend = secondFriend
        queue.drain()
        #expect(secondFriend.name == "Bozo")  // the new friend is brought up to date at once

        clown.name = "Pennywise"
        queue.drain()
        #expect(secondFriend.name == "Pennywise")
        #expect(firstFriend.name == "Bozo")  // the old friend is left alone

        person.friend = nil
        clown.name = "Krusty"
        queue.drain()
        #expect(secondFriend.name == "Pennywise")
        #expect(token.isValid)
        withExtendedLifetime(token) {}
    }

    @Test func severalBindingsOnOneSourceAllReceive() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let labels = (0..<3).map { _ in BindLabel() }
        let tokens = labels.map { person.bind(\.name, to: $0, \.text, queue: queue) }

        person.name = "Ada"
        queue.drain()
        #expect(labels.map(\.text) == ["Ada", "Ada", "Ada"])
        withExtendedLifetime(tokens) {}
    }

    @Test func cuttingOneBindingLeavesItsSibling() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let cut = BindLabel()
        let kept = BindLabel()
        let cutToken = person.bind(\.name, to: cut, \.text, queue: queue)
        let keptToken = person.bind(\.name, to: kept, \.text, queue: queue)

        person.name = "pending when cut"
        cutToken.invalidate()
        queue.drain()

        #expect(cut.text == "")
        #expect(kept.text == "pending when cut")
        person.name = "later"
        queue.drain()
        #expect(cut.text == "")
        #expect(kept.text == "later")
        withExtendedLifetime(keptToken) {}
    }

    @Test func transitiveBindingsPropagateInOneTick() {
        // A → B → C, on one queue: B's write makes the second binding pending, and a token that
        // has not fired yet in this drain fires in the same drain.
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let c = BindPerson()
        let ab = a.bind(\.name, to: b, \.name, queue: queue)
        let bc = b.bind(\.name, to: c, \.name, queue: queue)

        a.name = "x"
        #expect(queue.drain() == 2)
        #expect(b.name == "x")
        #expect(c.name == "x")
        #expect(queue.pendingCount == 0)
        withExtendedLifetime((ab, bc)) {}
    }

    @Test func bindingToAModelNotifiesItsObservers() {
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson()
        let destination = BindCard()
        let token = source.bind(\.name, to: destination, \.title, options: [], queue: queue)
        let seen = BindLog<String>()
        let observer = destination.observe(\.title, queue: queue) { seen.append($0.title) }

        source.name = "x"
        queue.drain()
        #expect(seen.values == ["x"])
        withExtendedLifetime((token, observer)) {}
    }
}
