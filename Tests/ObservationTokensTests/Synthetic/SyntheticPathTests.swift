import Testing

@testable import ObservationTokens

/// The queue of `SynthCard`'s eager recomputations and of the tokens in the suite below.
let synthPathQueue = CoalescingQueue(target: .manual)

final class SynthOwner: ObservableModel {
    @Observed var name = "Ada"
}

/// `@unchecked Sendable`: see ``CorePerson``.
final class SynthCard: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var owner: SynthOwner? = SynthOwner()
    @Observed var title = "Card"
    @Computed(
        { (card: SynthCard) in
            card.counts.tick("caption")
            return card.title + " of " + (card.owner?.name ?? "nobody")
        })
    var caption: String
    @Computed({ (card: SynthCard) in card.owner }) var currentOwner: SynthOwner?
    @Lazy({ (card: SynthCard) in
        card.counts.tick("thumbnail")
        return card.title.uppercased()
    })
    var thumbnail: String
}

/// Synthetic properties in string paths, `*` and the introspection calls: observable like
/// `@Observed` ones.
@Suite("Synthetic: string paths and *", .serialized)
struct SyntheticPathTests {
    @Test func observablePropertyNamesListSyntheticPropertiesInDeclarationOrder() {
        #expect(SynthCard().observablePropertyNames == ["owner", "title", "caption", "currentOwner", "thumbnail"])
        #expect(SynthReport().observablePropertyNames == ["text", "thumbnail", "title", "heading"])
    }

    @Test func aStringPathToAComputedPropertyEvaluatesItAndFiresOnlyWhenItChanges() throws {
        // Given a token on "caption", made before anything read it
        let card = SynthCard()
        let fired = CoreCounter()
        let token = try card.observe(.path("caption"), queue: synthPathQueue) { _ in fired.increment() }
        // Then making it computed the value (its dependencies are wired)
        #expect(card.counts["caption"] == 1)
        // (its inputs on the card count as observed: the computed property watches them)
        #expect(card.observedProperties == ["owner", "title", "caption"])
        #expect(card.observerCount(ofProperty: "caption") == 1)

        // When an input on another object changes
        card.owner?.name = "Grace"
        synthPathQueue.drain()
        // Then it fired once, with the new value computed once, at the end of the tick
        #expect(fired.value == 1)
        #expect(card.caption == "Card of Grace")
        #expect(card.counts["caption"] == 2)

        // When the inputs change but the result does not
        card.owner?.name = "Lin"
        card.owner?.name = "Grace"
        synthPathQueue.drain()
        // Then it was recomputed, and nobody was told
        #expect(card.counts["caption"] == 3)
        #expect(fired.value == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aComputedMiddleStepIsFollowedWhenItsValueChanges() throws {
        // Given a token on "currentOwner.name"
        let card = SynthCard()
        let first = try #require(card.owner)
        let names = CoreRecorder<String>()
        let token = try card.observe(.path("currentOwner.name"), queue: synthPathQueue) { card in
            names.append(card.currentOwner?.name ?? "-")
        }
        first.name = "Lin"
        synthPathQueue.drain()
        #expect(names.entries == ["Lin"])

        // When the computed middle object changes
        let second = SynthOwner()
        card.owner = second
        synthPathQueue.drain()
        #expect(names.entries == ["Lin", "Ada"])

        // Then the token follows the new object only
        first.name = "Old"
        synthPathQueue.drain()
        #expect(names.entries == ["Lin", "Ada"])
        second.name = "New"
        synthPathQueue.drain()
        #expect(names.entries == ["Lin", "Ada", "New"])
        withExtendedLifetime(token) {}
    }

    @Test func aTypedChainRunsThroughAComputedProperty() {
        // Given a chain whose first step is a computed object
        let card = SynthCard()
        let first = card.owner!
        let names = CoreRecorder<String>()
        let chain = KeyPathChain(\SynthCard.currentOwner).then(\.name)
        let token = card.observe(.chain(chain), queue: synthPathQueue) { _, name in names.append(name ?? "-") }
        first.name = "Lin"
        synthPathQueue.drain()
        #expect(names.entries == ["Lin"])
        // When the computed object changes, the chain follows it
        let second = SynthOwner()
        card.owner = second
        synthPathQueue.drain()
        first.name = "Old"
        synthPathQueue.drain()
        second.name = "New"
        synthPathQueue.drain()
        #expect(names.entries == ["Lin", "Ada", "New"])
        withExtendedLifetime(token) {}
    }

    @Test func starCoversComputedPropertiesButLeavesLazyOnesUnloaded() throws {
        // Given a `*` token on a card whose computed property reads another object
        let card = SynthCard()
        let fired = CoreCounter()
        let token = try card.observe(.path("*"), queue: synthPathQueue) { _ in fired.increment() }
        #expect(card.counts["caption"] == 1)
        #expect(card.counts["thumbnail"] == 0)

        // When only that other object changes
        card.owner?.name = "Grace"
        synthPathQueue.drain()
        // Then `*` heard of the computed property's change
        #expect(fired.value == 1)
        #expect(card.counts["caption"] == 2)
        withExtendedLifetime(token) {}
    }

    @Test func pathsThroughAComputedValueAreCheckedLikeAnyOther() {
        let card = SynthCard()
        for path in ["caption.count", "currentOwner.nope", "captions"] {
            #expect(throws: KeyPathError.self) { try card.observe(.path(path), queue: synthPathQueue) { _ in } }
        }
    }

    @Test func propertyDidChangeNamedInvalidatesASyntheticProperty() {
        let card = SynthCard()
        _ = card.caption
        #expect(card.validSyntheticPropertyNames.contains("caption"))
        card.propertyDidChange(named: "caption")
        #expect(!card.validSyntheticPropertyNames.contains("caption"))
    }
}
