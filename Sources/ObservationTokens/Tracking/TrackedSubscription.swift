import Synchronization

/// A subscription whose dependencies are whatever its read touched: every `@Observed` storage,
/// on any object, that the last evaluation of a key path or closure read.
///
/// Its edges are leaf edges (kept in the extras' `edges`, so `end()` detaches them), which a
/// setter only marks pending: no user code ever runs inside a setter (except `.immediate`).
/// Evaluation happens at creation and at each delivery, on the delivering thread:
///
/// 1. the read runs with tracking on (`AccessCapture.beginTracking`), with the old edges still
///    attached, so a set of a known dependency during the read marks the token pending again;
///    a storage read for the first time gets its edge as the getter records the read, *before*
///    it reads the value (`attachNow`), so a set between the read and the end of the
///    evaluation marks the token pending too: nothing is lost, and one read is enough;
/// 2. the edges are made to match what the read touched: storages no longer read detached;
/// 3. should a storage still turn out new there (its edge could not be attached during the
///    read), the read runs once more (at most `maxRounds` times; past that, one more delivery
///    is scheduled for the next tick).
///
/// A delivery whose dependencies did not change compares them with the edges in place and
/// allocates nothing: the access buffer is reused.
///
/// An object read by the last evaluation that deinitializes marks the token pending (its edge
/// there is gone with the object's registry; nothing is read inside the deinit); the delivery
/// re-evaluates and attaches again.
///
/// `@unchecked Sendable`: see Subscription.
final class TrackedSubscription<Model: ObservableModelBase, Value>: Subscription, @unchecked Sendable {
    /// What the token runs: `read` under tracking, then `deliver` with its result.
    struct Body {
        /// The tracked part: the key path or the user's closure. Receives the observer (nil
        /// without one).
        let read: @Sendable (AnyObject?, Model) -> Value
        /// The callback, with the new value and the last delivered one (the new one when
        /// there is none, or the token keeps none).
        let deliver: @Sendable (AnyObject?, Model, Value, Value) -> Void
    }

    /// How many times one delivery may evaluate while the read keeps touching new storages.
    static var maxRounds: Int { 4 }

    /// Released with the callback (see `Subscription.releaseCallback`).
    @exclusivity(unchecked) private var body: Body?
    private let observer: WeakReference?
    /// Deliver only when the value differs from the last one delivered (`==`, `===`).
    private let skipsUnchanged: Bool
    /// Keep the last value (for `skipsUnchanged` and for old values).
    private let keepsLast: Bool
    /// Whether a delivery runs `deliver` at all (closure tokens run their closure as the read).
    private let hasCallback: Bool
    /// The access buffer, reused between evaluations so a steady delivery allocates nothing;
    /// `scratchBusy` hands it to one evaluation at a time.
    private let scratch = TrackingScratch.allocate()
    private let scratchBusy = Atomic<Bool>(false)
    /// The key path it tracks, for descriptions; nil for a tracking closure.
    private let keyPath: AnyKeyPath?
    /// The extras (its edges, its last value and their lock), in this object's allocation: a
    /// tracked token always has them (see `SubscriptionExtras`).
    @exclusivity(unchecked) private var extrasInPlace = SubscriptionExtrasStorage(paths: [])

    init(
        root: __shared Model, observer: AnyObject?, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, keyPath: AnyKeyPath? = nil, skipsUnchanged: Bool, keepsLast: Bool, hasCallback: Bool,
        body: Body
    ) {
        self.body = body
        self.keyPath = keyPath
        self.skipsUnchanged = skipsUnchanged
        self.keepsLast = keepsLast || skipsUnchanged
        self.hasCallback = hasCallback
        self.observer = observer.map(WeakReference.init)
        // `.endpointChanges` is done here (`skipsUnchanged`): the base class compares path
        // endpoints, and a tracked token has no paths.
        super.init(
            rootRegistry: root.registry, hasObserver: observer != nil, target: .paths([]),
            options: options.subtracting(.endpointChanges), queue: queue, wantsOldValue: false, site: site,
            keepsExtrasInPlace: true)
        withUnsafeMutablePointer(to: &extrasInPlace) { placeExtras($0) }
    }

    deinit {
        TrackingScratch.free(scratch)
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    /// The key path (`\Person.address?.zipCode`, see `DebugFormat.keyPathText`), or "tracking
    /// closure".
    override var writtenDescription: String? {
        keyPath.map { DebugFormat.keyPathText($0, readBy: self) } ?? "tracking closure"
    }

    override func releaseCallback() {
        body = nil
    }

    /// Evaluates once to find the dependencies and attaches to them; then `.initial`.
    /// Returns false when the read touched no `@Observed` storage at all (nothing to observe).
    func start(root: Model, observer: AnyObject?) -> Bool {
        // The token is not handed out yet and the caller keeps the root alive, so nothing can
        // end this subscription and release `body` meanwhile.
        guard let body else { return false }
        let value = evaluate(body.read, observer: observer, root: root)
        guard hasEdges else { return false }
        if keepsLast { swapLast(value) }
        if isInitial { deliverNow(oldValue: nil, isChange: false) }
        return true
    }

    private var hasEdges: Bool {
        extras?.withLock { !$0.edges.isEmpty } ?? false
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        run(observer: observer, root: root, always: false)
    }

    override func invokeQueued(observer: AnyObject?, root: ObservableModelBase) -> Bool {
        run(observer: observer, root: root, always: false)
    }

    /// `deliverNow`: immediate changes, and (with no old value) `.initial` and `fire()`,
    /// which deliver even an unchanged value.
    override func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        run(observer: observer, root: root, always: !isImmediate || oldValue == nil)
    }

    /// Evaluates and delivers; returns whether a user callback ran (a tracking closure always
    /// does: it is the read; a value token skips an unchanged value).
    @discardableResult
    private func run(observer: AnyObject?, root: ObservableModelBase, always: Bool) -> Bool {
        guard let body else { return false }
        let model = unsafeDowncast(root, to: Model.self)
        let value = evaluate(body.read, observer: observer, root: model)
        guard hasCallback else { return true }
        if keepsLast {
            return deliverComparing(body, observer: observer, root: model, value: value, always: always)
        }
        body.deliver(observer, model, value, value)
        return true
    }

    /// Delivers a value token: with the last value, and only when it changed (unless `always`).
    private func deliverComparing(_ body: Body, observer: AnyObject?, root: Model, value: Value, always: Bool) -> Bool {
        let last = swapLast(value)
        if skipsUnchanged, !always, let last, _valuesAreIdentical(last, value) { return false }
        body.deliver(observer, root, value, last ?? value)
        return true
    }

    /// Stores `value` as the last delivered value; returns the previous one.
    @discardableResult
    private func swapLast(_ value: Value) -> Value? {
        guard let extras else { return nil }
        let previous = extras.withLock { state -> Any? in
            defer { state.oldValue = value }
            return state.oldValue
        }
        // Converted (and released) outside the lock: the value may hold user objects.
        return previous.map { $0 as! Value }
    }

    // MARK: Evaluating and re-wiring

    /// Runs `read` with tracking on and re-wires to what it touched, repeating while it
    /// touches storages that had no edge yet (see the type's discussion).
    private func evaluate(
        _ read: @Sendable (AnyObject?, Model) -> Value, observer: AnyObject?, root: Model
    ) -> Value {
        // The reused buffer, unless another evaluation (immediate mode on two threads) has it.
        let ownsScratch = !scratchBusy.exchange(true, ordering: .acquiring)
        let scratch = ownsScratch ? self.scratch : TrackingScratch.allocate()
        defer {
            if ownsScratch {
                scratchBusy.store(false, ordering: .releasing)
            } else {
                TrackingScratch.free(scratch)
            }
        }
        var round = 1
        while true {
            let recording = scratch.recording
            // Alive for the whole evaluation: the caller holds this subscription.
            recording.pointee.attacher = self
            recording.pointee.known = scratch.known
            let previous = AccessCapture.beginTracking(recording)
            let value = read(observer, root)
            AccessCapture.endTracking(restoring: previous)
            let attachedNew = rewire(to: scratch.pointee.accesses, known: &scratch.pointee.known)
            // What the read saw of computed values is what this token has seen of them now.
            if hasComputedEdges { recordSeenVersions(scratch.pointee.accesses) }
            // The registries are released here, outside every lock.
            scratch.pointee.accesses.removeAll(keepingCapacity: true)
            if !attachedNew { return value }
            if round == Self.maxRounds {
                // Still finding new storages (a read that keeps moving): its edges are in
                // place now, so look again next tick rather than spin here.
                schedule()
                return value
            }
            round += 1
        }
    }

    /// Records, for each edge on a computed value, the version this evaluation read (noted on
    /// its access by the getter).
    private func recordSeenVersions(_ accesses: [AccessCapture.TrackedAccess]) {
        guard let extras else { return }
        let seen = extras.withLock { state -> [(registry: Registry, serial: UInt64, slot: Int, version: UInt64)] in
            var seen: [(registry: Registry, serial: UInt64, slot: Int, version: UInt64)] = []
            for access in accesses where Registry.isComputed(access.serial) {
                guard
                    let edge = state.edges.first(where: {
                        $0.serial == access.serial && $0.registry === access.registry
                    })
                else { continue }
                seen.append((edge.registry, edge.serial, edge.slot, access.version))
            }
            return seen
        }
        for edge in seen { edge.registry.recordSeen(serial: edge.serial, slot: edge.slot, version: edge.version) }
    }

    /// Makes the edges match `accesses`. Returns whether an edge was attached (a storage read
    /// without an edge in place).
    private func rewire(to accesses: [AccessCapture.TrackedAccess], known: inout [AccessCapture.KnownEdge]) -> Bool {
        guard let extras else { return false }
        var hooks = ObservationStateHooks()
        var released: [Edge] = []
        let attachedNew = extras.withLock { state -> Bool in
            // An ended subscription keeps no edges: `end()` sets the flag before it empties
            // the edges under this lock.
            guard isActive else { return false }
            // The steady state: the edges and `known` are as the last evaluation left them.
            if known.count == state.edges.count,
                state.edges.withUnsafeBufferPointer({ edges in
                    AccessCapture.edges(
                        edges, match: accesses,
                        storage: {
                            AccessCapture.KnownEdge(registry: ObjectIdentifier($0.registry), serial: $0.serial)
                        })
                })
            {
                return false
            }
            let attachedNew = rebuild(&state.edges, from: accesses, released: &released, hooks: &hooks)
            known.removeAll(keepingCapacity: true)
            state.edges.withUnsafeBufferPointer { edges in
                for edge in edges {
                    known.append(
                        AccessCapture.KnownEdge(registry: ObjectIdentifier(edge.registry), serial: edge.serial))
                }
            }
            return attachedNew
        }
        hooks.run()
        withExtendedLifetime(released) {}  // registries released outside the lock
        return attachedNew
    }

    /// The dependencies changed: keeps the edges still read, attaches the new ones (before
    /// detaching any old one, so a storage that stays observed never reports 1 → 0 → 1), and
    /// detaches the rest. Under the extras' lock.
    private func rebuild(
        _ edges: inout EdgeList, from accesses: [AccessCapture.TrackedAccess], released: inout [Edge],
        hooks: inout ObservationStateHooks
    ) -> Bool {
        if edges.count <= 64, accesses.count <= 64 {
            return rebuildSmall(&edges, from: accesses, released: &released, hooks: &hooks)
        }
        var old: [TrackedEdgeID: Int] = [:]
        old.reserveCapacity(edges.count)
        for index in edges.indices { old[TrackedEdgeID(edges[index].registry, edges[index].serial)] = index }
        var kept = [Bool](repeating: false, count: edges.count)
        var seen = Set<TrackedEdgeID>()
        var next: [Edge] = []
        next.reserveCapacity(accesses.count)
        var attachedNew = false
        for access in accesses {
            let id = TrackedEdgeID(access.registry, access.serial)
            guard seen.insert(id).inserted else { continue }
            if let index = old[id] {
                kept[index] = true
                next.append(edges[index])
            } else if let slot = access.registry.attach(self, serial: access.serial, isLeaf: true, hooks: &hooks) {
                next.append(Edge(registry: access.registry, serial: access.serial, slot: slot, isLeaf: true))
                attachedNew = true
            }
            // nil: the object deinitialized since it was read; it simply drops out.
        }
        for index in edges.indices where !kept[index] {
            edges[index].registry.detach(serial: edges[index].serial, slot: edges[index].slot, hooks: &hooks)
            released.append(edges[index])
        }
        edges = EdgeList(next)
        return attachedNew
    }

    /// `rebuild` for the usual few dependencies: linear scans and a bit mask, no hashing.
    private func rebuildSmall(
        _ edges: inout EdgeList, from accesses: [AccessCapture.TrackedAccess], released: inout [Edge],
        hooks: inout ObservationStateHooks
    ) -> Bool {
        // In place, keeping the buffer: the edges read move to the front in reading order,
        // the rest are detached from the tail. (New storages usually have their edges already,
        // attached as they were read.) The edges are read in place (a copy of one retains its
        // registry); they are unique (an edge is attached only where there is none).
        var placed = 0
        var attachedNew = false
        for access in accesses {
            let serial = access.serial
            let registry = access.registry
            if let index = edges.firstIndex(of: registry, serial: serial) {
                // Before `placed`: read earlier in this evaluation.
                if index < placed { continue }
                edges.swapAt(placed, index)
                placed += 1
            } else if let slot = registry.attach(self, serial: serial, isLeaf: true, hooks: &hooks) {
                edges.append(Edge(registry: registry, serial: serial, slot: slot, isLeaf: true))
                edges.swapAt(placed, edges.count - 1)
                placed += 1
                attachedNew = true
            }
            // nil: the object deinitialized since it was read; it simply drops out.
        }
        edges.withUnsafeBufferPointer { edges in
            for index in placed..<edges.count {
                edges[index].registry.detach(serial: edges[index].serial, slot: edges[index].slot, hooks: &hooks)
            }
        }
        // One allocation for all the stale edges (appending them one by one grew the array).
        released.reserveCapacity(edges.count - placed)
        while edges.count > placed { released.append(edges.removeLast()) }
        return attachedNew
    }
}

extension TrackedSubscription: AccessAttaching {
    /// Attaches the edge of a storage the evaluation is about to read, if it has none yet
    /// (called by the getter, through the recording, before it reads).
    func attachNow(_ access: AccessCapture.TrackedAccess) {
        guard let extras else { return }
        var hooks = ObservationStateHooks()
        extras.withLock { state in
            // An ended subscription keeps no edges (see `rewire`).
            guard isActive, state.edges.firstIndex(of: access.registry, serial: access.serial) == nil,
                let slot = access.registry.attach(self, serial: access.serial, isLeaf: true, hooks: &hooks)
            else { return }
            state.edges.append(Edge(registry: access.registry, serial: access.serial, slot: slot, isLeaf: true))
        }
        hooks.run()
    }
}

/// Where one evaluation records its accesses: the recording that the thread-local slot points
/// at, and the buffer it appends to. Heap-allocated once per subscription, so evaluating takes
/// no closure and no generic helper, and the buffer keeps its capacity between deliveries.
struct TrackingScratch {
    var recording = AccessCapture.Recording()
    var accesses: [AccessCapture.TrackedAccess] = []
    /// The subscription's edges as of its last evaluation with this scratch (see
    /// `Recording.known`); refreshed when an evaluation changes them.
    var known: [AccessCapture.KnownEdge] = []

    static func allocate() -> UnsafeMutablePointer<TrackingScratch> {
        let pointer = UnsafeMutablePointer<TrackingScratch>.allocate(capacity: 1)
        pointer.initialize(to: TrackingScratch())
        return pointer
    }

    static func free(_ pointer: UnsafeMutablePointer<TrackingScratch>) {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

extension UnsafeMutablePointer<TrackingScratch> {
    /// The recording, pointing at this scratch's buffer.
    var recording: UnsafeMutablePointer<AccessCapture.Recording> {
        let recording = UnsafeMutableRawPointer(self).advanced(
            by: MemoryLayout<TrackingScratch>.offset(of: \.recording)!
        )
        .assumingMemoryBound(to: AccessCapture.Recording.self)
        let accesses = UnsafeMutableRawPointer(self).advanced(by: MemoryLayout<TrackingScratch>.offset(of: \.accesses)!)
            .assumingMemoryBound(to: [AccessCapture.TrackedAccess].self)
        recording.pointee = AccessCapture.Recording()
        recording.pointee.all = accesses
        return recording
    }

    /// This scratch's known edges, for `Recording.known`.
    var known: UnsafeMutablePointer<[AccessCapture.KnownEdge]> {
        UnsafeMutableRawPointer(self).advanced(by: MemoryLayout<TrackingScratch>.offset(of: \.known)!)
            .assumingMemoryBound(to: [AccessCapture.KnownEdge].self)
    }
}

/// What identifies a tracked edge: the object (through its registry) and the storage.
private struct TrackedEdgeID: Hashable {
    let registry: ObjectIdentifier
    let serial: UInt64

    init(_ registry: Registry, _ serial: UInt64) {
        self.registry = ObjectIdentifier(registry)
        self.serial = serial
    }
}
