import Synchronization

/// The state of one two-way binding between `a.x` and `b.y`.
///
/// Each side has an immediate-mode watcher that runs inside the setter. A watcher marks its
/// side changed and makes the hub (the token's subscription) pending; the hub copies once per
/// tick: A to B if A changed, else B to A. So when both sides changed in one tick, A wins.
/// While the binding writes a side, that side's watcher ignores the change: the binding's own
/// writes are never echoed back, whatever the value type (no equality needed).
///
/// With `.immediate`, a watcher copies at once instead of making the hub pending.
final class TwoWayBinding: Sendable {
    private enum Bit {
        static let changedA: UInt8 = 1 << 0
        static let changedB: UInt8 = 1 << 1
        static let writingA: UInt8 = 1 << 2
        static let writingB: UInt8 = 1 << 3
    }

    private let bits = Atomic<UInt8>(0)

    static func start<A: ObservableModelBase, B: ObservableModelBase, Value>(
        _ a: A, _ keyPathA: ReferenceWritableKeyPath<A, Value>,
        _ b: B, _ keyPathB: ReferenceWritableKeyPath<B, Value>,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite
    ) -> ObservationToken {
        let group = BindingGroup()
        if a === b, keyPathA as AnyKeyPath == keyPathB as AnyKeyPath {
            // A property bound to itself: its own writes would be changes of the other side.
            #if DEBUG
                assertionFailure(
                    "bindTwoWay(_:with:_:) was asked to bind a property to itself; bind two different properties or objects"
                )
            #endif
            let ended = BindingSubscription(
                root: a, target: .property, options: [], queue: queue, site: site, group: group, action: {})
            ended.end()
            return ObservationToken(subscription: ended)
        }
        let state = TwoWayBinding()
        let boxA = WeakReference(a)
        let boxB = WeakReference(b)
        let isImmediate = options.contains(.immediate)
        nonisolated(unsafe) let pathA = keyPathA  // key paths are immutable
        nonisolated(unsafe) let pathB = keyPathB
        // Copies in the direction the changed bits say; with none (`now()`, `schedule()`), A to B.
        let sync: @Sendable (_ changed: UInt8) -> Void = { changed in
            guard let a = boxA.load(as: A.self), let b = boxB.load(as: B.self) else { return }
            if changed & Bit.changedB != 0 && changed & Bit.changedA == 0 {
                state.writing(Bit.writingA) { a[keyPath: pathA] = b[keyPath: pathB] }
            } else {
                state.writing(Bit.writingB) { b[keyPath: pathB] = a[keyPath: pathA] }
            }
        }
        // The hub has no edge: it is only ever scheduled, so it takes no options.
        let hub = BindingSubscription(
            root: a, target: .property, options: [], queue: queue, site: site, group: group
        ) { sync(state.takeChanged()) }
        group.add(hub)
        let weakHub = WeakReference(hub)
        let watch: @Sendable (_ changed: UInt8, _ writing: UInt8) -> Void = { changed, writing in
            guard !state.isWriting(writing) else { return }
            if isImmediate {
                sync(changed)
            } else {
                state.mark(changed)
                weakHub.load(as: BindingSubscription.self)?.schedule()
            }
        }
        let keyA = TypedKey(keyPathA as KeyPath<A, Value>)
        let watcherA = BindingSubscription(
            root: a, target: .property, options: .immediate, queue: queue, site: site, group: group
        ) { watch(Bit.changedA, Bit.writingA) }
        group.add(watcherA)
        _ = watcherA.start(root: a, key: keyA)
        let keyB = TypedKey(keyPathB as KeyPath<B, Value>)
        let watcherB = BindingSubscription(
            root: b, target: .property, options: .immediate, queue: queue, site: site, group: group
        ) { watch(Bit.changedB, Bit.writingB) }
        group.add(watcherB)
        if !group.hasEnded { _ = watcherB.start(root: b, key: keyB) }
        if options.contains(.initial), !group.hasEnded { sync(0) }
        return ObservationToken(subscription: hub)
    }

    private func mark(_ changed: UInt8) {
        bits.bitwiseOr(changed, ordering: .acquiringAndReleasing)
    }

    private func takeChanged() -> UInt8 {
        bits.bitwiseAnd(~(Bit.changedA | Bit.changedB), ordering: .acquiringAndReleasing).oldValue
            & (Bit.changedA | Bit.changedB)
    }

    private func isWriting(_ side: UInt8) -> Bool {
        bits.load(ordering: .acquiring) & side != 0
    }

    /// Runs `write` with `side` marked as being written by the binding.
    private func writing(_ side: UInt8, _ write: () -> Void) {
        bits.bitwiseOr(side, ordering: .acquiringAndReleasing)
        defer { bits.bitwiseAnd(~side, ordering: .acquiringAndReleasing) }
        write()
    }
}
