import Testing

@testable import ObservationTokens

/// A node for chains of any length through `next`.
private final class EdgeNode: ObservableModel {
    @Observed var next: EdgeNode?
    @Observed var count = 0
}

/// An observer for the chain tokens (a view model).
private final class EdgeViewModel {
    var seen: [Int?] = []
}

/// A token on the chain `next` × (`length` − 1), then `count` (1 to 5 steps), rooted at `root`,
/// that records the count it is delivered in `observer.seen`.
private func observeCount(
    _ root: EdgeNode, length: Int, observer: EdgeViewModel, queue: CoalescingQueue
) -> ObservationToken {
    let record: @Sendable (EdgeViewModel, Int?) -> Void = { viewModel, count in viewModel.seen.append(count) }
    switch length {
    case 1:
        return root.observe(.chain(KeyPathChain(\EdgeNode.count)), observer: observer, queue: queue) {
            record($0, $2)
        }
    case 2:
        return root.observe(.chain(KeyPathChain(\EdgeNode.next).then(\.count)), observer: observer, queue: queue) {
            record($0, $2)
        }
    case 3:
        let chain = KeyPathChain(\EdgeNode.next).then(\.next).then(\.count)
        return root.observe(.chain(chain), observer: observer, queue: queue) { record($0, $2) }
    case 4:
        let chain = KeyPathChain(\EdgeNode.next).then(\.next).then(\.next).then(\.count)
        return root.observe(.chain(chain), observer: observer, queue: queue) { record($0, $2) }
    default:
        let chain = KeyPathChain(\EdgeNode.next).then(\.next).then(\.next).then(\.next).then(\.count)
        return root.observe(.chain(chain), observer: observer, queue: queue) { record($0, $2) }
    }
}

/// `nodes[0].next = nodes[1]`, … : the path of a chain of `count` steps runs through them all.
private func linkedNodes(_ count: Int) -> [EdgeNode] {
    let nodes = (0..<count).map { _ in EdgeNode() }
    for index in nodes.indices.dropLast() { nodes[index].next = nodes[index + 1] }
    return nodes
}

/// A path subscription's extras, its first edges inline and the rest in a list of their own,
/// live in the subscription (a chain's, a tracked token's) or in one block beside it: chains of
/// every length keep their edges where their paths run through retargets, and detach them all
/// when they end, whichever goes first, the token or the model.
@Suite("Path edge storage")
struct PathEdgeStorageTests {
    @Test(arguments: [1, 2, 3, 4, 5])
    func aChainOfAnyLengthKeepsOneEdgePerStepThroughRetargetsAndDetachesThemAtItsEnd(length: Int) throws {
        // Given a chain of `length` steps through linked nodes
        let queue = CoalescingQueue(target: .manual)
        let nodes = linkedNodes(length)
        let viewModel = EdgeViewModel()
        let token = observeCount(nodes[0], length: length, observer: viewModel, queue: queue)
        let extras = try #require(token.subscription.extras)
        #expect(extras.withLock { $0.edges.count } == length)
        #expect(nodes.allSatisfy { $0.observedPropertyCount == 1 })

        // When the leaf changes, then each middle object is replaced by a copy of its tail, set to
        // nil and back (every retarget, with the lists growing and shrinking past the inline edges)
        nodes[length - 1].count = 1
        var expected: [Int?] = [1]
        #expect(queue.drain() == 1)
        var replaced = nodes
        for step in 0..<(length - 1) {
            let copies = (step + 1..<length).map { _ in EdgeNode() }
            for index in copies.indices.dropLast() { copies[index].next = copies[index + 1] }
            copies.last!.count = 10 + step
            replaced[step].next = copies[0]
            expected.append(10 + step)
            #expect(queue.drain() == 1)
            #expect(extras.withLock { $0.edges.count } == length)
            #expect(copies.allSatisfy { $0.observedPropertyCount == 1 })
            replaced[step].next = nil
            expected.append(nil)
            #expect(queue.drain() == 1)
            #expect(extras.withLock { $0.edges.count } == step + 1)
            #expect(copies.allSatisfy { $0.observedPropertyCount == 0 })
            replaced[step].next = copies[0]
            expected.append(10 + step)
            #expect(queue.drain() == 1)
            replaced.replaceSubrange((step + 1)..., with: copies)
        }

        // Then each change was delivered once, and the edges ran where the path did
        #expect(viewModel.seen == expected)
        #expect(extras.withLock { $0.edges.count } == length)
        #expect(replaced.allSatisfy { $0.observedPropertyCount == 1 })

        // And when the token ends, every edge is detached
        token.invalidate()
        #expect(extras.withLock { $0.edges.isEmpty })
        #expect(replaced.allSatisfy { $0.observedPropertyCount == 0 })
        #expect(nodes.allSatisfy { $0.observedPropertyCount == 0 })
    }

    @Test(arguments: [1, 2, 3, 5], [true, false])
    func aChainTokenAndItsModelsAreFreedWhicheverGoesFirst(length: Int, modelsFirst: Bool) {
        // Given chains of `length` steps on models held only here, with their tokens
        let queue = CoalescingQueue(target: .manual)
        var nodes: [EdgeNode]? = linkedNodes(length)
        var tokens: [ObservationToken]? = []
        let viewModel = EdgeViewModel()
        for _ in 0..<3 {
            tokens!.append(observeCount(nodes![0], length: length, observer: viewModel, queue: queue))
        }
        weak let weakToken = tokens![0]
        weak let weakSubscription = tokens![0].subscription
        weak let weakRoot = nodes![0]
        weak let weakLeaf = nodes![length - 1]
        nodes![length - 1].count = 5
        #expect(queue.drain() == 3)

        // When the models and the tokens are dropped, in either order
        if modelsFirst {
            nodes = nil
            #expect(weakRoot == nil && weakLeaf == nil)
            tokens = nil
        } else {
            tokens = nil
            #expect(weakToken == nil && weakSubscription == nil)
            #expect(weakLeaf?.observedPropertyCount == 0)
            nodes = nil
        }

        // Then everything is gone, and nothing more is delivered
        #expect(weakToken == nil && weakSubscription == nil && weakRoot == nil && weakLeaf == nil)
        #expect(queue.drain() == 0)
        #expect(viewModel.seen == [5, 5, 5])
    }

    @Test func aTrackedTokenKeepsItsReadsInlineAndBeyondAndDetachesThemAtItsEnd() throws {
        // Given a tracking closure that reads three storages while the root's count is 0, and six
        // (through every node) otherwise
        let queue = CoalescingQueue(target: .manual)
        let nodes = linkedNodes(5)
        let seen = CoreRecorder<Int>()
        let token = nodes[0].observe(queue: queue) { root in
            seen.append(root.count > 0 ? (root.next?.next?.next?.next?.count ?? -1) : (root.next?.count ?? -1))
        }
        let extras = try #require(token.subscription.extras)
        #expect(extras.withLock { $0.edges.count } == 3)

        // When the read widens to every node, its leaf changes, then it narrows again
        nodes[0].count = 1
        #expect(queue.drain() == 1)
        let wideEdges = extras.withLock { $0.edges.count }
        nodes[4].count = 7
        #expect(queue.drain() == 1)
        nodes[0].count = 0
        #expect(queue.drain() == 1)

        // Then it ran once per change and its edges followed its reads
        #expect(wideEdges == 6)
        #expect(seen.entries == [0, 0, 7, 0])
        #expect(extras.withLock { $0.edges.count } == 3)
        #expect(nodes[2...].allSatisfy { $0.observedPropertyCount == 0 })

        // And when it ends, every edge is detached
        token.invalidate()
        #expect(nodes.allSatisfy { $0.observedPropertyCount == 0 })
    }
}
