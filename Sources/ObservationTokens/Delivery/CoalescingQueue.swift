import Dispatch
import Synchronization

/// Collects token firings during a tick and delivers each pending token once at its end.
///
/// Every token delivers through one queue, ``main`` unless you pass another to `observe`.
/// A *tick* is the time between two drains of the queue:
///
/// - ``Target-swift.enum/main``: the first change of a tick schedules a drain with
///   `DispatchQueue.main.async`; the tick ends when the main queue runs it. Callbacks run on the
///   main thread, whatever thread set the property.
/// - ``Target-swift.enum/dispatch(_:)``: the same, on the given `DispatchQueue`.
/// - ``Target-swift.enum/manual``: nothing is scheduled; the tick ends when you call ``drain()``.
///   Use it in tests, command-line tools and servers.
///
/// Rules, each covered by a test:
/// 1. A token fires at most once per tick, however many of its properties changed, how often.
/// 2. A callback that changes a property watched by a token that has not fired yet in this
///    drain makes that token fire in the same drain; if it already fired, it fires next tick.
/// 3. Tokens fire in the order in which they first became pending.
/// 4. No lock is held while a callback runs.
///
/// ```swift
/// let queue = CoalescingQueue(target: .manual)
/// let token = model.observe(\.name, queue: queue) { model in print(model.name) }
/// model.name = "a"
/// model.name = "b"
/// queue.drain()   // prints "b" once
/// ```
///
/// > Note: ``drain()`` runs callbacks on the calling thread. Call it from the thread or queue
/// > the target stands for (the main thread for ``main``).
public final class CoalescingQueue: Sendable {
    /// Where and when a queue delivers.
    public enum Target: Sendable {
        /// Drain on the main queue, scheduled by the first change of each tick.
        case main
        /// Drain on the given queue, scheduled by the first change of each tick.
        case dispatch(DispatchQueue)
        /// Drain only when ``CoalescingQueue/drain()`` is called.
        case manual
    }

    /// The queue that tokens use unless told otherwise: delivers on the main thread.
    public static let main = CoalescingQueue(target: .main)

    /// Where this queue delivers.
    public let target: Target

    private let state = Locked(state: QueueState())

    /// Even while no drain runs; a drain adds 1 when it starts and 1 when it ends (see
    /// `DrainEpoch`, and `SettledMark` for what reads it).
    let drainEpoch = DrainEpoch()

    /// What bindings add to a drain's count, taken when it ends: a delivery that wrote nothing
    /// takes 1 off, a binding pushed within another's delivery adds 1 (see `BindingLink`).
    /// Changed only by the draining thread.
    let countAdjustment = Atomic<Int>(0)

    /// Creates a queue that delivers to `target`.
    public init(target: Target) {
        self.target = target
    }

    deinit {
        // `QueueState`'s list of items is not an owner by itself (see `ItemList`).
        state.withLock { $0.free() }
    }

    /// The number of deliveries waiting for the end of the tick.
    ///
    /// Inside a callback, deliveries of the running drain that have not run yet are not
    /// counted (they are no longer waiting for a tick); deliveries queued since the drain
    /// began are.
    ///
    /// - Complexity: O(1) unless tokens with queued deliveries ended since the last sweep;
    ///   then O(*n*) in the queued deliveries.
    public var pendingCount: Int {
        state.withLock { state in state.pendingCount }
    }

    /// Delivers every pending token now, on the calling thread, and returns how many callbacks
    /// ran.
    ///
    /// Tokens that become pending while the drain runs are delivered by the same drain, unless
    /// they already fired in it; those wait for the next tick. Calling `drain()` from inside a
    /// callback (or while another thread drains this queue) returns 0 at once: the running
    /// drain delivers everything.
    ///
    /// - Returns: The number of callbacks that ran.
    /// - Complexity: O(*n*) in the number of pending tokens.
    @discardableResult
    public func drain() -> Int {
        let drainID = state.withLock { state -> UInt64? in
            guard !state.isDraining else { return nil }
            state.isDraining = true
            drainEpoch.value.wrappingAdd(1, ordering: .sequentiallyConsistent)
            state.drainCount &+= 1
            return state.drainCount
        }
        guard let drainID else { return 0 }
        var delivered = 0
        var deferred: [Item] = []
        var reschedule = false
        var hook: (@Sendable () -> Void)?
        // The last batch's buffer, emptied: the queue gets it back for the next batch. `used`:
        // how many items that batch held (the kept-list policy, `QueueState.keeps`).
        var spare = ItemList()
        var used = 0
        while true {
            // Finding nothing left and ending the drain are one critical section: a change
            // queued after it starts a drain of its own (`drain()` on another thread then
            // returns a count, not 0), and one queued before it is in this batch.
            let batch = state.withLock { state -> ItemList? in
                guard state.items.isEmpty else { return state.takeItems(leaving: &spare, used: used) }
                state.isDraining = false
                drainEpoch.value.wrappingAdd(1, ordering: .sequentiallyConsistent)
                if !deferred.isEmpty { state.prepend(deferred) }
                state.reuse(&spare, used: used)
                state.isScheduled = false
                reschedule = markScheduledIfNeeded(&state)
                hook = state.drainDidEndHook
                return nil
            }
            guard var batch else { break }
            // Every item is moved out, not copied (a copy retains the item's array and root, and
            // destroying the list released them again), and the list is left empty with its
            // capacity, destroying nothing: an `Array` emptied by `removeAll(keepingCapacity:)`
            // ran each slot through the runtime's generic array destroy, ≈ 27 instructions a
            // delivery even for placeholders that owned nothing. The item keeps its root alive
            // while its deliveries run, and lets go of it right after.
            let items = batch.removeAllMoving()
            for index in items.indices {
                let item = items.moveElement(from: index)
                switch consume item {
                case .notice(let notice):
                    notice()
                case .delivery(let subscription, let root):
                    switch subscription.deliver(drainID: drainID) {
                    case .delivered: delivered += 1
                    case .skipped: break
                    case .deferred: deferred.append(.delivery(subscription, root))
                    }
                case .deliveries(let subscriptions, let root):
                    var later: [Subscription] = []
                    delivered += Self.deliver(subscriptions, drainID: drainID, later: &later)
                    if !later.isEmpty { deferred.append(.deliveries(later, root)) }
                }
            }
            used = items.count
            spare = batch
        }
        delivered &+= countAdjustment.exchange(0, ordering: .relaxed)
        if reschedule { scheduleDrain() }
        hook?()
        return delivered
    }

    /// Delivers a run of subscriptions that share a root and returns how many callbacks ran;
    /// those that already fired in this drain go to `later`. A function of its own, so that
    /// the count stays in a register instead of a variable captured by the drain's closures.
    private static func deliver(_ subscriptions: [Subscription], drainID: UInt64, later: inout [Subscription]) -> Int {
        var delivered = 0
        // Through the buffer, each subscription is borrowed, not retained again.
        subscriptions.withUnsafeBufferPointer { subscriptions in
            for index in subscriptions.indices {
                let outcome = Unmanaged.passUnretained(subscriptions[index])
                    ._withUnsafeGuaranteedRef { $0.deliver(drainID: drainID) }
                switch outcome {
                case .delivered: delivered += 1
                case .skipped: break
                case .deferred: later.append(subscriptions[index])
                }
            }
        }
        return delivered
    }

    // MARK: Internal

    /// Tests only: runs on the draining thread once a drain has ended, before it returns
    /// (where a second drain used to find the first one still running).
    func setDrainDidEndHook(_ hook: (@Sendable () -> Void)?) {
        state.withLock { $0.drainDidEndHook = hook }
    }

    /// Tests only: the capacity of the list the next deliveries are queued in.
    var itemsCapacity: Int { state.withLock { $0.itemsCapacity } }

    /// Tests only: a drain keeps a list of this capacity or less whatever its batch used.
    static var keptCapacityAlways: Int { QueueState.reusedCapacity }

    /// Queues a delivery. `root` stays alive until the delivery runs or the token ends: from a
    /// set to its delivery, the observed object is retained, so its observers run before it
    /// goes away.
    func enqueue(_ subscription: Subscription, retaining root: ObservableModelBase) {
        let schedule = state.withLock { state in
            state.append(.delivery(subscription, root))
            return markScheduledIfNeeded(&state)
        }
        if schedule { scheduleDrain() }
    }

    /// `enqueue(_:retaining:)` for a subscription the caller retained by hand (a set's first
    /// plain subscription, retained under its registry's lock), on the subscription's queue:
    /// the queue's item takes over that retain, so the set neither retains the subscription
    /// again nor releases it after, and the queue is borrowed from it, not retained.
    ///
    /// Lifetime: once the item is in the list (under the lock), a drain on another thread may
    /// deliver it and, if the token ended meanwhile, release the subscription and with it its
    /// reference to the queue. So nothing here touches the subscription or the queue after
    /// unlocking: a drain to schedule takes its own reference to the queue while still under
    /// the lock (where the item keeps the subscription, and so the queue, alive).
    static func enqueue(retained subscription: Unmanaged<Subscription>, retaining root: ObservableModelBase) {
        let scheduling = subscription._withUnsafeGuaranteedRef { borrowed -> CoalescingQueue? in
            let queue = borrowed.queue
            return queue.state.withLock { state in
                state.append(.delivery(subscription.takeRetainedValue(), root))
                return queue.markScheduledIfNeeded(&state) ? queue : nil
            }
        }
        scheduling?.scheduleDrain()
    }

    /// Enqueues the subscriptions a set made pending, which may belong to different queues:
    /// one lock per run of subscriptions on the same queue. The changed object is retained
    /// once for all the subscriptions rooted at it (its retain and release are costly: observed
    /// objects have weak references); other roots, of paths through it, one by one. An
    /// intermediate object on a path is never retained.
    static func enqueue(_ subscriptions: [Subscription], changedObject: ObservableModelBase) {
        // The usual case, one subscription (a path token whose leaf is on this object, a
        // tracked token): one item of its own, no lists built.
        if subscriptions.count == 1 {
            let subscription = subscriptions[0]
            // A root that is gone is deinitializing; its deinit ends the subscription.
            guard let root = subscription.isRoot(changedObject) ? changedObject : subscription.root else { return }
            subscription.queue.enqueue(subscription, retaining: root)
            return
        }
        var start = 0
        while start < subscriptions.count {
            let queue = subscriptions[start].queue
            var end = start + 1
            while end < subscriptions.count, subscriptions[end].queue === queue { end += 1 }
            var rooted: [Subscription] = []
            // One item per subscription at most, built on the stack (a list grown one item at
            // a time allocated twice per set that made several path tokens pending).
            let schedule = withUnsafeTemporaryAllocation(of: Item.self, capacity: end - start + 1) { items in
                var count = 1  // slot 0: the rooted subscriptions' item, if any
                for subscription in subscriptions[start..<end] {
                    if subscription.isRoot(changedObject) {
                        rooted.append(subscription)
                    } else if let root = subscription.root {
                        items.initializeElement(at: count, to: .delivery(subscription, root))
                        count += 1
                    }
                    // A root that is gone is deinitializing; its deinit ends the subscription.
                }
                var first = 1
                if !rooted.isEmpty {
                    items.initializeElement(at: 0, to: .deliveries(rooted, changedObject))
                    first = 0
                }
                // Moved into the queue's list, not copied (a copy retained each item's parts,
                // and destroying the built items released them again).
                let built = UnsafeMutableBufferPointer(rebasing: items[first..<count])
                return queue.state.withLock { state in
                    state.append(moving: built)
                    return queue.markScheduledIfNeeded(&state)
                }
            }
            if schedule { queue.scheduleDrain() }
            start = end
        }
    }

    /// Enqueues subscriptions a set made pending that are all rooted at the changed object
    /// (single-property tokens on it). The usual case, one queue for all, enqueues the array as
    /// it is, as one item that retains the root once.
    static func enqueue(_ subscriptions: [Subscription], root: ObservableModelBase) {
        let queue = subscriptions[0].queue
        guard subscriptions.allSatisfy({ $0.queue === queue }) else {
            enqueue(subscriptions, changedObject: root)
            return
        }
        let schedule = queue.state.withLock { state in
            state.append(.deliveries(subscriptions, root))
            return queue.markScheduledIfNeeded(&state)
        }
        if schedule { queue.scheduleDrain() }
    }

    /// Called when a subscription with a pending delivery ends. Its delivery would be skipped
    /// anyway; what matters is letting go of the subscription and the object the delivery
    /// keeps alive. Ended deliveries are swept out together, once they are at least half of
    /// the queue: one token ending alone is released at once, and 10,000 ending together cost
    /// O(n) in all, not a scan each.
    func subscriptionDidEnd() {
        let removed = state.withLock { state -> [Item] in
            state.ended += 1
            guard state.ended * 2 >= state.queued else { return [] }
            return state.sweepEnded()
        }
        withExtendedLifetime(removed) {}  // released here, outside the lock
    }

    func enqueueNotice(_ notice: @escaping @Sendable () -> Void) {
        let schedule = state.withLock { state in
            state.append(.notice(notice))
            return markScheduledIfNeeded(&state)
        }
        if schedule { scheduleDrain() }
    }

    private func markScheduledIfNeeded(_ state: inout QueueState) -> Bool {
        if case .manual = target { return false }
        guard !state.isScheduled, !state.isDraining, !state.items.isEmpty else { return false }
        state.isScheduled = true
        return true
    }

    private func scheduleDrain() {
        switch target {
        case .main: DispatchQueue.main.async { self.drain() }
        case .dispatch(let queue): queue.async { self.drain() }
        case .manual: break
        }
    }
}

// `@unchecked`: the model object is carried only to keep it alive until the delivery, which
// hands it to the callback on the target's thread, as the setting thread handed it over.
private enum Item: @unchecked Sendable {
    /// The pending delivery of one subscription (the usual case: no array to allocate), and
    /// its root, which the item keeps alive.
    case delivery(Subscription, ObservableModelBase?)
    /// Pending deliveries of subscriptions sharing one root, which the item keeps alive.
    case deliveries([Subscription], ObservableModelBase?)
    case notice(@Sendable () -> Void)
}

/// A list of items whose storage is managed by hand, so that a drain can move every item out
/// and keep the emptied buffer without destroying anything (see `CoalescingQueue.drain()`).
/// Not an owner by itself: a list that goes away must be `free()`d (the queue's `deinit`, and
/// `QueueState`'s `takeItems`, `reuse` and `sweepEnded` for the lists they drop).
private struct ItemList {
    private(set) var base: UnsafeMutablePointer<Item>?
    private(set) var count = 0
    private(set) var capacity = 0

    var isEmpty: Bool { count == 0 }

    /// The items, borrowed: valid until the list next changes.
    var elements: UnsafeBufferPointer<Item> { UnsafeBufferPointer(start: base, count: count) }

    mutating func append(_ item: consuming Item) {
        if count == capacity { reserve(Swift.max(4, capacity * 2)) }  // 96 bytes first: queues are many
        (base.unsafelyUnwrapped + count).initialize(to: item)
        count += 1
    }

    mutating func reserve(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        let grown = UnsafeMutablePointer<Item>.allocate(capacity: minimumCapacity)
        if let base {
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = grown
        capacity = minimumCapacity
    }

    /// Puts `newItems` (copied) before the list's items.
    mutating func prepend(_ newItems: [Item]) {
        guard !newItems.isEmpty else { return }
        reserve(count + newItems.count)
        let base = base.unsafelyUnwrapped
        (base + newItems.count).moveInitialize(from: base, count: count)  // the regions may overlap
        _ = UnsafeMutableBufferPointer(start: base, count: newItems.count).initialize(fromContentsOf: newItems)
        count += newItems.count
    }

    /// Empties the list, keeping its capacity, and returns its items' slots, still initialized:
    /// the caller must move every item out before the list changes again.
    mutating func removeAllMoving() -> UnsafeMutableBufferPointer<Item> {
        defer { count = 0 }
        return UnsafeMutableBufferPointer(start: base, count: count)
    }

    /// Destroys the items and frees the storage.
    mutating func free() {
        guard let base else { return }
        base.deinitialize(count: count)
        base.deallocate()
        self = ItemList()
    }
}

private struct QueueState {
    private(set) var items = ItemList()
    /// Subscriptions in `items`, and how many of them have ended since the last sweep (an
    /// estimate: a subscription ending while a drain holds it is counted too).
    private(set) var queued = 0
    var ended = 0
    private(set) var notices = 0
    var isScheduled = false
    var isDraining = false
    var drainCount: UInt64 = 0
    var drainDidEndHook: (@Sendable () -> Void)?

    /// Consuming: the caller's new item moves into the list (borrowed, it was copied in,
    /// retaining its subscription and root again, and the caller's released them after).
    mutating func append(_ item: consuming Item) {
        count(item, sign: 1)
        items.append(item)
    }

    /// Appends `newItems`, moving them out: the memory is left uninitialized.
    mutating func append(moving newItems: UnsafeMutableBufferPointer<Item>) {
        for index in newItems.indices {
            let item = newItems.moveElement(from: index)
            count(item, sign: 1)
            items.append(item)
        }
    }

    /// Puts `newItems` before the items (a drain's deferred deliveries).
    mutating func prepend(_ newItems: [Item]) {
        for item in newItems { count(item, sign: 1) }
        items.prepend(newItems)
    }

    /// The queue's `deinit`: destroys the items and frees their storage.
    mutating func free() {
        items.free()
    }

    /// Deliveries of active subscriptions still in `items`, and notices. Exact: `ended` may
    /// also count subscriptions of the batch a drain is delivering, which are not in `items`.
    var pendingCount: Int {
        guard ended > 0 else { return queued + notices }
        var live = 0
        for item in items.elements {
            switch item {
            case .delivery(let subscription, _): if subscription.isActive { live += 1 }
            case .deliveries(let subscriptions, _):
                for subscription in subscriptions where subscription.isActive { live += 1 }
            case .notice: break
            }
        }
        return live + notices
    }

    /// Takes every item, leaving `spare` (empty, with the capacity of an earlier batch of
    /// `used` items) in their place if `keeps` says so, so that the next tick's enqueues don't
    /// regrow the list.
    mutating func takeItems(leaving spare: inout ItemList, used: Int) -> ItemList {
        if !Self.keeps(capacity: spare.capacity, used: used) { spare.free() }  // empty: frees the buffer
        let taken = items
        items = spare
        spare = ItemList()
        queued = 0
        ended = 0
        notices = 0
        return taken
    }

    /// A drain's buffer of at most this many items is always kept for the next batch.
    static let reusedCapacity = 1_024

    /// The kept-list policy: a drain hands its last batch's buffer back for reuse if it holds
    /// at most `reusedCapacity` items, or if that batch filled more than a quarter of it. A
    /// steady tick of any size then grows the list once, not every tick (W17's ≈ 1,600
    /// deliveries a tick regrew it through 12 sizes each time); a burst's buffer is freed by
    /// the first drain whose batch used a quarter of it or less, so an idle queue keeps at most
    /// four times its last batch (24 bytes an item).
    static func keeps(capacity: Int, used: Int) -> Bool {
        capacity <= reusedCapacity || used > capacity / 4
    }

    /// Puts `spare` (emptied, after a batch of `used` items) back as the items' buffer if they
    /// have none and the policy keeps it; frees it otherwise.
    mutating func reuse(_ spare: inout ItemList, used: Int) {
        guard items.isEmpty, items.capacity == 0, Self.keeps(capacity: spare.capacity, used: used) else {
            spare.free()  // empty: frees the buffer
            return
        }
        swap(&items, &spare)  // `spare` gets the items' empty list, which has no buffer
    }

    /// Tests only: the capacity of the (empty or filling) items' buffer.
    var itemsCapacity: Int { items.capacity }

    /// Drops the deliveries of ended subscriptions in one pass and returns what was dropped,
    /// to be released outside the lock.
    mutating func sweepEnded() -> [Item] {
        var removed: [Item] = []
        var kept = ItemList()
        kept.reserve(items.count)
        queued = 0
        for item in items.elements {
            if case .delivery(let subscription, _) = item {
                if subscription.isActive {
                    kept.append(item)
                    queued += 1
                } else {
                    removed.append(item)
                }
                continue
            }
            guard case .deliveries(let subscriptions, let root) = item else {
                kept.append(item)
                continue
            }
            let live = subscriptions.filter(\.isActive)
            if live.count < subscriptions.count { removed.append(item) }
            if !live.isEmpty {
                kept.append(.deliveries(live, root))
                queued += live.count
            }
        }
        items.free()
        items = kept
        ended = 0
        return removed
    }

    private mutating func count(_ item: Item, sign: Int) {
        switch item {
        case .delivery: queued += sign
        case .deliveries(let subscriptions, _): queued += sign * subscriptions.count
        case .notice: notices += sign
        }
    }
}
