import Testing

@testable import ObservationTokens

/// A value binds to an optional property of its type: `String` to `String?`, in every form.
@Suite struct OptionalDestinationTests {
    @Test func aStringBindsToAnOptionalStringInEveryForm() throws {
        // Given a String property bound to String? properties every way there is
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        let card = BindCard()
        let byName = BindCard()
        let byPair = BindCard()
        let dynamic = BindCard()
        let tokens = [
            person.bind(\.name, to: label, \.subtitle, queue: queue),
            person.pipeline(of: \.name).map { $0 + "!" }.bind(to: card, \.caption, queue: queue),
            try person.pipeline(of: \.name).bind(to: byName, path: "caption", queue: queue),
            person.bind([BindingPair(\.name, \.caption)], to: byPair, queue: queue),
            // `Any?` values (a string-path source), checked per push
            try person.pipeline(path: "name").bind(to: dynamic, path: "caption", queue: queue),
        ]

        // Then each took the value at creation
        #expect(label.subtitle == "Ada")
        #expect(card.caption == "Ada!")
        #expect(byName.caption == "Ada")
        #expect(byPair.caption == "Ada")
        #expect(dynamic.caption == "Ada")

        // And follows its changes
        person.name = "Grace"
        queue.drain()
        #expect(label.subtitle == "Grace")
        #expect(card.caption == "Grace!")
        #expect(byName.caption == "Grace")
        #expect(byPair.caption == "Grace")
        #expect(dynamic.caption == "Grace")
        withExtendedLifetime(tokens) {}
    }
}
