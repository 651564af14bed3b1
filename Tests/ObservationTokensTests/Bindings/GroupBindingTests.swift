import Testing

@testable import ObservationTokens

/// Issue 13: group bindings (EBNObservable's protocol binder) — typed key path pairs, one token.
@Suite struct GroupBindingTests {
    static func pairs() -> [BindingPair<BindPerson, BindCard>] {
        [BindingPair(\.name, \.title), BindingPair(\.age, \.years)]
    }

    @Test func copiesEveryPairAtCreationAndLeavesOtherPropertiesAlone() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let card = BindCard()
        let token = person.bind(Self.pairs(), to: card, queue: queue)
        #expect(card.title == "Ada")
        #expect(card.years == 36)
        #expect(card.subtitle == "untouched")
        withExtendedLifetime(token) {}
    }

    @Test func aChangeCopiesOnlyItsOwnPair() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let card = BindCard()
        let token = person.bind(Self.pairs(), to: card, queue: queue)

        // The destination's own change stays until the source changes that property again.
        card.title = "local title"
        card.years = 99
        person.age = 37
        queue.drain()
        #expect(card.title == "local title")
        #expect(card.years == 37)

        person.name = "Grace"
        queue.drain()
        #expect(card.title == "Grace")
        withExtendedLifetime(token) {}
    }

    @Test func nowCopiesEveryPair() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let card = BindCard()
        let token = person.bind(Self.pairs(), to: card, options: [], queue: queue)
        #expect(card.title == "")
        card.years = 1
        #expect(token.now())
        #expect(card.title == "Ada" && card.years == 36)
        withExtendedLifetime(token) {}
    }

    @Test func oneTokenEndsEveryPair() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let card = BindCard()
        let token = person.bind(Self.pairs(), to: card, queue: queue)
        token.invalidate()
        person.name = "x"
        person.age = 5
        queue.drain()
        #expect(card.title == "" && card.years == 0)
        #expect(person.attachedEdgeCount == 0)
    }

    @Test func aPairWithAnUnobservableSourceEndsTheToken() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let card = BindCard()
        let token = person.bind([.init(\.name, \.title), .init(\.plain, \.subtitle)], to: card, queue: queue)
        #expect(!token.isValid)
        #expect(person.attachedEdgeCount == 0)
    }

    @Test func optionsOtherThanInitialAndImmediateDoNotStopDeliveries() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        let card = BindCard()
        let token = person.bind(Self.pairs(), to: card, options: [.initial, .endpointChanges], queue: queue)
        person.name = "x"
        queue.drain()
        #expect(card.title == "x")
        withExtendedLifetime(token) {}
    }
}
