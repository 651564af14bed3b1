import Synchronization

/// The state behind one observation: what it watches, where it is attached, and its callback.
///
/// A token owns its subscription and ends it on `deinit` or `invalidate()`. Observer-lifetime
/// observations (`tell`) are owned by the observed object's registry instead. Registries
/// reference subscriptions unretained (see `WeakSet`); the coalescing queue retains a
/// subscription only while a delivery is pending.
///
/// A plain single-property token has no lock of its own: one atomic word, `flags`, holds
/// whether a delivery is pending, whether the subscription ended, and how many deliveries are
/// running. Everything else (a path's edges, old values, remembered endpoints) lives in
/// `SubscriptionExtras`, under its lock, allocated only for the tokens that need it.
///
/// The callback is released by whoever sees the subscription ended with no delivery running:
/// `end()` itself, or else the last delivery to finish. So a callback never runs after `end()`
/// returns (unless it had already started on another thread), and the closure is released as
/// soon as nothing runs it.
///
/// Locking rule: the extras' lock may be held while taking a registry lock, never the other
/// way round; no user code and no release of a user object happens under either.
@usableFromInline
class Subscription: @unchecked Sendable {  // see the rules above
    /// What a subscription watches.
    @usableFromInline
    enum Target {
        /// One typed key path on the root: a single edge, on the root, never retargeted. Its
        /// serial and slot are kept inline.
        case property
        /// Everything else: several paths, paths through other objects, names, `*`.
        case paths([ObservedPath])

        /// One typed key path; `.endpointChanges` compares values read through it, which only
        /// path targets do. Inlined, so that the entry points' usual options (a literal) make
        /// `.property` without a call.
        @inlinable @inline(__always)
        static func key(_ key: TypedKey, options: ObservationOptions) -> Target {
            options.contains(.endpointChanges) ? endpoint(key) : .property
        }

        /// `.endpointChanges`' target: a one-step path.
        @usableFromInline
        static func endpoint(_ key: TypedKey) -> Target {
            .paths([ObservedPath(step: .key(key))])
        }

        /// `key(_:options:)` for a key not made yet: made only for `.endpointChanges`.
        @inlinable @inline(__always)
        static func key(_ source: _KeySource, options: ObservationOptions) -> Target {
            options.contains(.endpointChanges) ? endpoint(source) : .property
        }

        @usableFromInline
        static func endpoint(_ source: _KeySource) -> Target {
            endpoint(source.key)
        }

        /// Several typed key paths of the root.
        @usableFromInline
        static func keys(_ keys: [TypedKey]) -> Target {
            .paths(keys.map { ObservedPath(step: .key($0)) })
        }
    }

    /// Bits of `flags`.
    ///
    /// A subscription is in its queue while `queued` is set: whoever sets it (0 → 1) enqueues
    /// it, and the delivery clears it with `pending` and `checking`. Two bits say why it is
    /// there — `pending`, something it watches changed; `checking`, a computed value it watches
    /// may have — so that a setter marks it with a single-bit operation, and only the first
    /// mark of a tick (which finds `pending` clear) takes `queued` as well.
    private enum Flag {
        /// Pending because something it watches changed (a set, a retarget, `schedule()`): the
        /// delivery runs whatever computed values turn out to be.
        static let pending: UInt32 = 1 << 0
        /// Change tokens: this tick's old value is recorded.
        static let hasOldValue: UInt32 = 1 << 1
        static let ended: UInt32 = 1 << 2
        /// Path tokens: an object on a path deinitialized; walk the paths again before delivering.
        static let needsWalk: UInt32 = 1 << 3
        /// Pending because a computed value it watches may have changed: the delivery compares
        /// (`syncComputedEdges`) and runs the callback only for a real change.
        static let checking: UInt32 = 1 << 4
        /// In its queue (see above).
        static let queued: UInt32 = 1 << 5
        /// Has (or had) an edge on a computed value or on `*`: deliveries bring those values up to
        /// date and remember the versions seen (`syncComputedEdges`). Never cleared.
        static let computedEdges: UInt32 = 1 << 6
        /// A computed property's dependencies (`SyntheticDependencies`): its value is invalid
        /// and no computation of it runs, so a change of a dependency has nothing to invalidate.
        /// Set and cleared under the computed state's lock.
        static let stale: UInt32 = 1 << 7
        /// Deliveries running count in the bits from here up.
        static let delivering: UInt32 = 1 << 8
    }

    final let queue: CoalescingQueue
    /// The root's registry, which also stands for the root: its ID, type, a weak reference, and
    /// an unretained one for queued deliveries (which keep the root alive).
    final let rootRegistry: Registry
    /// Present for `.paths` targets and change tokens: in this object's own allocation for the
    /// subclasses that keep them in place (set by `placeExtras(_:)` right after `init`), else in
    /// a block of their own that `deinit` frees (see `SubscriptionExtras`). Never changed after
    /// the subclass's `init`.
    @exclusivity(unchecked) final private(set) var extras: SubscriptionExtras?
    /// The drain that last delivered this subscription (0: none; drain IDs start at 1). Only
    /// drains of `queue` touch it, and they never overlap.
    @exclusivity(unchecked) private var firedInDrain: UInt64 = 0
    /// `.property` targets: the edge's serial and slot in the root's registry, written by
    /// `start` before the token is handed out (slot -1: not attached) and read by `end()`.
    @exclusivity(unchecked) private var propertySerial: UInt64 = 0
    final let site: CreationSite
    final let isImmediate: Bool
    final let wantsEndpoints: Bool
    /// Whether to deliver once right after starting (`.initial`).
    final let isInitial: Bool
    /// Whether a live observer is required for delivery (the `observer:` variants).
    final let hasObserver: Bool
    /// Whether the setter should hand over the old value (single-property change tokens).
    final let wantsOldValue: Bool
    /// A single-property token delivered through the queue without old values: a setter makes
    /// it pending under the registry lock with one atomic operation, and nothing else.
    final let isPlain: Bool
    /// Whether this is a `.property` target (started with `start(root:key:)`).
    final let isProperty: Bool
    /// Whether deliveries compare the computed values it watches with what it saw last (every
    /// token; not a computed property's own dependencies, which only invalidate).
    final let comparesComputedValues: Bool
    /// Whether a change asks `admitsChange()` before it makes this subscription pending
    /// (bindings that write models: see `LinkSubscription`). Such a subscription is never plain.
    final let screensChanges: Bool
    /// Whether `extras` is a block of its own, which `deinit` frees.
    private let ownsExtrasBlock: Bool
    @exclusivity(unchecked) private var propertySlot: Int32 = -1
    final let flags = Atomic<UInt32>(0)
    /// `.property` targets rooted at an object that deinitialized: the property's index in the
    /// class's table (which names it), stored by the root's deinit before the token is told;
    /// -1 until then. Kept here, in what was padding after `flags`, where the root's registry
    /// kept a list of names that cost an allocation per model torn down.
    private let nameIndexAfterDeinit = Atomic<Int32>(-1)

    /// Subclasses add the callback, stored with its own type (see `_ModelSubscription`), and
    /// pass the root's registry (they borrow the root: a retain of a model goes through its
    /// side table).
    init(
        rootRegistry: Registry,
        hasObserver: Bool,
        target: Target,
        options: ObservationOptions,
        queue: CoalescingQueue,
        wantsOldValue: Bool,
        site: CreationSite,
        comparesComputedValues: Bool = true,
        screensChanges: Bool = false,
        keepsExtrasInPlace: Bool = false
    ) {
        // The extras first: with no call after the references are stored, storing them moves
        // the arguments (a call in between made each a retain and a release).
        switch target {
        case .property:
            isProperty = true
            extras =
                wantsOldValue || options.contains(.endpointChanges) ? SubscriptionExtras.allocate(paths: []) : nil
        case .paths(let paths):
            isProperty = false
            // A subclass that keeps them in place places them right after this `init`.
            extras = keepsExtrasInPlace ? nil : SubscriptionExtras.allocate(paths: paths)
        }
        ownsExtrasBlock = extras != nil
        self.comparesComputedValues = comparesComputedValues
        self.queue = queue
        self.screensChanges = screensChanges
        self.rootRegistry = rootRegistry
        self.site = site
        isImmediate = options.contains(.immediate)
        wantsEndpoints = options.contains(.endpointChanges)
        isInitial = options.contains(.initial)
        self.hasObserver = hasObserver
        self.wantsOldValue = wantsOldValue
        isPlain = isProperty && !isImmediate && !wantsOldValue && !wantsEndpoints && !screensChanges
        #if DEBUG
            LiveCounters.subscriptions.add(1, ordering: .relaxed)
        #endif
    }

    deinit {
        if ownsExtrasBlock { extras.unsafelyUnwrapped.deallocate() }
        #if DEBUG
            LiveCounters.subscriptions.subtract(1, ordering: .relaxed)
        #endif
    }

    /// For the subclasses that keep their extras in place (`keepsExtrasInPlace`), right after
    /// `init`: `storage` is their stored property, which lives (and stays where it is) as long
    /// as this object; so does every use of `extras`.
    final func placeExtras(_ storage: UnsafeMutablePointer<SubscriptionExtrasStorage>) {
        extras = SubscriptionExtras(storage)
    }

    final var rootID: ObjectIdentifier { rootRegistry.ownerID }
    final var rootTypeName: String { String(describing: rootRegistry.ownerType) }
    final var isActive: Bool { flags.load(ordering: .acquiring) & Flag.ended == 0 }
    final var root: ObservableModelBase? { rootRegistry.weakOwner }
    /// The observer's identity while it is alive (a dead one can't be asked about).
    final var observerID: ObjectIdentifier? { loadObserver().map(ObjectIdentifier.init) }

    /// True when an observer was given and is gone.
    final var observerIsGone: Bool { hasObserver && loadObserver() == nil }

    /// The observer, if one was given and is alive. Subclasses that take an observer hold it
    /// without keeping it alive (`WeakReference`); the others hold nothing.
    func loadObserver() -> AnyObject? { nil }

    /// The observer's class, if one was given; subclasses that hold a `WeakReference` read it
    /// without retaining the observer (which may then be one whose deinit has begun), so that a
    /// root's deinit asks about it without a retain and a release.
    func observerType() -> AnyObject.Type? { loadObserver().map { type(of: $0) } }

    /// The observed paths of a `.paths` target.
    final var paths: [ObservedPath] { extras?.paths ?? [] }

    /// For the debugging aids: the subscription that stands for the token this one is part of
    /// (the other subscriptions of a binding or a `whichOf` token name its main one).
    var mainSubscription: Subscription { self }

    /// For the debugging aids: what the token watches, when neither its property nor its paths
    /// say it (a tracked token's key path, a will-change token's object).
    var writtenDescription: String? { nil }

    /// For the debugging aids: whether other subscriptions of this token (a binding's second
    /// side or further sources) deliver it too, so that it has no single place to stop at.
    var hasDebugParts: Bool { false }

    // MARK: Attaching

    /// Attaches a `.property` target's edge through `key`. Returns false (and ends) when the key
    /// path does not name an `@Observed` property of the root.
    final func start(root: ObservableModelBase, key: TypedKey) -> Bool {
        startInline(root: root, key: key)
    }

    /// `start(root:key:)`, inlined where a token is made (`ObservableModelBase._start`): one
    /// call fewer per token.
    @inline(__always)
    final func startInline(root: ObservableModelBase, key: TypedKey) -> Bool {
        start(root: root, madeKey: key, site: 0)
    }

    /// Attaches a made key: the known key path (the usual case) resolved and attached under
    /// one lock, else resolved on `root` first. A non-zero `site` is remembered as making it.
    @inline(__always)
    private func start(root: ObservableModelBase, madeKey key: TypedKey, site: UInt) -> Bool {
        var hooks = ObservationStateHooks()
        var attached = rootRegistry.attach(self, keyPath: key.keyPath, site: site, hooks: &hooks)
        if attached == nil, let serial = key.resolveSerial(on: root),
            let slot = rootRegistry.attach(self, serial: serial, isLeaf: true, hooks: &hooks)
        {
            attached = (serial, slot)
        }
        guard let attached else {
            end()
            return false
        }
        propertySerial = attached.serial
        propertySlot = Int32(attached.slot)
        hooks.run()
        // A computed value: what it is now is what this token saw at its registration.
        if Registry.isComputed(attached.serial) { _ = syncComputedEdges(root: root) }
        return true
    }

    /// `startInline(root:key:)` for a key not made yet (`ObservableModelBase._start`): a key
    /// path resolved before at its site (on this object, or another of its class) attaches
    /// with one lock round trip and without the key path object; otherwise the key is made
    /// and attached as `startInline(root:key:)` does, and the site remembered.
    @inline(__always)
    final func startInline(root: ObservableModelBase, source: _KeySource) -> Bool {
        let site = source.site
        // The usual case holds no hooks: the registry says whether the owner wants to hear of
        // the property becoming observed (owners adopting `ObservationStateObserving`).
        guard site != 0, let attached = rootRegistry.attachReportingTransition(self, site: site) else {
            return startMadeKey(root: root, source: source, site: site)
        }
        propertySerial = attached.serial
        // A member list's index: 2³¹ subscriptions on one property would take ≈ 200 GB, so the
        // conversion needs no check (its two compares and trap are one token's fifth percent).
        propertySlot = Int32(truncatingIfNeeded: attached.slot)
        if attached.transition { reportObserved(serial: attached.serial) }
        // A computed value: what it is now is what this token saw at its registration.
        if Registry.isComputed(attached.serial) { _ = syncComputedEdges(root: root) }
        return true
    }

    /// Tells the root (if it adopts `ObservationStateObserving`) that the property `serial`
    /// became observed, after the lock.
    @inline(never)
    private func reportObserved(serial: UInt64) {
        var hooks = ObservationStateHooks()
        hooks.append(registry: rootRegistry, serial: serial, isObserved: true)
        hooks.run()
    }

    /// The rest of `startInline(root:source:)`, out of line: the key made, then attached as
    /// `startInline(root:key:)` attaches it.
    @inline(never)
    private func startMadeKey(root: ObservableModelBase, source: _KeySource, site: UInt) -> Bool {
        start(root: root, madeKey: source.key, site: site)
    }

    /// Attaches a `.property` target's edge to the root's storage `serial` (a breakpoint on
    /// another token's property). Returns false (and ends) when the root is gone.
    final func start(serial: UInt64) -> Bool {
        var hooks = ObservationStateHooks()
        guard let slot = rootRegistry.attach(self, serial: serial, isLeaf: true, hooks: &hooks) else {
            end()
            return false
        }
        propertySerial = serial
        propertySlot = Int32(slot)
        hooks.run()
        return true
    }

    /// Attaches a `.paths` target's initial edges. Returns false (and ends) when a path's first
    /// step does not name an `@Observed` property of the root.
    final func start(root: ObservableModelBase) -> Bool {
        var edges = [ObservedPath.EdgeKey]()
        var endpoints: [ObservedPath.Endpoint] = []
        for (index, path) in paths.enumerated() {
            guard let endpoint = path.walk(from: root, pathIndex: index, into: &edges, needsEndpoint: wantsEndpoints)
            else {
                end()
                return false
            }
            if wantsEndpoints { endpoints.append(endpoint) }
        }
        guard let extras else { return false }
        // "Ended" is checked under the lock `end()` takes the edges under, so an ended
        // subscription (`tell` hands it to the registry before this) never keeps an edge.
        let hooks = extras.withLock { state in
            var hooks = ObservationStateHooks()
            guard isActive else { return hooks }
            if !endpoints.isEmpty { state.lastEndpoints = endpoints.map(StoredEndpoint.init) }
            edges.withUnsafeBufferPointer { edges in
                replaceEdges(in: &state, where: { _ in true }, with: edges, hooks: &hooks)
            }
            return hooks
        }
        hooks.run()
        if hasComputedEdges { _ = syncComputedEdges(root: root) }
        return true
    }

    // MARK: Ending

    /// Ends the observation: no callback starts after this returns, the closure is released
    /// (by the running delivery, if one is running on another thread), and every edge is
    /// detached. Idempotent and safe from any thread.
    ///
    /// Out of line: inlined into `deliverNow` (whose frame every level of an `.immediate`
    /// cascade pays, `CascadeDepthTests`), it doubled that frame, 64 → 128 bytes.
    @inline(never)
    final func end() {
        end(rootIsGone: false)
    }

    /// `end()`; with `rootIsGone`, called by the root's deinit (`objectDidDeinit`), which took
    /// every member out of the root's registry before telling them (`Registry.ownerDidDeinit`):
    /// an edge there has nothing to detach (`detach` would find the registry dead and return),
    /// so it is skipped.
    @inline(__always)
    private func end(rootIsGone: Bool) {
        let before = flags.bitwiseOr(Flag.ended, ordering: .acquiringAndReleasing).oldValue
        guard before & Flag.ended == 0 else { return }
        // A pending delivery leaves the queue (soon, for many at once), with the root it kept
        // alive.
        if before & Flag.queued != 0 { queue.subscriptionDidEnd() }
        var hooks = ObservationStateHooks()
        if !rootIsGone, isProperty, propertySlot >= 0 {
            // The edge was set before the token was handed out and never changes.
            rootRegistry.detach(serial: propertySerial, slot: Int(propertySlot), hooks: &hooks)
        }
        if before >> 8 == 0 { releaseCallback() }  // no delivery running: release the closure now
        // Edges on a dead root's registry are not detached (see above).
        if let extras { extras.end(skipping: rootIsGone ? rootRegistry : nil, hooks: &hooks) }
        hooks.run()
    }

    /// Called by a registry whose object deinitialized while this subscription had edges there.
    func objectDidDeinit(_ id: ObjectIdentifier) {
        if id == rootID {
            let wasActive = isActive
            end(rootIsGone: true)
            if wasActive { noticeRootDeinit() }
        } else {
            // An intermediate object vanished: the path now ends earlier, which is a change. Its
            // deinit may run inside a write of the property that held it, where nothing may be
            // read: the delivery walks the paths again first (also for `.immediate` tokens).
            flags.bitwiseOr(Flag.needsWalk, ordering: .acquiringAndReleasing)
            schedule()
        }
    }

    private func noticeRootDeinit() {
        // The class first (a view model, usually: not a listener), without retaining the observer.
        guard let type = observerType(), Self.observesDeinits(type), let object = loadObserver() else { return }
        // Called from the root's deinit after its registry remembered the names (properties)
        // and this subscription its description (paths).
        let observed = pathDescription.split(separator: ", ").map(String.init)
        let notice = ObservedObjectDeinitNotice(
            objectID: rootID, typeName: rootTypeName, observedPaths: observed, site: site)
        let listener = WeakReference(object)
        // Queued even for `.immediate` tokens: the root's deinit may run inside a property write
        // (the write released it), where no user code may run.
        queue.enqueueNotice {
            (listener.load() as? ObservedObjectDeinitObserver)?.observedObjectDidDeinit(notice)
        }
    }

    /// Whether objects of `type` adopt `ObservedObjectDeinitObserver`. A conformance check
    /// costs ≈ 400 instructions; a model's deinit asks it for each of its tokens' observers,
    /// which are usually of one class (view models), so the last class's answer is kept.
    private static func observesDeinits(_ type: AnyObject.Type) -> Bool {
        deinitObserverAnswer.answer(for: type) { $0 is any ObservedObjectDeinitObserver.Type }
    }

    private static let deinitObserverAnswer = LastClassAnswer()

    // MARK: Changes

    /// Whether a delivery is still pending. A read-modify-write rather than a load: it orders
    /// the setter's store of the new value before the drain's exchange that clears the flag, so
    /// either that delivery sees the new value or this returns false and the setter re-queues.
    /// Pending for a change, that is (a computed value's invalidation alone leaves it to be
    /// marked: see `Flag.checking`).
    @inline(__always)
    final func isStillPending() -> Bool {
        flags.bitwiseOr(0, ordering: .acquiringAndReleasing).oldValue & Flag.pending != 0
    }

    /// Whether the subscription is pending, read without a write (`isStillPending` orders it
    /// with deliveries; a settled stamp's epoch check does that instead).
    final var isPending: Bool {
        flags.load(ordering: .acquiring) & Flag.pending != 0
    }

    /// Marks the subscription pending. Returns true when it was not pending before, which makes
    /// the caller responsible for enqueueing it. Like `isStillPending`, a read-modify-write.
    @inline(__always)
    final func markPending() -> Bool {
        // One bit, so the usual case (pending already) is one `lock bts`.
        let wasPending = flags.bitwiseOr(Flag.pending, ordering: .acquiringAndReleasing).oldValue & Flag.pending != 0
        if _fastPath(wasPending) { return false }
        return takeQueued()
    }

    /// Sets `queued`; returns whether this call set it (and must enqueue). Out of line: once
    /// per subscription per tick.
    @inline(never)
    private func takeQueued() -> Bool {
        flags.bitwiseOr(Flag.queued, ordering: .acquiringAndReleasing).oldValue & Flag.queued == 0
    }

    /// A computed property's dependencies: its value is invalid and no computation of it runs
    /// (under the computed state's lock).
    final func markStale() {
        flags.bitwiseOr(Flag.stale, ordering: .acquiringAndReleasing)
    }

    /// A computation of the computed property starts (under the computed state's lock).
    /// Returns whether the bit was set: a set may have marked its property settled on the
    /// strength of it (`SettledMark`), which the caller then breaks before reading.
    @discardableResult
    final func clearStale() -> Bool {
        guard flags.load(ordering: .relaxed) & Flag.stale != 0 else { return false }
        flags.bitwiseAnd(~Flag.stale, ordering: .acquiringAndReleasing)
        return true
    }

    /// Whether a change of a dependency has nothing to invalidate (`markStale`). A
    /// read-modify-write, like `isStillPending`: a computation that starts after it (and clears
    /// the bit) sees the setter's store.
    @inline(__always)
    final func isStillStale() -> Bool {
        flags.bitwiseOr(0, ordering: .acquiringAndReleasing).oldValue & Flag.stale != 0
    }

    /// Marks the subscription pending because a computed value it watches may have changed:
    /// its delivery compares (`syncComputedEdges`) and runs the callback only for a real
    /// change, unless something else makes it pending for good meanwhile. Returns true when it
    /// was not pending before (the caller enqueues it).
    final func markCheck() -> Bool {
        guard flags.bitwiseOr(Flag.checking, ordering: .acquiringAndReleasing).oldValue & Flag.checking == 0 else {
            return false
        }
        return takeQueued()
    }

    /// Also tells deliveries to walk the paths again first (a computed middle step may have a new
    /// value: read at the delivery, not inside the setter that invalidated it).
    final func markNeedsWalk() {
        flags.bitwiseOr(Flag.needsWalk, ordering: .acquiringAndReleasing)
    }

    /// Whether it has (or had) an edge on a computed value or on `*`.
    final var hasComputedEdges: Bool {
        flags.load(ordering: .relaxed) & Flag.computedEdges != 0
    }

    /// Called by a registry attaching an edge on a computed value or on `*`.
    final func noteComputedEdge() {
        guard comparesComputedValues, flags.load(ordering: .relaxed) & Flag.computedEdges == 0 else { return }
        flags.bitwiseOr(Flag.computedEdges, ordering: .acquiringAndReleasing)
    }

    /// Asked, for a subscription that `screensChanges` and is not pending, before a change of
    /// what it watches makes it pending: false keeps it from becoming pending (it dealt with the
    /// change itself). Called on the changing thread, after the store, with no lock held; it
    /// does bookkeeping only, never user code.
    func admitsChange() -> Bool { true }

    /// `markPending()` for a change: a subscription that screens changes and is not pending
    /// asks `admitsChange()` first. The other subscriptions pay one test of a constant.
    @inline(__always)
    final func markPendingForChange() -> Bool {
        if screensChanges { return markPendingIfAdmitted() }
        return markPending()
    }

    /// The screening half of `markPendingForChange()`, out of line: the setter's loop over a
    /// property's subscriptions stays as small as before.
    @inline(never)
    private func markPendingIfAdmitted() -> Bool {
        if !isPending, !admitsChange() { return false }
        return markPending()
    }

    /// Whether `object` is this subscription's root.
    @inline(__always)
    final func isRoot(_ object: ObservableModelBase) -> Bool {
        ObjectIdentifier(object) == rootID
    }

    /// Keeps `oldValue` as this tick's old value unless one is recorded already.
    final func recordOldValue(_ oldValue: () -> Any?) {
        guard wantsOldValue,
            flags.bitwiseOr(Flag.hasOldValue, ordering: .acquiringAndReleasing).oldValue
                & Flag.hasOldValue == 0
        else { return }
        storeOldValue(oldValue())
    }

    /// The store of `recordOldValue`, out of line: the setter's scan of a property's tokens,
    /// which inlines `recordOldValue`, stays as small as it was when the old value was a field
    /// of the extras (it is in `SubscriptionExtras.Rare` now).
    @inline(never)
    private func storeOldValue(_ value: Any?) {
        guard let extras else { return }
        let replaced = extras.withLock { state in
            defer { state.oldValue = value }
            return state.oldValue
        }
        withExtendedLifetime(replaced) {}  // released outside the lock
    }

    /// Whether a setter must still call this pending subscription: only for its old value.
    @inline(__always)
    final var needsOldValue: Bool {
        wantsOldValue && flags.load(ordering: .acquiring) & Flag.hasOldValue == 0
    }

    /// A property this subscription watches changed (or a path object vanished).
    final func propertyDidChange(changedObject: ObservableModelBase?, oldValue: () -> Any?) {
        if isImmediate {
            deliverNow(oldValue: oldValue(), isChange: true)
        } else if markPendingForChange() {
            if changedObject != nil { recordOldValue(oldValue) }
            guard let root = changedObject.flatMap({ isRoot($0) ? $0 : nil }) ?? rootRegistry.weakOwner else {
                return
            }
            queue.enqueue(self, retaining: root)
        } else if needsOldValue, changedObject != nil {
            recordOldValue(oldValue)
        }
    }

    // MARK: Delivering

    enum Outcome {
        case delivered
        case skipped
        /// Already delivered in this drain; stays pending for the next tick.
        case deferred
    }

    /// Counts a delivery in, unless the subscription ended (or, for a queued delivery — when
    /// `clearing` includes `Flag.queued` — is not pending any more: a mark that lost a race
    /// with the previous delivery queued it; it leaves the queue); clears the bits in
    /// `clearing`. Returns the flags before, or nil.
    @inline(__always)
    private func beginDelivery(clearing: UInt32) -> UInt32? {
        var current = flags.load(ordering: .relaxed)
        while true {
            if current & Flag.ended != 0 { return nil }
            var desired = (current & ~clearing) &+ Flag.delivering
            let leaves = clearing & Flag.queued != 0 && current & (Flag.pending | Flag.checking) == 0
            if leaves { desired = current & ~Flag.queued }
            let (exchanged, original) = flags.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return leaves ? nil : current }
            current = original
        }
    }

    /// What a queued delivery clears.
    private static var queuedBits: UInt32 { Flag.pending | Flag.checking | Flag.queued }

    /// Counts a delivery out; the last one out after `end()` releases the closure.
    @inline(__always)
    private func finishDelivery() {
        let before = flags.wrappingSubtract(Flag.delivering, ordering: .acquiringAndReleasing).oldValue
        if before & Flag.ended != 0, before >> 8 == 1 { releaseCallback() }
    }

    /// Delivers one pending change from a drain of `queue`, which keeps the root alive.
    final func deliver(drainID: UInt64) -> Outcome {
        if firedInDrain == drainID { return isActive ? .deferred : .skipped }
        if !isProperty, flags.load(ordering: .relaxed) & Flag.needsWalk != 0,
            flags.bitwiseAnd(~Flag.needsWalk, ordering: .acquiringAndReleasing).oldValue & Flag.needsWalk != 0
        {
            // The queued item keeps the root alive.
            rootRegistry.unretainedOwner._withUnsafeGuaranteedRef { walkPathsAgain(root: $0) }
        }
        if wantsOldValue { return deliverChange(drainID: drainID) }
        // The common case, in its own path: no old value to carry (an `Any?` costs a copy and
        // a destroy per delivery).
        guard let before = beginDelivery(clearing: Self.queuedBits) else { return .skipped }
        if before & Flag.computedEdges != 0 {
            // Computed values are brought up to date now, outside every lock; a token made
            // pending only by their invalidation runs only if one changed for it.
            let changed = rootRegistry.unretainedOwner._withUnsafeGuaranteedRef { syncComputedEdges(root: $0) }
            if !changed, before & Flag.pending == 0 {
                finishDelivery()
                return .skipped
            }
        }
        firedInDrain = drainID
        defer { finishDelivery() }
        let outcome = finishDelivering { observer, root in invokeQueued(observer: observer, root: root) }
        // No callback ran (an unchanged value or endpoint): a later change in this drain may
        // still run it in this drain. 0, not the value before: only `== drainID` is ever asked
        // of it, and the one before was not this drain's (checked on entry); a value kept
        // across the callback cost the drain's loop a register (W5 +4 per callback).
        if outcome == .skipped { firedInDrain = 0 }
        return outcome
    }

    /// `deliver` for change tokens, which take this tick's old value along.
    private func deliverChange(drainID: UInt64) -> Outcome {
        guard let extras else { return .skipped }
        var oldValue: Any?
        // Clearing the old value and the pending flag together, under the lock that guards
        // the old value, so a setter either joins this delivery or records a fresh one.
        let began = extras.withLock { state -> UInt32? in
            guard let before = beginDelivery(clearing: Self.queuedBits | Flag.hasOldValue) else {
                return nil
            }
            oldValue = state.oldValue.take()
            return before
        }
        guard let before = began else { return .skipped }
        if before & Flag.computedEdges != 0 {
            var seenBefore: Any?
            let changed = rootRegistry.unretainedOwner._withUnsafeGuaranteedRef {
                syncComputedEdges(root: $0, oldValue: &seenBefore)
            }
            if !changed, before & Flag.pending == 0 {
                finishDelivery()
                return .skipped
            }
            // A computed value's old value is the one this token saw.
            if oldValue == nil { oldValue = seenBefore }
        }
        firedInDrain = drainID
        defer { finishDelivery() }
        let outcome = finishDelivering { observer, root in
            invoke(observer: observer, root: root, oldValue: oldValue)
            return true
        }
        if outcome == .skipped { firedInDrain = 0 }  // as in `deliver(drainID:)`
        return outcome
    }

    /// The rest of a queued delivery, counted in by `beginDelivery`.
    @inline(__always)
    private func finishDelivering(_ invoke: (AnyObject?, ObservableModelBase) -> Bool) -> Outcome {
        // Without an observer, a literal nil: a variable that stayed nil was released after
        // the call (a call to `swift_release` per delivery).
        guard hasObserver else { return finishDelivering(observer: nil, invoke) }
        // The observer must be alive; otherwise the token ends.
        guard let observer = loadObserver() else {
            end()
            return .skipped
        }
        return finishDelivering(observer: observer, invoke)
    }

    @inline(__always)
    private func finishDelivering(
        observer: AnyObject?, _ invoke: (AnyObject?, ObservableModelBase) -> Bool
    ) -> Outcome {
        return rootRegistry.unretainedOwner._withUnsafeGuaranteedRef { root in
            if wantsEndpoints {
                // Comparing endpoints runs user `==`; an invalidate() during it must still win.
                guard let endpoint = changedEndpoint(root: root), isActive else { return .skipped }
                // The callback gets the endpoint just compared, not a fresh read: a set racing
                // this delivery could otherwise show it a value that the next delivery, finding
                // the endpoint back where it was compared, would not correct.
                if !wantsOldValue {
                    self.invoke(observer: observer, root: root, endpoint: endpoint)
                    return .delivered
                }
            }
            return invoke(observer, root) ? .delivered : .skipped
        }
    }

    /// Runs the callback now on the calling thread, if the observation is active and both ends
    /// are alive. Used by immediate mode (`isChange`), and by `.initial` and `fire()`, which
    /// deliver even when `.endpointChanges` would see no change.
    @discardableResult
    final func deliverNow(oldValue: Any?, isChange: Bool) -> Bool {
        guard let root = rootRegistry.weakOwner else { return false }
        let observer = loadObserver()
        guard let before = beginDelivery(clearing: 0) else { return false }
        defer { finishDelivery() }
        guard !hasObserver || observer != nil else {
            end()
            return false
        }
        // What this delivery shows of computed values is what the token has seen now.
        if before & Flag.computedEdges != 0 { _ = syncComputedEdges(root: root) }
        if isChange, wantsEndpoints { return deliverEndpointChange(observer: observer, root: root, oldValue: oldValue) }
        invoke(observer: observer, root: root, oldValue: oldValue)
        return true
    }

    /// An `.immediate` token on a computed value whose input just changed, inside that input's
    /// setter (after its store and its locks): brings the value up to date and runs the
    /// callback if it differs from what this token saw.
    final func deliverComputedChangeNow() {
        guard let root = rootRegistry.weakOwner else { return }
        let observer = loadObserver()
        guard beginDelivery(clearing: 0) != nil else { return }
        defer { finishDelivery() }
        guard !hasObserver || observer != nil else {
            end()
            return
        }
        var seenBefore: Any?
        guard syncComputedEdges(root: root, oldValue: &seenBefore) else { return }
        if wantsEndpoints {
            _ = deliverEndpointChange(observer: observer, root: root, oldValue: seenBefore)
        } else {
            invoke(observer: observer, root: root, oldValue: seenBefore)
        }
    }

    // MARK: Computed values

    /// Brings the computed values this subscription watches up to date (computing those that
    /// are invalid, with no lock held) and records, for each of its edges on one, the version it
    /// sees now. Returns whether any differs from the version that edge saw before (an edge
    /// that never saw one counts as changed).
    @inline(never) @discardableResult
    final func syncComputedEdges(root: ObservableModelBase) -> Bool {
        var unused: Any?
        return syncComputedEdges(root: root, oldValue: &unused, wantsOldValue: false)
    }

    /// `syncComputedEdges(root:)`, also giving the value the first changed edge saw before.
    @inline(never)
    final func syncComputedEdges(root: ObservableModelBase, oldValue: inout Any?) -> Bool {
        syncComputedEdges(root: root, oldValue: &oldValue, wantsOldValue: true)
    }

    private func syncComputedEdges(root: ObservableModelBase, oldValue: inout Any?, wantsOldValue: Bool) -> Bool {
        if isProperty {
            guard propertySlot >= 0, Registry.isComputed(propertySerial) else { return false }
            return rootRegistry.syncSeen(
                owner: root, serial: propertySerial, slot: Int(propertySlot), oldValue: &oldValue,
                wantsOldValue: wantsOldValue)
        }
        // Borrowed: a `let` of this subscription, which the caller holds (a `guard let` copy
        // was retained and released).
        guard let extras else { return false }
        // Usually one such edge: kept inline, nothing allocated; its registry retained by hand
        // (a trivial element: the loop counts no references), released at the end — except the
        // root's registry, which this subscription holds (`rootRegistry`, a `let`) for as long
        // as it lives, and the caller holds this subscription: borrowed, no retain.
        let rootBorrowed = Unmanaged.passUnretained(rootRegistry)
        let edges = extras.withLock { state in
            var computed = SmallArray<(registry: Unmanaged<Registry>, serial: UInt64, slot: Int)>()
            state.edges.withUnsafeBufferPointer { edges in
                for edge in edges where Registry.isComputed(edge.serial) || edge.serial == PathStep.wildcardSerial {
                    let borrowed = Unmanaged.passUnretained(edge.registry)
                    let registry = borrowed.toOpaque() == rootBorrowed.toOpaque() ? rootBorrowed : borrowed.retain()
                    computed.append((registry, edge.serial, edge.slot))
                }
            }
            return computed
        }
        var changed = false
        for edge in edges {
            // Borrowed (the list's retain keeps it), and the root as the caller keeps it: strong
            // copies retained and released each once per edge.
            let edgeChanged = edge.registry._withUnsafeGuaranteedRef { registry -> Bool in
                if edge.registry.toOpaque() == rootBorrowed.toOpaque() {
                    return registry.syncSeen(
                        owner: root, serial: edge.serial, slot: edge.slot, oldValue: &oldValue,
                        wantsOldValue: wantsOldValue && !changed)
                }
                guard let owner = registry.weakOwner else { return false }
                return registry.syncSeen(
                    owner: owner, serial: edge.serial, slot: edge.slot, oldValue: &oldValue,
                    wantsOldValue: wantsOldValue && !changed)
            }
            changed = changed || edgeChanged
        }
        for edge in edges where edge.registry.toOpaque() != rootBorrowed.toOpaque() { edge.registry.release() }
        return changed
    }

    /// The `.endpointChanges` part of `deliverNow`, out of line: an `.immediate` cascade runs
    /// `deliverNow` once per level, so its frame is kept small (`CascadeDepthTests`).
    @inline(never)
    private func deliverEndpointChange(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) -> Bool {
        guard let endpoint = changedEndpoint(root: root), isActive else { return false }
        if wantsOldValue {
            invoke(observer: observer, root: root, oldValue: oldValue)
        } else {
            invoke(observer: observer, root: root, endpoint: endpoint)
        }
        return true
    }

    /// Calls the callback. Only between `beginDelivery` and `finishDelivery`, which keep the
    /// callback from being released. Subclasses store and call it.
    func invoke(observer: AnyObject?, root: ObservableModelBase) {}

    /// A queued delivery's call: returns whether the user's callback ran (a value token whose
    /// value did not change evaluates and skips it; `drain()` counts only callbacks that ran).
    func invokeQueued(observer: AnyObject?, root: ObservableModelBase) -> Bool {
        invoke(observer: observer, root: root)
        return true
    }

    /// Calls a change token's callback with this tick's old value (nil when unknown). Only
    /// type-erased subscriptions take old values.
    func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        invoke(observer: observer, root: root)
    }

    /// Calls the callback of a `.endpointChanges` delivery with the endpoint it compared (the
    /// first path's). Type-erased subscriptions pass it on, so that a chain delivering its
    /// endpoint's value delivers this one.
    func invoke(observer: AnyObject?, root: ObservableModelBase, endpoint: ObservedPath.Endpoint) {
        invoke(observer: observer, root: root)
    }

    /// Releases the callback: called once, by whoever sees the subscription ended with no
    /// delivery running, with no lock held.
    func releaseCallback() {}

    /// Queues one delivery in this tick without any change.
    final func schedule() {
        guard isActive, let root = rootRegistry.weakOwner, markPending() else { return }
        queue.enqueue(self, retaining: root)
    }

    /// Queues one delivery in this tick and ends the subscription right after it: for a token
    /// whose path was bound to an object that had left already when it started.
    final func scheduleLastDelivery() {
        schedule()
        queue.enqueueNotice { [self] in
            if !isStillPending() { end() }
        }
    }

    /// With `.endpointChanges`, the first path's endpoint if any path's endpoint differs from
    /// the last one seen, else nil. Paths through a `*` have no single endpoint and always count
    /// as changed.
    private func changedEndpoint(root: ObservableModelBase) -> ObservedPath.Endpoint? {
        guard let extras else { return .unreachable }
        let paths = extras.paths
        let endpoints = paths.map { $0.endpoint(from: root) }
        let now = endpoints.map(StoredEndpoint.init)
        let previous = extras.withLock { state in
            defer { state.lastEndpoints = now }
            return state.lastEndpoints
        }
        let changed =
            previous.count != now.count || zip(previous, now).contains { !$0.isSame(as: $1) }
            || paths.contains(where: \.hasWildcard)
        return changed ? endpoints.first ?? .unreachable : nil
    }

    // MARK: Introspection

    /// Whether this subscription watches one of `serials` of its root directly (a path's first
    /// step), for `stopTelling(_:about:)`.
    final func watchesRootProperty(in serials: Set<UInt64>, root: ObservableModelBase) -> Bool {
        if isProperty { return propertySlot >= 0 && serials.contains(propertySerial) }
        return paths.contains { path in
            // Read as a walk reads (the root's lock and store bit): other threads may be setting it.
            path.steps.first?.readForWalk(on: root).map { serials.contains($0.serial) } ?? false
        }
    }

    /// The serial of the one property a `.property` target watches, while attached.
    final var attachedPropertySerial: UInt64? {
        isProperty && propertySlot >= 0 ? propertySerial : nil
    }

    /// The observed paths as dotted names, for debug descriptions (names from the classes'
    /// tables, which read no other property); remembered when the root deinitializes.
    final var pathDescription: String {
        if isProperty {
            guard propertySlot >= 0 else { return "<key path>" }
            if let root = rootRegistry.weakOwner {
                return PropertyTable(root).name(ofSerial: propertySerial, in: root) ?? "<key path>"
            }
            return propertyNameAfterDeinit ?? "<key path>"
        }
        guard let extras else { return "" }
        if let remembered = extras.withLock({ $0.rememberedDescription }) { return remembered }
        return extras.paths.map { $0.describe(from: rootRegistry.weakOwner) }.joined(separator: ", ")
    }

    /// A `.property` target's property name, remembered when its root deinitialized.
    final var propertyNameAfterDeinit: String? {
        let index = nameIndexAfterDeinit.load(ordering: .acquiring)
        return index >= 0 ? PropertyTable.of(rootRegistry.ownerType).entries[Int(index)].name : nil
    }

    /// Called from the root's deinit, before this subscription is told, for `.property` targets:
    /// `index` (in the class's table) names the property from now on.
    final func rememberPropertyName(index: Int) {
        nameIndexAfterDeinit.store(Int32(truncatingIfNeeded: index), ordering: .releasing)
    }

    /// Called from the root's deinit, while its properties are still intact, for path tokens.
    /// Paths that the classes' tables can name without the objects need nothing remembered:
    /// their description is built when asked.
    final func rememberDescription(root: ObservableModelBase) {
        guard !isProperty, extras != nil else { return }
        // The paths borrowed in place (`self`, alive for the call, holds its extras, and they their
        // `let` paths); a typed chain's shared path answers with one load.
        // Each path borrowed too (a path read from the buffer was retained around the call).
        let isDescribable = extras.unsafelyUnwrapped.withPaths { paths in
            paths.indices.allSatisfy { index in
                Unmanaged.passUnretained(paths[index])._withUnsafeGuaranteedRef { $0.isDescribableWithoutObjects }
            }
        }
        guard !isDescribable, let extras else { return }
        let description = extras.paths.map { $0.describe(from: root) }.joined(separator: ", ")
        extras.withLock { state in state.rememberedDescription = description }
    }
}

/// A path endpoint as remembered between deliveries, without retaining it: class values are
/// held weakly and compared by identity.
enum StoredEndpoint {
    case unreachable
    case object(WeakReference, ObjectIdentifier)
    case value(Any)

    init(_ endpoint: ObservedPath.Endpoint) {
        switch endpoint {
        case .unreachable:
            self = .unreachable
        case .value(let value):
            if let object = PathStep.reference(in: value) {
                self = .object(WeakReference(object), ObjectIdentifier(object))
            } else {
                self = .value(value)
            }
        }
    }

    func isSame(as other: StoredEndpoint) -> Bool {
        switch (self, other) {
        case (.unreachable, .unreachable):
            true
        case (.object(let reference, let id), .object(_, let otherID)):
            id == otherID && reference.load() != nil
        case (.value(let lhs), .value(let rhs)):
            anyValuesAreIdentical(lhs, rhs)
        default:
            false
        }
    }
}
