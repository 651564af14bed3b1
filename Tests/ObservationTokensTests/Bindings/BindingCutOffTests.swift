import Testing

@testable import ObservationTokens

/// Bindings are cut off by their source and destination, and postings stopped by their
/// source, without their tokens (YJSafeKVO's `cutOff:` and `stop`).
@Suite struct BindingCutOffTests {
    @Test func cuttingOffABindingEndsItAndLeavesItsSiblingsAlone() {
        // Given a binding, one to another destination, and one to another property of the same
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a")
        let label = BindLabel()
        let other = BindLabel()
        let token = person.bind(\.name, to: label, \.text, queue: queue)
        let sibling = person.bind(\.name, to: other, \.text, queue: queue)
        let otherProperty = person.pipeline(of: \.name).map(\.count).bind(to: label, \.count, queue: queue)

        // When the first is cut off by its source and destination
        let cut = person.cutOffBinding(\.name, to: label, \.text)
        person.name = "bb"
        queue.drain()

        // Then it alone ended
        #expect(cut == 1)
        #expect(!token.isValid)
        #expect(sibling.isValid && otherProperty.isValid)
        #expect(label.text == "a" && other.text == "bb" && label.count == 2)
        #expect(person.cutOffBinding(\.name, to: label, \.text) == 0)
    }

    @Test func cuttingOffFindsPipelinesWhateverTheirOperatorsAndModelDestinations() {
        // Given two pipelines from name to card.title (a model), and one to card.subtitle
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a")
        let card = BindCard()
        let tokens = [
            person.pipeline(of: \.name).map { $0.uppercased() }.bind(to: card, \.title, queue: queue),
            person.pipeline(of: \.name).filter { !$0.isEmpty }.bind(to: card, \.title, queue: queue),
            person.bind(\.name, to: card, \.subtitle, queue: queue),
        ]

        // When the bindings to title are cut off
        let cut = person.cutOffBinding(\.name, to: card, \.title)

        // Then both end, and the one to subtitle goes on
        #expect(cut == 2)
        #expect(tokens.map(\.isValid) == [false, false, true])
        person.name = "b"
        queue.drain()
        #expect(card.title == "a" && card.subtitle == "b")
        withExtendedLifetime(tokens) {}
    }

    @Test func cuttingOffATwoWayBindingFromEitherSideEndsBothDirections() {
        // Given two two-way bindings between a.name and b.nickname, made from each side
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson(name: "a")
        let b = BindPerson()
        let fromA = a.bindTwoWay(\.name, with: b, \.nickname, queue: queue)
        let fromB = b.bindTwoWay(\.nickname, with: a, \.name, queue: queue)

        // When one side cuts off the binding to the other
        let cut = b.cutOffBinding(\.nickname, to: a, \.name)

        // Then both bindings ended, in both directions
        #expect(cut == 2)
        #expect(!fromA.isValid && !fromB.isValid)
        a.name = "x"
        b.nickname = "y"
        queue.drain()
        #expect(a.name == "x" && b.nickname == "y")
    }

    @Test(arguments: [false, true])
    func cuttingOffOnePairOfAGroupLeavesItsOtherPairs(toAModel: Bool) {
        // Given a group binding of name and age
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a", age: 1)
        let card = BindCard()
        let label = BindLabel()
        let token =
            toAModel
            ? person.bind([BindingPair(\.name, \.title), BindingPair(\.age, \.years)], to: card, queue: queue)
            : person.bind([BindingPair(\.name, \.text), BindingPair(\.age, \.count)], to: label, queue: queue)

        // When the name pair is cut off
        let cut =
            toAModel
            ? person.cutOffBinding(\.name, to: card, \.title) : person.cutOffBinding(\.name, to: label, \.text)
        person.name = "b"
        person.age = 2
        queue.drain()

        // Then only the age pair goes on, and the group's token with it
        #expect(cut == 1)
        #expect(token.isValid)
        if toAModel {
            #expect(card.title == "a" && card.years == 2)
            // (the pair watched card.title; it no longer does)
            #expect(card.observerCount(of: \.title) == 0 && card.observerCount(of: \.years) == 1)
        } else {
            #expect(label.text == "a" && label.count == 2)
        }
    }

    @Test func aBindingToADestinationPathIsNotCutOffAsABindingToTheRoot() {
        // Given a binding to friend.name of person, and one to person.name itself
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson(name: "a")
        let person = BindPerson()
        person.friend = BindPerson()
        let toPath = source.pipeline(of: \.name).bind(
            to: person, KeyPathChain(\BindPerson.friend), \.name, queue: queue)
        let toRoot = source.bind(\.name, to: person, \.name, queue: queue)

        // When the binding to person.name is cut off
        let cut = source.cutOffBinding(\.name, to: person, \.name)

        // Then the one to the path goes on
        #expect(cut == 1)
        #expect(toPath.isValid && !toRoot.isValid)
    }

    @Test func stoppingPostingsEndsEveryPostingOfThePropertyAndNoBinding() {
        // Given two postings of age, a binding of age, and a posting of name
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let label = BindLabel()
        let posted = BindLog<Int>()
        let tokens = [
            person.pipeline(of: \.age).post(options: [], queue: queue) { posted.append($0) },
            person.pipeline(of: \.age).map { $0 * 10 }.post(options: [], queue: queue) { posted.append($0) },
            person.bind(\.age, to: label, \.count, queue: queue),
            person.pipeline(of: \.name).post(options: [], queue: queue) { _ in posted.append(-1) },
        ]

        // When the postings of age stop
        let stopped = person.stopPosting(\.age)
        person.age = 5
        person.name = "x"
        queue.drain()

        // Then the two postings ended; the binding and the other posting go on
        #expect(stopped == 2)
        #expect(tokens.map(\.isValid) == [false, false, true, true])
        #expect(posted.values == [-1])
        #expect(label.count == 5)
    }

    @Test func stoppingPostingsOfAPathEndsThePostingsOfThatPathOnly() throws {
        // Given postings of friend.name (a string path and a chain) and of friend.age
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        person.friend = BindPerson()
        let tokens = [
            try person.pipeline(path: "friend.name").post(options: [], queue: queue) { _ in },
            person.pipeline(of: KeyPathChain(\BindPerson.friend).then(\.name)).post(options: [], queue: queue) { _ in },
            try person.pipeline(path: "friend.age").post(options: [], queue: queue) { _ in },
        ]

        // When the postings of friend.name stop
        let stopped = try person.stopPosting(path: "friend.name")

        // Then both of them ended, and the other one goes on
        #expect(stopped == 2)
        #expect(tokens.map(\.isValid) == [false, false, true])
        #expect(throws: KeyPathError.self) { try person.stopPosting(path: "friend.nothing") }
    }
}
