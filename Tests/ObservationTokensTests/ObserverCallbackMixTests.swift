import Testing

@testable import ObservationTokens

// Observer-form callbacks (the caller's closure handed to the source as passed) in one tick
// with a computed value, a binding that writes another model, an observed array, a path
// retargeted to a new object, a token ended before the drain and an observer that goes away.

final class CbMixNode: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = 0
    @Observed var child: CbMixNode?
    @Observed var items = ObservedArray<Int>()
    @Computed({ (node: CbMixNode) in node.a + node.b + node.items.count }) var total: Int
    @Computed({ (node: CbMixNode) in node.total % 2 == 0 }) var isEven: Bool
}

@Suite struct ObserverCallbackMixTests {
    @Test func observerCallbacksMeetComputedValuesBindingsCollectionsPathsAndLifetimesInOneTick() {
        // Given a root with a child, a model a binding writes the root's computed total to, and
        // observer-form tokens on the total, its parity, the child's total through a path, the
        // binding's destination, the array's count, plus one token to end and one whose observer goes
        let queue = CoalescingQueue(target: .manual)
        let root = CbMixNode()
        let oldChild = CbMixNode()
        let newChild = CbMixNode()
        newChild.a = 40
        root.child = oldChild
        let mirror = CbMixNode()
        let observer = CbObserver(name: "vm")
        var leaving: CbObserver? = CbObserver(name: "leaving")
        weak let weakLeaving = leaving
        let binding = root.bind(\.total, to: mirror, \.a, queue: queue)
        var tokens: [ObservationToken] = []
        tokens.append(
            root.observe(.changes(\.total), observer: observer, queue: queue) { observer, _, change in
                observer.record("total \(change.old)→\(change.new)")
            })
        tokens.append(
            root.observe(.chain(KeyPathChain(\CbMixNode.child).then(\.total)), observer: observer, queue: queue) {
                observer, _, total in
                observer.record("child.total \(total.map(String.init) ?? "nil")")
            })
        tokens.append(
            mirror.observe(.changes(\.a), observer: observer, queue: queue) { observer, _, change in
                observer.record("mirror \(change.old)→\(change.new)")
            })
        tokens.append(
            root.observe(.value { $0.items.count }, observer: observer, queue: queue) { observer, _, count in
                observer.record("count \(count)")
            })
        let ended = root.observe(.changes(\.a), observer: observer, queue: queue) { observer, _, _ in
            observer.record("ended token fired")
        }
        tokens.append(
            root.observe(.changes(\.isEven), observer: observer, queue: queue) { observer, _, change in
                observer.record("isEven \(change.old)→\(change.new)")
            })
        let orphaned = root.observe(.changes(\.total), observer: leaving!, queue: queue) { observer, _, _ in
            observer.record("orphaned token fired")
        }

        // When one tick sets the inputs (`b`, which only the computed total reads, three times:
        // the later sets find the total's dependency stale already), appends, moves the path to
        // a new child and sets both children, ends one token and lets the other's observer go,
        // then drains
        root.a = 1
        root.b = 7
        root.b = 5
        root.b = 2
        root.items.append(7)
        root.child = newChild
        newChild.a = 41
        oldChild.a = 99
        ended.invalidate()
        leaving = nil
        _ = queue.drain()

        // Then each live token heard the tick once, with values consistent with each other: the
        // total 0 → 4, the binding's write of it (heard in the same drain), the new child's
        // total, the count; the parity, even before and after, fired nothing; the ended token and the gone observer's token stayed silent, the gone
        // observer was not kept alive, and its token ended
        // (Plain values in the expectations: Swift Testing's reflection of a token on failure
        // can't copy the subscription's noncopyable callback.)
        let leavingIsGone = weakLeaving == nil
        let entries = observer.entries.sorted()
        let mirrored = mirror.a
        let endedIsValid = ended.isValid
        let orphanedIsValid = orphaned.isValid
        #expect(leavingIsGone)
        #expect(entries == ["child.total 41", "count 1", "mirror 0→4", "total 0→4"])
        #expect(mirrored == 4)
        #expect(!endedIsValid)
        #expect(!orphanedIsValid)
        let further = queue.drain()
        #expect(further == 0)
        let count = observer.entries.count
        #expect(count == 4)
        withExtendedLifetime((binding, tokens)) {}
    }
}
