import Testing

@testable import ObservationTokens

/// `currentUser.address.zipCode`, rooted at the cache.
private let cacheZipCode = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
/// `address.zipCode`, rooted at the user.
private let userZipCode = KeyPathChain(\PathUser.address).then(\.zipCode)
/// `currentUser.address.label`: an optional endpoint, flattened to `String?`.
private let cacheLabel = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.label)

/// `cacheZipCode` spelled again, in a function of its own.
@inline(never)
private func spellCacheZipCode() -> KeyPathChain<PathUserCache, String?> {
    KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
}

/// An owner for `ChainNode.owner.count`; `ChainSubNode` lays out more storage before its own.
private class ChainNode: ObservableModel {
    @Observed var owner: ChainNode?
    @Observed var count = 0
}

private final class ChainSubNode: ChainNode {
    @Observed var extra = ""
    @Observed var more = 0
}

/// A node for `owner.count` that records its observation-state transitions (`"count+"`, …).
///
/// `@unchecked Sendable`: used on one thread.
private final class HookedChainNode: ObservableModel, ObservationStateObserving, @unchecked Sendable {
    @Observed var owner: HookedChainNode?
    @Observed var count = 0
    let transitions = CoreRecorder<String>()

    func observationStateDidChange(forProperty property: String, isObserved: Bool) {
        transitions.append("\(property)\(isObserved ? "+" : "-")")
    }
}

@Suite("Key path chains")
struct KeyPathChainTests {
    @Test func aTwoStepChainsLeafTellsEachOwnerWhenItArrivesAndWhenItLeaves() {
        // Given root.owner.count on nodes that report when a property becomes observed or not
        let queue = CoalescingQueue(target: .manual)
        let root = HookedChainNode()
        let first = HookedChainNode()
        let second = HookedChainNode()
        let seen = PathRecorder<Int?>()
        let chain = KeyPathChain(\HookedChainNode.owner).then(\.count)
        let token = root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) }

        // When root.owner moves: to first, to second, to nil, to first again, to the root itself
        root.owner = first
        root.owner = second
        root.owner = nil
        root.owner = first
        first.count = 7
        root.owner = root
        root.count = 9

        // Then each node heard its count become observed when the leaf arrived and unobserved
        // when it left, one delivery tells the endpoint, and only the root keeps edges
        #expect(queue.drain() == 1)
        #expect(seen.values == [9])
        #expect(first.transitions.entries == ["count+", "count-", "count+", "count-"])
        #expect(second.transitions.entries == ["count+", "count-"])
        #expect(root.transitions.entries == ["owner+", "count+"])
        #expect(first.observedPropertyCount == 0)
        #expect(second.observedPropertyCount == 0)
        #expect(root.observerCount(of: \.count) == 1)

        // When the token ends, then the root hears both its properties become unobserved
        token.invalidate()
        #expect(Set(root.transitions.entries.dropFirst(2)) == ["owner-", "count-"])
        #expect(root.observedPropertyCount == 0)
        root.owner = nil
    }

    @Test func aThreeStepChainRetargetedAtItsMiddleStepMovesOnlyTheEdgesPastIt() {
        // Given root.owner.owner.count over root → a → b, on nodes that report when a property
        // becomes observed or not, and a token alone on it
        let queue = CoalescingQueue(target: .manual)
        let (root, a, b, c) = (HookedChainNode(), HookedChainNode(), HookedChainNode(), HookedChainNode())
        root.owner = a
        a.owner = b
        b.count = 1
        c.count = 2
        let seen = PathRecorder<Int?>()
        let chain = KeyPathChain(\HookedChainNode.owner).then(\.owner).then(\.count)
        let token = root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) }

        // When the middle step moves (a.owner to c), then the old and the new leaf are set
        a.owner = c
        #expect(queue.drain() == 1)
        b.count = 10
        c.count = 20
        #expect(queue.drain() == 1)

        // Then the token follows c, and only the edge past the middle step moved: b's count left,
        // c's arrived, a's owner and the root's stayed observed throughout
        #expect(seen.values == [2, 20])
        #expect(b.transitions.entries == ["count+", "count-"])
        #expect(c.transitions.entries == ["count+"])
        #expect(a.transitions.entries == ["owner+"])
        #expect(root.transitions.entries == ["owner+"])

        // When the middle step goes nil, and then comes back to b
        a.owner = nil
        #expect(queue.drain() == 1)
        a.owner = b
        #expect(queue.drain() == 1)

        // Then the endpoint was nil, then b's count; c keeps no edge, b one
        #expect(seen.values == [2, 20, nil, 10])
        #expect(c.transitions.entries == ["count+", "count-"])
        #expect(b.transitions.entries == ["count+", "count-", "count+"])
        #expect(c.observedPropertyCount == 0)
        #expect(b.observedPropertyCount == 1)
        #expect(a.transitions.entries == ["owner+"])
        token.invalidate()
        #expect(b.transitions.entries == ["count+", "count-", "count+", "count-"])
    }

    @Test func tokensSharingAThreeStepChainMoveTogetherWhenItsMiddleStepChanges() {
        // Given three tokens on root.owner.owner.count over root → a → b (one walk serves them all)
        let queue = CoalescingQueue(target: .manual)
        let (root, a, b, c) = (HookedChainNode(), HookedChainNode(), HookedChainNode(), HookedChainNode())
        root.owner = a
        a.owner = b
        b.count = 1
        c.count = 2
        let seen = PathRecorder<Int?>()
        let chain = KeyPathChain(\HookedChainNode.owner).then(\.owner).then(\.count)
        let tokens = (0..<3).map { _ in root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) } }

        // When the middle step moves (a.owner to c), then the old and the new leaf are set
        a.owner = c
        #expect(queue.drain() == 3)
        b.count = 10
        c.count = 20
        #expect(queue.drain() == 3)

        // Then every token follows c: b's count lost its three edges, c's has them, and the
        // steps before the change kept theirs
        #expect(seen.values == [2, 2, 2, 20, 20, 20])
        #expect(b.observerCount(of: \.count) == 0)
        #expect(c.observerCount(of: \.count) == 3)
        #expect(a.observerCount(of: \.owner) == 3)
        #expect(b.transitions.entries == ["count+", "count-"])
        #expect(c.transitions.entries == ["count+"])
        #expect(a.transitions.entries == ["owner+"])

        // When the middle step goes nil, then every token tells nil and c keeps no edge
        a.owner = nil
        #expect(queue.drain() == 3)
        #expect(seen.values.suffix(3) == [nil, nil, nil])
        #expect(c.observedPropertyCount == 0)
        #expect(c.transitions.entries == ["count+", "count-"])
        for token in tokens { token.invalidate() }
        #expect([root, a].map(\.observedPropertyCount) == [0, 0])
    }

    @Test func aFourStepChainRetargetedAtEachMiddleStepFollowsTheNewObjects() {
        // Given root.owner.owner.owner.count over root → a → b → c, and a token alone on it
        let queue = CoalescingQueue(target: .manual)
        let (root, a, b, c) = (HookedChainNode(), HookedChainNode(), HookedChainNode(), HookedChainNode())
        let (b2, c2, c3) = (HookedChainNode(), HookedChainNode(), HookedChainNode())
        root.owner = a
        a.owner = b
        b.owner = c
        c.count = 1
        b2.owner = c2
        c2.count = 2
        c3.count = 3
        let seen = PathRecorder<Int?>()
        let chain = KeyPathChain(\HookedChainNode.owner).then(\.owner).then(\.owner).then(\.count)
        let token = root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) }

        // When step 1 moves (a.owner to b2, whose owner is c2), then step 2 on the new object
        // (b2.owner to c3)
        a.owner = b2
        #expect(queue.drain() == 1)
        b2.owner = c3
        #expect(queue.drain() == 1)

        // When objects the path left are set, nothing is told; the new leaf's set is
        b.owner = c2
        c.count = 100
        c2.count = 200
        #expect(queue.drain() == 0)
        c3.count = 30
        #expect(queue.drain() == 1)

        // Then the token told each endpoint, and each object heard its property become observed
        // when the path arrived and unobserved when it left; the steps before the change stayed
        #expect(seen.values == [2, 3, 30])
        #expect(b.transitions.entries == ["owner+", "owner-"])
        #expect(c.transitions.entries == ["count+", "count-"])
        #expect(b2.transitions.entries == ["owner+"])
        #expect(c2.transitions.entries == ["count+", "count-"])
        #expect(c3.transitions.entries == ["count+"])
        #expect(a.transitions.entries == ["owner+"])
        #expect(root.transitions.entries == ["owner+"])

        // When step 2 goes nil, and step 1 comes back to b (whose owner is c2 now)
        b2.owner = nil
        #expect(queue.drain() == 1)
        a.owner = b
        #expect(queue.drain() == 1)
        c2.count = 201
        #expect(queue.drain() == 1)

        // Then the path runs through b and c2 again, and nothing is left on b2 or c3
        #expect(seen.values == [2, 3, 30, nil, 200, 201])
        #expect(c3.transitions.entries == ["count+", "count-"])
        #expect(b2.transitions.entries == ["owner+", "owner-"])
        #expect(b.transitions.entries == ["owner+", "owner-", "owner+"])
        #expect(c2.transitions.entries == ["count+", "count-", "count+"])
        #expect([b2.observedPropertyCount, c3.observedPropertyCount, c.observedPropertyCount] == [0, 0, 0])
        #expect([root.observedPropertyCount, a.observedPropertyCount, b.observedPropertyCount] == [1, 1, 1])
        #expect(c2.observedPropertyCount == 1)
        token.invalidate()
        #expect([root, a, b, c2].map(\.observedPropertyCount) == [0, 0, 0, 0])
    }

    @Test func aChainTokenMovedSeveralTimesInATickIsQueuedOnceAndFreedWithItsToken() {
        // Given root.owner.count, its token's subscription watched weakly
        let queue = CoalescingQueue(target: .manual)
        let root = ChainNode()
        let first = ChainNode()
        let second = ChainNode()
        first.count = 1
        second.count = 2
        let seen = PathRecorder<Int?>()
        var token: ObservationToken? = root.observe(
            .chain(KeyPathChain(\ChainNode.owner).then(\.count)), queue: queue
        ) { _, count in seen.record(count) }
        weak let subscription = token?.subscription

        // When root.owner moves three times in one tick, then one delivery tells the last endpoint
        root.owner = first
        root.owner = second
        root.owner = first
        #expect(queue.drain() == 1)
        #expect(seen.values == [1])

        // When root.owner moves twice more and the token ends before the drain
        root.owner = second
        root.owner = nil
        token = nil

        // Then the drain delivers nothing, the subscription is freed, and nothing stays observed
        #expect(queue.drain() == 0)
        #expect(seen.values == [1])
        #expect(subscription == nil)
        #expect(root.observedPropertyCount == 0)
        #expect(first.observedPropertyCount == 0)
        #expect(second.observedPropertyCount == 0)
    }

    @Test func chainTokensMovedTogetherByOneSetAreEachQueuedOnceAndFreedWithTheirTokens() {
        // Given two queued chain tokens and an immediate one on root.owner.count, their
        // subscriptions watched weakly
        let queue = CoalescingQueue(target: .manual)
        let root = ChainNode()
        let first = ChainNode()
        let second = ChainNode()
        first.count = 1
        second.count = 2
        let chain = KeyPathChain(\ChainNode.owner).then(\.count)
        let seen = PathRecorder<String>()
        var tokens: [ObservationToken] = [
            root.observe(.chain(chain), queue: queue) { _, count in seen.record("a\(count ?? 0)") },
            root.observe(.chain(chain), queue: queue) { _, count in seen.record("b\(count ?? 0)") },
            root.observe(.chain(chain), options: .immediate, queue: queue) { _, count in
                seen.record("i\(count ?? 0)")
            },
        ]
        weak let subscriptionA = tokens[0].subscription
        weak let subscriptionB = tokens[1].subscription
        weak let subscriptionI = tokens[2].subscription

        // When root.owner moves three times in one tick, then each queued token is delivered once
        // with the last endpoint, and the immediate one ran inside every set
        root.owner = first
        root.owner = second
        root.owner = first
        #expect(queue.drain() == 2)
        #expect(seen.values == ["i1", "i2", "i1", "a1", "b1"])

        // When root.owner moves twice more and the tokens end before the drain
        root.owner = second
        root.owner = nil
        tokens.removeAll()

        // Then the drain delivers nothing, every subscription is freed, and nothing stays observed
        #expect(queue.drain() == 0)
        #expect(seen.values == ["i1", "i2", "i1", "a1", "b1", "i2", "i0"])
        // (A Bool: a failed expectation on a subscription would describe it by reflection.)
        let allFreed = subscriptionA == nil && subscriptionB == nil && subscriptionI == nil
        #expect(allFreed)
        #expect(root.observedPropertyCount == 0)
        #expect(first.observedPropertyCount == 0)
        #expect(second.observedPropertyCount == 0)
    }

    @Test func aTwoStepChainFollowsItsLeafAcrossOwnersOfAClassAndItsSubclass() {
        // Given root.owner.count, and owners of a class and of a subclass of it
        let queue = CoalescingQueue(target: .manual)
        let root = ChainNode()
        let owners: [ChainNode] = [ChainNode(), ChainSubNode(), ChainSubNode(), ChainNode()]
        let seen = PathRecorder<Int?>()
        let chain = KeyPathChain(\ChainNode.owner).then(\.count)
        let token = root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) }

        for round in 0..<12 {
            // When root.owner moves to the next owner, or to nil and back
            let owner = owners[round % owners.count]
            root.owner = round % 5 == 4 ? nil : owner
            root.owner = owner
            queue.drain()

            // Then a set of its count is delivered, and the others have no observer left
            owner.count = round + 100
            #expect(queue.drain() == 1, "round \(round)")
            #expect(seen.values.last == round + 100, "round \(round)")
            #expect(owner.observerCount(of: \.count) == 1, "round \(round)")
            for other in owners where other !== owner { #expect(other.observedPropertyCount == 0, "round \(round)") }
        }
        withExtendedLifetime(token) {}
    }

    @Test func aTwoStepChainWhoseLeafIsOnItsRootMovesOnlyItsLeaf() {
        // Given root.owner.count with root.owner = root (the leaf on the root's own registry),
        // and a second token on two chains through root.owner (edges of two paths in one list)
        let queue = CoalescingQueue(target: .manual)
        let root = ChainNode()
        let other = ChainNode()
        root.owner = root
        let chain = KeyPathChain(\ChainNode.owner).then(\.count)
        let seen = PathRecorder<Int?>()
        let token = root.observe(.chain(chain), queue: queue) { _, count in seen.record(count) }
        let both = PathRecorder<Int>()
        let pair = root.observe(
            .chains([AnyKeyPathChain(KeyPathChain(\ChainNode.owner).then(\.owner)), AnyKeyPathChain(chain)]),
            queue: queue
        ) { root in both.record(root.owner?.count ?? -1) }
        #expect(root.observerCount(of: \.count) == 2)
        #expect(root.observerCount(of: \.owner) == 2)

        // When the root's count changes, then both tokens hear it
        root.count = 1
        #expect(queue.drain() == 2)
        #expect(seen.values == [1])
        #expect(both.values == [1])

        // When root.owner moves to another object, then the leaves leave the root for it
        root.owner = other
        #expect(queue.drain() == 2)
        #expect(root.observerCount(of: \.count) == 0)
        #expect(root.observerCount(of: \.owner) == 2)
        #expect(other.observerCount(of: \.count) == 2)
        #expect(other.observerCount(of: \.owner) == 1)
        root.count = 2
        #expect(queue.drain() == 0)
        other.count = 3
        #expect(queue.drain() == 2)
        #expect(seen.values == [1, 0, 3])

        // When root.owner goes nil, is set again, and moves back to the root
        root.owner = nil
        #expect(queue.drain() == 2)
        #expect(other.observedPropertyCount == 0)
        root.owner = other
        root.owner = root
        #expect(queue.drain() == 2)
        #expect(other.observedPropertyCount == 0)
        #expect(root.observerCount(of: \.count) == 2)
        root.count = 4
        #expect(queue.drain() == 2)
        #expect(seen.values == [1, 0, 3, nil, 2, 4])
        #expect(both.values == [1, 0, 3, -1, 2, 4])

        // When the tokens end, nothing is observed
        token.invalidate()
        pair.invalidate()
        #expect(root.observedPropertyCount == 0)
        #expect(other.observedPropertyCount == 0)
        root.owner = nil
    }
    // MARK: Depth

    @Test(arguments: 2...6)
    func chainOfAnyDepthFiresWhenAnyElementChanges(depth: Int) {
        // Given a chain of `depth` segments ending at the leaf of a six-level tree
        let queue = CoalescingQueue(target: .manual)
        let tree = PathTree(leaf: 1)
        let seen = PathRecorder<Int?>()
        let (token, segments) = tree.observeChain(depth: depth, queue: queue) { seen.record($0) }
        #expect(segments == depth)
        #expect(token.isValid)

        // When each element along the path changes in turn, from the root's property to the leaf
        let rootLevel = 7 - depth
        for level in rootLevel...6 {
            tree.replaceElement(atLevel: level, leaf: 100 + level)

            // Then each change is one callback, with the new endpoint
            #expect(queue.drain() == 1, "change at level \(level)")
            #expect(seen.values.last == 100 + level, "change at level \(level)")
        }
        #expect(seen.count == depth)
        withExtendedLifetime(token) {}
    }

    @Test(arguments: 1...5)
    func sixLevelChainStopsWatchingTheReplacedSubtree(level: Int) {
        // Given a six-segment chain through optional and non-optional intermediates
        let queue = CoalescingQueue(target: .manual)
        let tree = PathTree(leaf: 1)
        let seen = PathRecorder<Int?>()
        let (token, _) = tree.observeChain(depth: 6, queue: queue) { seen.record($0) }
        let oldLeaf = tree.level6!

        // When the element held at `level` is replaced by a fresh subtree
        tree.replaceElement(atLevel: level, leaf: 2)
        #expect(queue.drain() == 1)
        #expect(seen.values == [2])

        // Then the old leaf is no longer watched, and the new one is
        #expect(oldLeaf.pathEdgeCount == 0)
        oldLeaf.value = 99
        #expect(queue.drain() == 0)
        tree.level6!.value = 3
        #expect(queue.drain() == 1)
        #expect(seen.values == [2, 3])
        withExtendedLifetime(token) {}
    }

    @Test
    func chainsSpelledApartNameTheSameKeyPathObjects() {
        // Given chains spelled apart from the same key path literals: here, in another
        // function, and in a global's initializer
        let here = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
        let elsewhere = spellCacheZipCode()

        // Then they name the same key path objects, so tokens on any of them share one walk
        #expect(here.path.typedIdentity != nil)
        #expect(here.path.typedIdentity == elsewhere.path.typedIdentity)
        #expect(here.path.typedIdentity == cacheZipCode.path.typedIdentity)
    }

    @Test
    func tokensOfChainsSpelledApartShareOnePath() {
        // Given two objects, each observed through the same chain spelled apart
        let queue = CoalescingQueue(target: .manual)
        let first = PathUserCache(currentUser: PathUser())
        let second = PathUserCache()
        let chain = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
        let here = first.observe(.chain(chain), queue: queue) { _, _ in }
        let elsewhere = second.observe(.chain(spellCacheZipCode()), queue: queue) { _, _ in }

        // Then their tokens hold one path (nothing of it is made or freed per token)
        let paths = [here, elsewhere].map(\.subscription.paths)
        #expect(paths[0].count == 1 && paths[1].count == 1)
        #expect(paths[0][0] === paths[1][0])

        // And each still follows its own object
        first.currentUser!.address = PathAddress()
        #expect(queue.drain() == 1)
        withExtendedLifetime((here, elsewhere)) {}
    }

    @Test
    func chainThroughNonOptionalIntermediateHasNonOptionalEndpoint() {
        // Given a chain whose intermediate is not optional
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        user.primaryAddress = PathAddress(zipCode: "10001")
        let chain: KeyPathChain<PathUser, String> = KeyPathChain(\PathUser.primaryAddress).then(\.zipCode)
        let seen = PathRecorder<String>()
        let token = user.observe(.chain(chain), queue: queue) { _, zipCode in seen.record(zipCode) }
        let old = user.primaryAddress

        // When the intermediate is replaced
        user.primaryAddress = PathAddress(zipCode: "94103")

        // Then the callback gets the new endpoint, and only the new object is watched
        #expect(queue.drain() == 1)
        old.zipCode = "old"
        #expect(queue.drain() == 0)
        user.primaryAddress.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seen.values == ["94103", "97210"])
        withExtendedLifetime(token) {}
    }

    // MARK: Unreachable endpoints

    @Test
    func defaultModeFiresWhenAnIntermediateChangesButTheEndpointStaysUnreachable() {
        // Given a path whose endpoint is unreachable (no user)
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When a user without an address arrives, and is replaced by another one without
        cache.currentUser = PathUser()
        let first = queue.drain()
        cache.currentUser = PathUser()
        let second = queue.drain()

        // Then each change of an element fires (nil → nil), reporting the unreachable endpoint as nil
        #expect(first == 1)
        #expect(second == 1)
        #expect(seen.values == [nil, nil])
        withExtendedLifetime(token) {}
    }

    @Test
    func endpointChangesModeSkipsChangesThatLeaveTheEndpointUnreachable() {
        // Given the same path observed in both modes
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        let everyChange = PathRecorder<String?>()
        let endpointOnly = PathRecorder<String?>()
        let all = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in everyChange.record(zipCode) }
        let changes = cache.observe(.chain(cacheZipCode), options: .endpointChanges, queue: queue) { _, zipCode in
            endpointOnly.record(zipCode)
        }

        // When users without an address come and go
        cache.currentUser = PathUser()
        queue.drain()
        cache.currentUser = PathUser()
        queue.drain()
        cache.currentUser = nil
        queue.drain()

        // Then only the default mode fires
        #expect(everyChange.count == 3)
        #expect(endpointOnly.count == 0)
        withExtendedLifetime((all, changes)) {}
    }

    @Test
    func endpointChangesModeFiresOnlyWhenTheEndpointValueChanges() {
        // Given a reachable endpoint observed in both modes
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser(address: PathAddress(zipCode: "10001"))
        let cache = PathUserCache(currentUser: user)
        let everyChange = PathRecorder<String?>()
        let endpointOnly = PathRecorder<String?>()
        let all = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in everyChange.record(zipCode) }
        let changes = cache.observe(.chain(cacheZipCode), options: .endpointChanges, queue: queue) { _, zipCode in
            endpointOnly.record(zipCode)
        }

        // When the address is replaced by one with the same zip code
        user.address = PathAddress(zipCode: "10001")
        queue.drain()
        // Then only the default mode fires
        #expect(everyChange.values == ["10001"])
        #expect(endpointOnly.values == [])

        // When the zip code changes and comes back within one tick
        user.address!.zipCode = "94103"
        user.address!.zipCode = "10001"
        queue.drain()
        // Then only the default mode fires
        #expect(everyChange.values == ["10001", "10001"])
        #expect(endpointOnly.values == [])

        // When the address is replaced by one with another zip code
        user.address = PathAddress(zipCode: "97210")
        queue.drain()
        // Then both modes fire
        #expect(everyChange.values == ["10001", "10001", "97210"])
        #expect(endpointOnly.values == ["97210"])

        // When the endpoint becomes unreachable
        cache.currentUser = nil
        queue.drain()
        // Then both modes fire, with nil
        #expect(everyChange.values == ["10001", "10001", "97210", nil])
        #expect(endpointOnly.values == ["97210", nil])
        withExtendedLifetime((all, changes)) {}
    }

    @Test
    func endpointChangesModeCountsUnreachableToNilAsAChange() {
        // Given an optional endpoint (the label) that is unreachable: the user has no address
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache(currentUser: user)
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheLabel), options: .endpointChanges, queue: queue) { _, label in
            seen.record(label)
        }

        // When an address with a nil label arrives (unreachable → nil)
        user.address = PathAddress(label: nil)
        // Then that is a change
        #expect(queue.drain() == 1)

        // When it is replaced by another address whose label is also nil (nil → nil)
        user.address = PathAddress(label: nil)
        // Then that is not a change
        #expect(queue.drain() == 0)

        // When the address goes away (nil → unreachable)
        user.address = nil
        // Then that is a change again
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil, nil])
        withExtendedLifetime(token) {}
    }

    @Test
    func endpointChangesModeStillRunsTheInitialCallback() {
        // Given a reachable endpoint
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(address: PathAddress(zipCode: "10001")))
        let seen = PathRecorder<String?>()

        // When observing with `.initial` and `.endpointChanges`
        let token = cache.observe(.chain(cacheZipCode), options: [.initial, .endpointChanges], queue: queue) {
            _, zipCode in
            seen.record(zipCode)
        }

        // Then the initial callback ran once, synchronously, with the current endpoint
        #expect(seen.values == ["10001"])
        withExtendedLifetime(token) {}
    }

    @Test
    func endpointChangesModeStillRunsFire() {
        // Given a chain token in endpoint-changes mode and no change
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(address: PathAddress(zipCode: "10001")))
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), options: .endpointChanges, queue: queue) { _, zipCode in
            seen.record(zipCode)
        }

        // When the token is fired by hand
        let ran = token.fire()

        // Then the callback runs now, as `fire()` promises for a live token
        #expect(ran)
        #expect(seen.values == ["10001"])
    }

    @Test
    func immediateEndpointChangesModeRunsOnlyForRealEndpointChanges() {
        // Given an immediate token in endpoint-changes mode
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser(address: PathAddress(zipCode: "10001"))
        let seen = PathRecorder<String?>()
        let token = user.observe(.chain(userZipCode), options: [.immediate, .endpointChanges], queue: queue) {
            _, zipCode in
            seen.record(zipCode)
        }

        // When the address is replaced by one with the same zip, then one with another zip
        user.address = PathAddress(zipCode: "10001")
        #expect(seen.values == [])
        user.address = PathAddress(zipCode: "97210")

        // Then only the real change ran the callback, inside the setter
        #expect(seen.values == ["97210"])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    // MARK: Retargeting

    @Test
    func replacingAMiddleObjectMovesTheObservationToTheNewObject() {
        // Given a path through the user's address
        let queue = CoalescingQueue(target: .manual)
        let old = PathAddress(zipCode: "10001")
        let user = PathUser(address: old)
        let cache = PathUserCache(currentUser: user)
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When the address is replaced
        let new = PathAddress(zipCode: "94103")
        user.address = new
        #expect(queue.drain() == 1)

        // Then changes of the old address no longer fire, changes of the new one do
        old.zipCode = "old"
        #expect(queue.drain() == 0)
        new.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seen.values == ["94103", "97210"])
        withExtendedLifetime(token) {}
    }

    @Test
    func replacingTheFirstIntermediateRetargetsTheWholeRestOfThePath() {
        // Given a path through one user's address
        let queue = CoalescingQueue(target: .manual)
        let oldAddress = PathAddress(zipCode: "10001")
        let oldUser = PathUser(address: oldAddress)
        let cache = PathUserCache(currentUser: oldUser)
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When the user is replaced by another one with another address
        let newAddress = PathAddress(zipCode: "94103")
        let newUser = PathUser(address: newAddress)
        cache.currentUser = newUser
        #expect(queue.drain() == 1)

        // Then neither of the old objects fires any more; both new ones do
        oldUser.address = PathAddress(zipCode: "x")
        oldAddress.zipCode = "y"
        #expect(queue.drain() == 0)
        newAddress.zipCode = "97210"
        #expect(queue.drain() == 1)
        newUser.address = nil
        #expect(queue.drain() == 1)
        #expect(seen.values == ["94103", "97210", nil])
        withExtendedLifetime(token) {}
    }

    @Test
    func nilIntermediateAtStartAttachesWhenItBecomesNonNil() {
        // Given a path observed while its first intermediate is nil
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }
        #expect(token.isValid)

        // When the user arrives, then the user's address
        let user = PathUser()
        cache.currentUser = user
        #expect(queue.drain() == 1)
        let address = PathAddress(zipCode: "10001")
        user.address = address
        #expect(queue.drain() == 1)

        // Then the token has attached all the way to the endpoint
        address.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil, "10001", "97210"])
        withExtendedLifetime(token) {}
    }

    @Test
    func intermediateThatBecomesNilDetachesAndReattachesWhenSetAgain() {
        // Given an attached path
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress(zipCode: "10001")
        let user = PathUser(address: address)
        let cache = PathUserCache(currentUser: user)
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When the address becomes nil
        user.address = nil
        #expect(queue.drain() == 1)
        // Then the detached address no longer fires
        address.zipCode = "detached"
        #expect(queue.drain() == 0)

        // When the same address comes back
        user.address = address
        #expect(queue.drain() == 1)
        // Then it fires again
        address.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil, "detached", "97210"])
        withExtendedLifetime(token) {}
    }

    // MARK: EBNObservable's example

    @Test
    func homeThenWorkAddressThenZipCodeInOneTickIsOneCallback() {
        // Given EBNObservable's example: a path `address.zipCode` rooted at the user
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")
        let seen = PathRecorder<String?>()
        let token = user.observe(.chain(userZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When, in one tick, the home address is set, then the work address, then the zip code
        user.address = home
        user.address = work
        user.address!.zipCode = "97210"

        // Then exactly one callback runs, seeing the final endpoint
        #expect(queue.drain() == 1)
        #expect(seen.values == ["97210"])

        // And afterwards home changes don't fire, work changes do
        home.zipCode = "home"
        #expect(queue.drain() == 0)
        work.zipCode = "work"
        #expect(queue.drain() == 1)
        #expect(seen.values == ["97210", "work"])
        withExtendedLifetime(token) {}
    }

    @Test
    func followThePathSwitchesToTheNewAddressWhileFollowTheObjectStaysWithTheOld() {
        // Given the same zip code observed two ways:
        // rooted at the user (follow the path) and rooted at the address (follow the object)
        let queue = CoalescingQueue(target: .manual)
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")
        let user = PathUser(address: home)
        let followsPath = PathRecorder<String?>()
        let followsObject = PathRecorder<String>()
        let pathToken = user.observe(.chain(userZipCode), queue: queue) { _, zipCode in followsPath.record(zipCode) }
        let objectToken = user.address!.observe(\.zipCode, queue: queue) { address in
            followsObject.record(address.zipCode)
        }

        // When the user moves to work, whose zip code then changes
        user.address = work
        work.zipCode = "97210"
        queue.drain()
        // Then only the path-rooted token fires
        #expect(followsPath.values == ["97210"])
        #expect(followsObject.values == [])

        // When the old home address changes
        home.zipCode = "10002"
        queue.drain()
        // Then only the object-rooted token fires
        #expect(followsPath.values == ["97210"])
        #expect(followsObject.values == ["10002"])
        withExtendedLifetime((pathToken, objectToken)) {}
    }

    // MARK: Loops and crossing paths

    @Test
    func pathThatLoopsBackThroughItsOwnRootFollowsEveryElement() {
        // Given root.next = other, other.next = root, and the path next.next.value rooted at root
        let queue = CoalescingQueue(target: .manual)
        let root = PathNode(value: 1)
        let other = PathNode(value: 2)
        root.next = other
        other.next = root
        let chain = KeyPathChain(\PathNode.next).then(\.next).then(\.value)
        let seen = PathRecorder<Int?>()
        let token = root.observe(.chain(chain), queue: queue) { _, value in seen.record(value) }

        // When the root's own value (reached through the loop) changes
        root.value = 10
        // Then it fires with the value found at the end of the loop
        #expect(queue.drain() == 1)

        // When the loop is broken in the middle, then closed again
        other.next = nil
        #expect(queue.drain() == 1)
        root.value = 11
        #expect(queue.drain() == 0, "the root's value is not on the path while the loop is broken")
        other.next = root
        #expect(queue.drain() == 1)
        #expect(seen.values == [10, nil, 11])

        // When the token ends
        token.invalidate()
        // Then no edge is left on either object
        #expect(root.pathEdgeCount == 0)
        #expect(other.pathEdgeCount == 0)
        other.next = nil  // break the reference cycle
    }

    @Test
    func pathThatRunsThroughTheSameObjectTwiceDetachesCompletely() {
        // Given a node that is its own next, and a path that runs through it three times
        let queue = CoalescingQueue(target: .manual)
        let node = PathNode(value: 1)
        node.next = node
        let chain = KeyPathChain(\PathNode.next).then(\.next).then(\.next).then(\.value)
        let seen = PathRecorder<Int?>()
        let token = node.observe(.chain(chain), queue: queue) { _, value in seen.record(value) }

        // When the value changes, then the loop is cut
        node.value = 2
        #expect(queue.drain() == 1)
        node.next = nil
        #expect(queue.drain() == 1)
        #expect(seen.values == [2, nil])

        // When the token ends
        token.invalidate()
        // Then nothing stays attached
        #expect(node.pathEdgeCount == 0)
        #expect(node.observedProperties == [])
    }

    enum Ending: String, CaseIterable, Sendable {
        case invalidate
        case release
    }

    @Test(arguments: Ending.allCases)
    func twoRootsCrossingTheSameObjectsDontDisturbEachOther(ending: Ending) {
        // Given two caches sharing one user, each observing its own path through that user
        let queue = CoalescingQueue(target: .manual)
        let home = PathAddress(zipCode: "10001")
        let user = PathUser(address: home)
        let cacheA = PathUserCache(currentUser: user)
        let cacheB = PathUserCache(currentUser: user)
        let seenA = PathRecorder<String?>()
        let seenB = PathRecorder<String?>()
        var tokenA: ObservationToken? = cacheA.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in
            seenA.record(zipCode)
        }
        let tokenB = cacheB.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seenB.record(zipCode) }
        #expect(home.observerCount(of: \.zipCode) == 2)
        home.zipCode = "10002"
        #expect(queue.drain() == 2)

        // When A's token ends
        switch ending {
        case .invalidate: tokenA!.invalidate()
        case .release: tokenA = nil
        }

        // Then B still watches every element of its path through the shared objects
        #expect(home.observerCount(of: \.zipCode) == 1)
        #expect(user.observerCount(of: \.address) == 1)
        home.zipCode = "10003"
        #expect(queue.drain() == 1)
        let work = PathAddress(zipCode: "94103")
        user.address = work
        #expect(queue.drain() == 1)
        work.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seenA.values == ["10002"])
        #expect(seenB.values == ["10002", "10003", "94103", "97210"])
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test
    func twoRootsCrossingTheSameObjectRetargetIndependently() {
        // Given two caches with different users that share one address
        let queue = CoalescingQueue(target: .manual)
        let shared = PathAddress(zipCode: "10001")
        let userA = PathUser(address: shared)
        let userB = PathUser(address: shared)
        let cacheA = PathUserCache(currentUser: userA)
        let cacheB = PathUserCache(currentUser: userB)
        let seenA = PathRecorder<String?>()
        let seenB = PathRecorder<String?>()
        let tokenA = cacheA.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seenA.record(zipCode) }
        let tokenB = cacheB.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seenB.record(zipCode) }

        // When A's user moves away from the shared address
        userA.address = PathAddress(zipCode: "94103")
        queue.drain()

        // Then the shared address is still watched by B alone
        #expect(shared.observerCount(of: \.zipCode) == 1)
        shared.zipCode = "97210"
        queue.drain()
        #expect(seenA.values == ["94103"])
        #expect(seenB.values == ["97210"])
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    // MARK: Lifetime of intermediates

    @Test
    func pathRetainsNoIntermediateObject() {
        // Given a path through a user and an address that only the model holds
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        weak var weakUser: PathUser?
        weak var weakAddress: PathAddress?
        do {
            let address = PathAddress(zipCode: "10001")
            let user = PathUser(address: address)
            cache.currentUser = user
            weakUser = user
            weakAddress = address
        }
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }
        #expect(weakUser != nil)

        // When the address changes (a delivery is pending) and then the model lets go of it
        weakAddress!.zipCode = "10002"
        weakUser!.address = PathAddress(zipCode: "94103")

        // Then the old address is gone at once: neither the path nor the pending delivery kept it
        #expect(weakAddress == nil)

        // When the model lets go of the user too
        cache.currentUser = nil
        #expect(weakUser == nil)

        // Then the path still delivers, once, with the endpoint now unreachable
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil])
        #expect(token.isValid)
    }

    @Test
    func pathRetainsNotEvenTheModelObjectAtItsEnd() {
        // Given a path that ends at a model object (the address itself), which only the user holds
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache(currentUser: user)
        weak var weakAddress: PathAddress?
        do {
            let address = PathAddress(zipCode: "10001")
            user.address = address
            weakAddress = address
        }
        let chain = KeyPathChain(\PathUserCache.currentUser).then(\.address)
        let token = cache.observe(.chain(chain), queue: queue) { _, _ in }
        #expect(weakAddress != nil)

        // When the model lets go of it
        user.address = PathAddress(zipCode: "94103")
        queue.drain()

        // Then it is gone, although the token lives on
        #expect(weakAddress == nil)
        #expect(token.isValid)
    }

    @Test
    func intermediateThatDeinitsWhileAttachedCountsAsNil() {
        // Given a path through an address that only the user holds
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache(currentUser: user)
        weak var weakAddress: PathAddress?
        do {
            let address = PathAddress(zipCode: "10001")
            user.address = address
            weakAddress = address
        }
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }
        #expect(weakAddress?.observerCount(of: \.zipCode) == 1)

        // When the user lets go of the address without the setter, so it deinits while attached
        user.dropAddressBehindTheSettersBack()
        #expect(weakAddress == nil)

        // Then that is a change to an unreachable endpoint: one callback, with nil
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil])
        #expect(queue.pendingCount == 0)

        // And the path attaches to the next address as usual
        let work = PathAddress(zipCode: "94103")
        user.address = work
        #expect(queue.drain() == 1)
        work.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil, "94103", "97210"])
        withExtendedLifetime(token) {}
    }

    @Test
    func replacedIntermediateThatDeinitsLeavesNoStaleDelivery() {
        // Given a path through an address that only the user holds, with a change pending
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        weak var weakHome: PathAddress?
        do {
            let home = PathAddress(zipCode: "10001")
            user.address = home
            weakHome = home
        }
        let seen = PathRecorder<String?>()
        let token = user.observe(.chain(userZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }
        weakHome!.zipCode = "10002"

        // When the address is replaced (the old one deinits) and the tick ends
        user.address = PathAddress(zipCode: "94103")
        #expect(weakHome == nil)
        let delivered = queue.drain()

        // Then one callback saw the new endpoint, and nothing else is left to deliver
        #expect(delivered == 1)
        #expect(seen.values == ["94103"])
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)

        // When the address becomes nil, the old value is gone for good as well
        user.address = nil
        #expect(queue.drain() == 1)
        #expect(seen.values == ["94103", nil])
        withExtendedLifetime(token) {}
    }

    // MARK: Values and options

    @Test
    func chainsOfTheSameKeyPathsShareOneEvaluationPerEndpointType() {
        // Given the same key paths spelled as three chains: two flattening the optional
        // endpoint (`String?`), one keeping it nested (`String??`)
        let flattened = KeyPathChain(\PathUser.address).then(\.label)
        let again = KeyPathChain(\PathUser.address).then(\.label)
        let nested: KeyPathChain<PathUser, String??> = KeyPathChain(\PathUser.address).then(\.label)

        // Then the flattening chains share one evaluation and one path list, and the nested
        // chain shares the path list but has an evaluation of its own type
        #expect(flattened.shared.evaluator === again.shared.evaluator)
        #expect(flattened.shared.paths[0] === nested.shared.paths[0])
        #expect(ObjectIdentifier(nested.shared.evaluator) != ObjectIdentifier(flattened.shared.evaluator))

        // When tokens of both endpoint types observe one user whose label is set, then whose
        // address goes away
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress()
        let user = PathUser(address: address)
        let seenFlattened = PathRecorder<String?>()
        let seenNested = PathRecorder<String??>()
        let tokens = [
            user.observe(.chain(flattened), queue: queue) { _, label in seenFlattened.record(label) },
            user.observe(.chain(nested), queue: queue) { _, label in seenNested.record(label) },
        ]
        address.label = "home"
        queue.drain()
        user.address = nil
        queue.drain()

        // Then each callback receives the endpoint in its own type
        #expect(seenFlattened.values == ["home", nil])
        #expect(seenNested.values == [.some("home"), .none])
        withExtendedLifetime(tokens) {}
    }

    @Test
    func chainCallbackReceivesTheEndpointValueAtDelivery() {
        // Given a chain token
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress(zipCode: "10001")
        let user = PathUser(address: address)
        let cache = PathUserCache(currentUser: user)
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, zipCode in seen.record(zipCode) }

        // When the endpoint changes twice in one tick
        address.zipCode = "94103"
        address.zipCode = "97210"
        queue.drain()
        // Then the callback sees the value at delivery
        #expect(seen.values == ["97210"])

        // When the endpoint becomes unreachable
        user.address = nil
        queue.drain()
        // Then the callback sees nil
        #expect(seen.values == ["97210", nil])
        withExtendedLifetime(token) {}
    }

    @Test
    func initialRunsTheChainCallbackSynchronouslyWithTheCurrentEndpoint() {
        // Given one reachable and one unreachable path
        let queue = CoalescingQueue(target: .manual)
        let reachable = PathUserCache(currentUser: PathUser(address: PathAddress(zipCode: "10001")))
        let unreachable = PathUserCache(currentUser: PathUser())
        let seenReachable = PathRecorder<String?>()
        let seenUnreachable = PathRecorder<String?>()

        // When observing with `.initial`
        let first = reachable.observe(.chain(cacheZipCode), options: .initial, queue: queue) { _, zipCode in
            seenReachable.record(zipCode)
        }
        let second = unreachable.observe(.chain(cacheZipCode), options: .initial, queue: queue) { _, zipCode in
            seenUnreachable.record(zipCode)
        }

        // Then each callback ran once before `observe` returned, with the endpoint or nil
        #expect(seenReachable.values == ["10001"])
        #expect(seenUnreachable.values == [nil])
        #expect(queue.drain() == 0)

        // And later changes are delivered as usual
        reachable.currentUser!.address!.zipCode = "97210"
        #expect(queue.drain() == 1)
        #expect(seenReachable.values == ["10001", "97210"])
        withExtendedLifetime((first, second)) {}
    }

    @Test
    func immediateChainCallbackRunsInsideEverySetterAlongThePath() {
        // Given an immediate chain token
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache()
        let seen = PathRecorder<String?>()
        let token = cache.observe(.chain(cacheZipCode), options: .immediate, queue: queue) { _, zipCode in
            seen.record(zipCode)
        }
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")

        // When each element changes, in one tick
        cache.currentUser = user
        #expect(seen.values == [nil])
        user.address = home
        #expect(seen.values == [nil, "10001"])
        user.address = work
        #expect(seen.values == [nil, "10001", "94103"])
        work.zipCode = "97210"
        #expect(seen.values == [nil, "10001", "94103", "97210"])
        home.zipCode = "stale"

        // Then every change ran the callback in its setter (retargeted first), and the tick
        // delivers nothing
        #expect(seen.values == [nil, "10001", "94103", "97210"])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test
    func retargetingMovesObserverCountsFromTheOldIntermediateToTheNewOne() {
        // Given a path through the home address
        let queue = CoalescingQueue(target: .manual)
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")
        let user = PathUser(address: home)
        let cache = PathUserCache(currentUser: user)
        let token = cache.observe(.chain(cacheZipCode), queue: queue) { _, _ in }
        #expect(home.observerCount(of: \.zipCode) == 1)
        #expect(home.observedProperties == ["zipCode"])
        #expect(work.observerCount(of: \.zipCode) == 0)

        // When the address is replaced
        user.address = work

        // Then the old intermediate has no observers and the new one has the path's
        #expect(home.observerCount(of: \.zipCode) == 0)
        #expect(home.observedProperties == [])
        #expect(home.pathEdgeCount == 0)
        #expect(work.observerCount(of: \.zipCode) == 1)
        #expect(work.observedProperties == ["zipCode"])
        #expect(user.observedProperties == ["address"])
        #expect(cache.observedProperties == ["currentUser"])

        // When the token ends, nothing on the path is observed any more
        token.invalidate()
        #expect(work.observerCount(of: \.zipCode) == 0)
        #expect(user.observerCount(of: \.address) == 0)
        #expect(cache.observerCount(of: \.currentUser) == 0)
        #expect([cache.pathEdgeCount, user.pathEdgeCount, work.pathEdgeCount] == [0, 0, 0])
    }

    @Test
    func aChainTokenWithAnObserverGetsItAndTellsItWhenTheRootGoes() {
        // Given two chain tokens on behalf of a listening observer (one with .endpointChanges),
        // each callback capturing a probe
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var person: CorePerson? = CorePerson()
        person!.address = CoreAddress()
        let seen = CoreRecorder<String>()
        let zip = KeyPathChain(\CorePerson.address).then(\.zip)
        var probes: [CoreProbe]? = [CoreProbe(), CoreProbe()]
        let weakProbes = probes!.map(WeakObserverBox.init)
        let tokens = [
            person!.observe(.chain(zip), observer: listener, queue: queue) { [probe = probes![0]] listener, _, zip in
                probe.touch()
                seen.append("plain \(zip ?? "-") \(listener.notices.count)")
            },
            person!.observe(.chain(zip), observer: listener, options: .endpointChanges, queue: queue) {
                [probe = probes![1]] listener, _, zip in
                probe.touch()
                seen.append("endpoint \(zip ?? "-") \(listener.notices.count)")
            },
        ]
        probes = nil

        // When the endpoint changes and is delivered
        person!.address!.zip = "12345"
        #expect(queue.drain() == 2)
        // Then each callback got its observer and the endpoint
        #expect(seen.entries.sorted() == ["endpoint 12345 0", "plain 12345 0"])

        // When the root deinitializes
        person = nil
        // Then both tokens end, each callback (with its probe) is released, and the observer
        // hears of the root's deinit once per token, naming the chain
        #expect(tokens.allSatisfy { !$0.isValid })
        #expect(weakProbes.allSatisfy { $0.object == nil })
        queue.drain()
        #expect(listener.notices.count == 2)
        #expect(listener.notices.entries.map(\.observedPaths) == [["address.zip"], ["address.zip"]])
        #expect(seen.entries.count == 2)
    }

    @Test
    func aRootDeinitDetachesTheChainFromTheOtherObjectsOnItsPathAndEndsEveryToken() {
        // Given chains through an owner from a root (a property token beside them), and one
        // looping back to the root itself
        let queue = CoalescingQueue(target: .manual)
        var root: ChainNode? = ChainNode()
        let owner = ChainNode()
        root!.owner = owner
        let calls = CoreCounter()
        let chain = KeyPathChain(\ChainNode.owner).then(\.count)
        let observer = CoreObserver()
        let tokens = [
            root!.observe(.chain(chain), queue: queue) { _, _ in calls.increment() },
            root!.observe(.chain(chain), observer: observer, options: .endpointChanges, queue: queue) { _, _, _ in
                calls.increment()
            },
            root!.observe(\.count, queue: queue) { _ in calls.increment() },
        ]
        let ownerToken = owner.observe(\.count, queue: queue) { _ in calls.increment() }
        #expect(owner.observerCount(of: \.count) == 3)

        // When the root deinitializes
        root = nil

        // Then every token rooted there ends, the owner keeps only its own token, and a change
        // of the owner reaches that one alone
        #expect(tokens.allSatisfy { !$0.isValid })
        #expect(ownerToken.isValid)
        #expect(owner.observerCount(of: \.count) == 1)
        owner.count = 7
        #expect(queue.drain() == 1)
        #expect(calls.value == 1)
    }

    @Test
    func aChainThatLoopsBackToItsRootEndsWithTheRoot() {
        // Given a chain whose owner is the root itself (both edges on the root)
        let queue = CoalescingQueue(target: .manual)
        var root: ChainNode? = ChainNode()
        root!.owner = root
        weak let weakRoot = root
        let token = root!.observe(.chain(KeyPathChain(\ChainNode.owner).then(\.count)), queue: queue) { _, _ in }

        // When the loop is cut (one delivery, which let the root go) and the root goes
        root!.owner = nil
        #expect(queue.drain() == 1)
        root = nil

        // Then the root deinitialized and the token ended
        #expect(weakRoot == nil)
        #expect(!token.isValid)
        #expect(queue.drain() == 0)
    }

    @Test
    func observerVariantFollowsThePathAndEndsWhenTheObserverIsGone() {
        // Given a chain observed on behalf of an observer
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser(address: PathAddress(zipCode: "10001"))
        let seen = PathRecorder<String?>()
        var observer: PathPlainObject? = PathPlainObject()
        let token = user.observe(.chain(userZipCode), observer: observer!, queue: queue) { observer, user, _ in
            seen.record("\(observer.zipCode) \(user.address?.zipCode ?? "nil")")
        }

        // When the address is replaced and the new one changes in one tick
        let work = PathAddress(zipCode: "94103")
        user.address = work
        work.zipCode = "97210"
        // Then one callback with both objects
        #expect(queue.drain() == 1)
        #expect(seen.values == ["plain 97210"])

        // When the observer goes away and the endpoint changes
        observer = nil
        work.zipCode = "10001"
        // Then the callback doesn't run, and the token ends
        #expect(queue.drain() == 0)
        #expect(!token.isValid)
        #expect(work.observerCount(of: \.zipCode) == 0)
    }

    @Test
    func oneTokenForSeveralTypedChainsFiresOncePerTick() {
        // Given one token on two chains to different types through the same user
        let queue = CoalescingQueue(target: .manual)
        let home = PathAddress(zipCode: "10001")
        let user = PathUser(address: home)
        let cache = PathUserCache(currentUser: user)
        let fires = PathRecorder<String>()
        let token = cache.observe(
            .chains([
                AnyKeyPathChain(cacheZipCode), AnyKeyPathChain(KeyPathChain(\PathUserCache.currentUser).then(\.name)),
            ]), queue: queue
        ) { cache in fires.record(cache.currentUser?.name ?? "-") }

        // When both endpoints change in one tick
        home.zipCode = "10002"
        user.name = "Ada"

        // Then one callback
        #expect(queue.drain() == 1)
        #expect(fires.values == ["Ada"])

        // When only one of them changes, in the next tick
        user.name = "Grace"
        #expect(queue.drain() == 1)

        // And when a middle element common to both is replaced, the token follows for both
        let work = PathAddress(zipCode: "97210")
        cache.currentUser = PathUser(address: work)
        #expect(queue.drain() == 1)
        work.zipCode = "97211"
        #expect(queue.drain() == 1)
        home.zipCode = "10003"
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    /// A middle element set to nil and back, on a path that shares its token with a second
    /// path after it: the path loses and gains edges in the middle of the token's edge list,
    /// and each edge stays where the path runs, however the lengths change.
    @Test
    func aPathThatLosesAndGainsEdgesKeepsEveryOtherEdge() {
        // Given one token on two paths, the zip code path first
        let queue = CoalescingQueue(target: .manual)
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")
        let user = PathUser(name: "Ada", address: home)
        let cache = PathUserCache(currentUser: user)
        let token = cache.observe(
            .chains([
                AnyKeyPathChain(cacheZipCode), AnyKeyPathChain(KeyPathChain(\PathUserCache.currentUser).then(\.name)),
            ]), queue: queue
        ) { _ in }

        for (address, expectedHome, expectedWork) in [
            (nil, 0, 0), (work, 0, 1), (nil, 0, 0), (home, 1, 0), (work, 0, 1), (nil, 0, 0), (nil, 0, 0), (home, 1, 0),
        ] as [(PathAddress?, Int, Int)] {
            // When the address is set
            user.address = address
            _ = queue.drain()

            // Then exactly the current address's zip code is watched, and the second path too
            #expect(home.observerCount(of: \.zipCode) == expectedHome)
            #expect(work.observerCount(of: \.zipCode) == expectedWork)
            #expect(user.observerCount(of: \.address) == 1)
            #expect(user.observerCount(of: \.name) == 1)
            #expect(cache.observerCount(of: \.currentUser) == 1)
            user.name += "!"
            #expect(queue.drain() == 1)
            address?.zipCode += "0"
            #expect(queue.drain() == (address == nil ? 0 : 1))
            (address === home ? work : home).zipCode += "0"
            #expect(queue.drain() == 0)
        }

        // When the user itself goes to nil and comes back without an address
        cache.currentUser = nil
        #expect(queue.drain() == 1)
        #expect([user.pathEdgeCount, home.pathEdgeCount, work.pathEdgeCount] == [0, 0, 0])
        user.address = nil
        cache.currentUser = user
        #expect(queue.drain() == 1)
        user.address = work
        #expect(queue.drain() == 1)
        #expect(work.observerCount(of: \.zipCode) == 1)
        token.invalidate()
        #expect([cache.pathEdgeCount, user.pathEdgeCount, home.pathEdgeCount, work.pathEdgeCount] == [0, 0, 0, 0])
    }

    // MARK: Mistakes are loud: chains and lists

    #if DEBUG
        /// A composed key path as a segment reads two properties: the trap says so, and how to
        /// spell it (it used to say the segment "reads no @Observed property").
        @Test func aComposedSegmentStopsADebugBuildSayingWhatItReads() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let user = PathUser()
                user.address = PathAddress()
                _ = user.observe(
                    .chain(KeyPathChain(\PathUser.address?.zipCode)), queue: CoalescingQueue(target: .manual)
                ) {
                    _, _ in
                }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(
                message.contains(
                    "segment 1 of the key path chain observed at ObservationTokensTests/KeyPathChainTests.swift:"))
            #expect(message.contains("\\PathUser.address?.zipCode, is not one @Observed property"))
            #expect(message.contains("it reads PathUser.address, PathAddress.zipCode"))
            #expect(message.contains(".then(\\.address).then(\\.zipCode)"))
            #expect(message.contains("observe(\\PathUser.address?.zipCode)"))
            #expect(!message.contains("reads no @Observed property"))
        }

        @Test func aListWithAPlainPropertyStopsADebugBuildNamingIt() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                _ = CorePerson().observe([\.firstName, \.nickname], queue: CoalescingQueue(target: .manual)) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("observe([…]) at ObservationTokensTests/KeyPathChainTests.swift:"))
            #expect(message.contains("\\CorePerson.nickname reads no @Observed property of CorePerson"))
            #expect(message.contains("Mark the property @Observed, or leave it out of the list."))
        }

        @Test func everyListFormStopsADebugBuild() async {
            // The observer form and the variadic form, like the plain one
            await #expect(processExitsWith: .failure) {
                let observer = CoreObserver()
                _ = CorePerson().observe([\.nickname], observer: observer, queue: CoalescingQueue(target: .manual)) {
                    _, _ in
                }
            }
            await #expect(processExitsWith: .failure) {
                _ = CorePerson().observe([\.firstName, \.nickname], queue: CoalescingQueue(target: .manual)) { _ in }
            }
        }

        @Test func aListWithAComposedKeyPathStopsADebugBuildSayingWhatItReads() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = CorePerson()
                person.address = CoreAddress()
                _ = person.observe([\.firstName, \.address?.zip], queue: CoalescingQueue(target: .manual)) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("\\CorePerson.address?.zip is not one @Observed property of CorePerson"))
            #expect(message.contains("it reads CorePerson.address, CoreAddress.zip"))
            #expect(message.contains("observe(\\CorePerson.address?.zip)"))
        }
    #endif
}
