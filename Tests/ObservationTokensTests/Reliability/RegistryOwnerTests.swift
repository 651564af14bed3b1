import Testing

@testable import ObservationTokens

// The registry reaches its owner without a weak reference (a weak reference gives the owner a
// side table, which slows every retain and release of it): an unretained pointer, retained on
// demand with the runtime's "retain unless deinitializing". These tests pin that contract.
// Fixtures start with `Owner`.

/// A model whose deinit asks its own registry for the owner.
final class OwnerProbe: ObservableModel, @unchecked Sendable {
    @Observed var value = 0
    /// What `registry.weakOwner` returned inside this object's deinit.
    let seenInDeinit: RelLock<[Bool]>

    init(seenInDeinit: RelLock<[Bool]>) {
        self.seenInDeinit = seenInDeinit
    }

    deinit {
        let alive = registry.weakOwner != nil
        seenInDeinit.withLock { $0.append(alive) }
    }
}

final class OwnerLeaf: ObservableModel, @unchecked Sendable {
    @Observed var name = "a"
}

final class OwnerRoot: ObservableModel, @unchecked Sendable {
    @Observed var leaf: OwnerLeaf
    @Observed var optionalLeaf: OwnerLeaf?

    init(leaf: OwnerLeaf) {
        self.leaf = leaf
    }
}

@Suite struct RegistryOwnerTests {
    /// Every live owner is found, whatever its address (a misdeclared runtime call once
    /// answered from the low byte of the address: wrong for one object in sixteen).
    @Test func aLiveOwnerIsAlwaysFound() {
        let seen = RelLock<[Bool]>([])
        var missing = 0
        for _ in 0..<4_096 {
            let object = OwnerProbe(seenInDeinit: seen)
            let registry = object.registry
            if registry.weakOwner !== object { missing += 1 }
        }
        #expect(missing == 0)
    }

    /// From the moment the owner's deinit begins, the registry no longer hands it out, and
    /// after it the registry (kept alive by someone else) answers nil.
    @Test func anOwnerIsGoneOnceItsDeinitBegins() {
        let seen = RelLock<[Bool]>([])
        var registry: Registry?
        do {
            let object = OwnerProbe(seenInDeinit: seen)
            registry = object.registry
            #expect(registry?.weakOwner === object)
        }
        #expect(seen.withLock { $0 } == [false])
        #expect(registry?.weakOwner == nil)
        #expect(registry?.ownerStoreVersion == nil)
    }

    /// A chain through a (non-optional) model reference follows replacements.
    @Test func aChainThroughAModelFollowsIt() {
        let queue = CoalescingQueue(target: .manual)
        let first = OwnerLeaf()
        let root = OwnerRoot(leaf: first)
        let names = RelLock<[String]>([])
        let token = root.observe(.chain(KeyPathChain(\OwnerRoot.leaf).then(\.name)), queue: queue) { _, name in
            names.withLock { $0.append(name) }
        }
        first.name = "b"
        #expect(queue.drain() == 1)
        let second = OwnerLeaf()
        root.leaf = second
        second.name = "c"
        #expect(queue.drain() == 1)
        first.name = "old"
        #expect(queue.drain() == 0)
        #expect(names.withLock { $0 } == ["b", "c"])
        withExtendedLifetime(token) {}
    }

    /// A chain through an optional model reference follows replacements and nil.
    @Test func aChainThroughAnOptionalModelFollowsIt() {
        let queue = CoalescingQueue(target: .manual)
        let root = OwnerRoot(leaf: OwnerLeaf())
        let names = RelLock<[String?]>([])
        let token = root.observe(.chain(KeyPathChain(\OwnerRoot.optionalLeaf).then(\.name)), queue: queue) { _, name in
            names.withLock { $0.append(name) }
        }
        let leaf = OwnerLeaf()
        root.optionalLeaf = leaf
        #expect(queue.drain() == 1)
        leaf.name = "z"
        #expect(queue.drain() == 1)
        root.optionalLeaf = nil
        #expect(queue.drain() == 1)
        leaf.name = "ignored"
        #expect(queue.drain() == 0)
        #expect(names.withLock { $0 } == ["a", "z", nil])
        withExtendedLifetime(token) {}
    }
}

/// Per-class answers kept for the class asked for last (`PropertyTable.of`, the
/// `ObservationStateObserving` check) must answer for the class asked, whatever came before.
@Suite struct ClassCacheTests {
    @Test func theTableIsTheOneOfTheClassAskedForInTurns() {
        for _ in 0..<3 {
            #expect(PropertyTable.of(OwnerLeaf.self).typeName == "OwnerLeaf")
            #expect(PropertyTable.of(OwnerLeaf.self).entries.map(\.name) == ["name"])
            #expect(PropertyTable.of(OwnerRoot.self).typeName == "OwnerRoot")
            #expect(PropertyTable.of(OwnerRoot.self).entries.map(\.name) == ["leaf", "optionalLeaf"])
        }
    }
}
