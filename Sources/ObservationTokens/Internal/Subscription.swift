import Synchronization

/// The state behind one observation: what it watches, where it is attached, and its callback.
///
/// A token owns its subscription and ends it on `deinit` or `invalidate()`. Observer-lifetime
/// observations (`tell`) are owned by the observed object's registry instead. Registries
/// reference subscriptions unretained (see `WeakSet`); the coalescing queue retains a
/// subscription only while a delivery is pending.
///
/// Locking rule: the subscription lock may be held while taking a registry lock, never the
/// other way round; no user code and no release of a user object happens under either.
final class Subscription: Locked<SubscriptionState>, @unchecked Sendable {  // state is guarded by Locked
    typealias Callback = _TokenCallback

    let queue: CoalescingQueue
    let options: ObservationOptions
    let paths: SmallArray<ObservedPath>
    let rootID: ObjectIdentifier
    let rootType: ObservableModel.Type
    let site: CreationSite
    /// Whether a live observer is required for delivery (the `observer:` variants).
    let hasObserver: Bool
    let observerID: ObjectIdentifier?
    /// Whether the setter should hand over the old value (single-property change tokens).
    let wantsOldValue: Bool

    /// Set from a setter's first change until delivery. An atomic read-modify-write on both
    /// sides orders the setter's store of the value before the drain's read of it, so the last
    /// change of a tick is never skipped as "already pending".
    let pending = Atomic<Bool>(false)

    /// For change tokens: whether this tick's old value is recorded. A token made pending by
    /// `schedule()` has none yet, so setters keep offering it until a real change records one.
    let hasOldValue = Atomic<Bool>(false)

    /// Set once, when the subscription ends; lets the queue sweep ended deliveries without
    /// taking each subscription's lock.
    let hasEnded = Atomic<Bool>(false)

    // Written once in init, read outside the lock: loading a weak reference creates a strong
    // one, and its release must never happen under a lock (it may run a deinit).
    private weak var weakRoot: ObservableModel?

    /// The root without reference counting, for deliveries from the queue only: each queued
    /// delivery retains its root until it has run, so the object is alive whenever this is
    /// used. (Observed objects have weak references, hence a side table, which makes each
    /// retain and release several times dearer.)
    private let queuedRoot: Unmanaged<ObservableModel>
    private weak var weakObserver: AnyObject?

    init(
        root: ObservableModel,
        observer: AnyObject?,
        paths: SmallArray<ObservedPath>,
        options: ObservationOptions,
        queue: CoalescingQueue,
        wantsOldValue: Bool,
        site: CreationSite,
        callback: Callback
    ) {
        self.queue = queue
        self.options = options
        self.paths = paths
        self.rootID = ObjectIdentifier(root)
        self.rootType = type(of: root)
        self.site = site
        self.hasObserver = observer != nil
        self.observerID = observer.map(ObjectIdentifier.init)
        self.wantsOldValue = wantsOldValue
        self.weakRoot = root
        self.queuedRoot = .passUnretained(root)
        self.weakObserver = observer
        super.init(state: SubscriptionState(callback: callback))
        LiveCounters.subscriptions.add(1, ordering: .relaxed)
    }

    deinit {
        LiveCounters.subscriptions.subtract(1, ordering: .relaxed)
    }

    var isImmediate: Bool { options.contains(.immediate) }
    var rootTypeName: String { String(describing: rootType) }
    var isActive: Bool { withLock { $0.isActive } }
    var root: ObservableModel? { weakRoot }
    var observer: AnyObject? { weakObserver }

    /// True when an observer was given and is gone.
    var observerIsGone: Bool { hasObserver && weakObserver == nil }

    // MARK: Attaching

    /// Attaches the initial edges. Returns false (and ends) when a path's first step does not
    /// name an `@Observed` property of the root.
    func start(root: ObservableModel) -> Bool {
        var edges = SmallArray<ObservedPath.EdgeKey>()
        var endpoints: [ObservedPath.Endpoint] = []
        for path in paths {
            let needsEndpoint = options.contains(.endpointChanges)
            guard let endpoint = path.walk(from: root, into: &edges, needsEndpoint: needsEndpoint) else {
                end()
                return false
            }
            if options.contains(.endpointChanges) { endpoints.append(endpoint) }
        }
        let hooks = withLock { state in
            if !endpoints.isEmpty { state.lastEndpoints = endpoints.map(StoredEndpoint.init) }
            return apply(edges, to: &state)
        }
        hooks.run()
        return true
    }

    /// Re-walks every path from the root and moves the edges to where the paths run now.
    ///
    /// Walking happens outside the lock (it creates strong references to model objects, whose
    /// release may deinit them). A walk that started before a newer one is dropped: the newer
    /// walk saw a later state.
    func retarget(walks: inout WalkMemo) {
        guard let root = weakRoot else { return }
        let generation = withLock { state -> UInt64? in
            guard state.isActive else { return nil }
            state.walkGeneration &+= 1
            return state.walkGeneration
        }
        guard let generation else { return }
        let edges = walks.edges(for: paths, from: root)
        let hooks = withLock { state -> ObservationStateHooks in
            guard state.isActive, state.walkGeneration == generation else { return ObservationStateHooks() }
            return apply(edges, to: &state)
        }
        hooks.run()
        withExtendedLifetime(edges) {}
    }

    /// Makes `state.edges` match `keys`, keeping edges that are already in place.
    private func apply(_ keys: SmallArray<ObservedPath.EdgeKey>, to state: inout SubscriptionState)
        -> ObservationStateHooks
    {
        var hooks = ObservationStateHooks()
        if state.edges.isEmpty {
            // First attach: nothing to keep or detach.
            var next = SmallArray<Edge>()
            for key in keys {
                let registry = key.object.registry
                if let slot = registry.attach(
                    self, serial: key.serial, isLeaf: key.isLeaf, owner: key.object, hooks: &hooks)
                {
                    next.append(Edge(registry: registry, serial: key.serial, slot: slot, isLeaf: key.isLeaf))
                }
            }
            state.edges = next
            return hooks
        }
        // Keep the edges that are already in place (matched by registry, property and role),
        // attach the new ones, detach the rest. Long paths match through a hash table, so
        // retargeting stays linear; short ones, the usual case, by a scan, which is cheaper.
        var next = SmallArray<Edge>()
        next.reserveCapacity(keys.count)
        if state.edges.count <= 8 {
            var remaining = Array(state.edges)
            for key in keys {
                let registry = key.object.registry
                if let index = remaining.firstIndex(where: {
                    $0.registry === registry && $0.serial == key.serial && $0.isLeaf == key.isLeaf
                }) {
                    next.append(remaining.remove(at: index))
                } else if let slot = registry.attach(
                    self, serial: key.serial, isLeaf: key.isLeaf, owner: key.object, hooks: &hooks)
                {
                    next.append(Edge(registry: registry, serial: key.serial, slot: slot, isLeaf: key.isLeaf))
                }
            }
            for edge in remaining { edge.registry.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks) }
        } else {
            var remaining: [EdgeID: [Edge]] = [:]
            for edge in state.edges {
                remaining[EdgeID(edge.registry, edge.serial, edge.isLeaf), default: []].append(edge)
            }
            for key in keys {
                let registry = key.object.registry
                if let kept = remaining[EdgeID(registry, key.serial, key.isLeaf)]?.popLast() {
                    next.append(kept)
                } else if let slot = registry.attach(
                    self, serial: key.serial, isLeaf: key.isLeaf, owner: key.object, hooks: &hooks)
                {
                    next.append(Edge(registry: registry, serial: key.serial, slot: slot, isLeaf: key.isLeaf))
                }
            }
            for edges in remaining.values {
                for edge in edges { edge.registry.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks) }
            }
        }
        state.edges = next
        return hooks
    }

    // MARK: Ending

    /// Ends the observation: no callback runs after this returns (except one already running
    /// on another thread), the closure is released, and every edge is detached.
    /// Idempotent and safe from any thread.
    func end() {
        let taken = withLock { state -> EndedState? in
            guard state.isActive else { return nil }
            state.isActive = false
            hasEnded.store(true, ordering: .releasing)
            defer {
                state.edges = SmallArray()
                state.callback = nil
                state.oldValue = nil
                state.lastEndpoints = []
            }
            return EndedState(
                edges: state.edges, callback: state.callback, oldValue: state.oldValue,
                lastEndpoints: state.lastEndpoints)
        }
        guard let taken else { return }
        // A pending delivery leaves the queue (soon, for many at once), with the root it kept
        // alive.
        if pending.load(ordering: .acquiring) { queue.subscriptionDidEnd() }
        var hooks = ObservationStateHooks()
        for edge in taken.edges {
            edge.registry.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks)
        }
        hooks.run()
        // `taken` (closure, old value, endpoints: user values) is released here, outside every
        // lock: a release may run a deinit, which may take these locks again.
    }

    private struct EndedState {
        let edges: SmallArray<Edge>
        let callback: Callback?
        let oldValue: Any?
        let lastEndpoints: [StoredEndpoint]
    }

    /// Called by a registry whose object deinitialized while this subscription had edges there.
    func objectDidDeinit(_ id: ObjectIdentifier) {
        if id == rootID {
            let wasActive = isActive
            end()
            if wasActive { noticeRootDeinit() }
        } else {
            // An intermediate object vanished: the path now ends earlier, which is a change.
            var walks = WalkMemo()
            retarget(walks: &walks)
            propertyDidChange(changedObject: nil) { nil }
        }
    }

    private func noticeRootDeinit() {
        guard let observer = weakObserver as? ObservedObjectDeinitObserver else { return }
        let notice = ObservedObjectDeinitNotice(objectID: rootID, typeName: rootTypeName, site: site)
        let box = WeakObserverBox(observer)
        let deliver: @Sendable () -> Void = {
            (box.object as? ObservedObjectDeinitObserver)?.observedObjectDidDeinit(notice)
        }
        if isImmediate {
            deliver()
        } else {
            queue.enqueueNotice(deliver)
        }
    }

    // MARK: Changes

    /// Whether a delivery is still pending. A read-modify-write rather than a load: it orders
    /// the setter's store of the new value before the drain's exchange that clears the flag, so
    /// either that delivery sees the new value or this returns false and the setter re-queues.
    @inline(__always)
    func isStillPending() -> Bool {
        pending.compareExchange(expected: true, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    /// Marks the subscription pending. Returns true when it was not pending before, which makes
    /// the caller responsible for enqueueing it.
    @inline(__always)
    func markPending() -> Bool {
        !pending.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Whether `object` is this subscription's root.
    @inline(__always)
    func isRoot(_ object: ObservableModel) -> Bool {
        ObjectIdentifier(object) == rootID
    }

    /// Keeps `oldValue` as this tick's old value unless one is recorded already.
    func recordOldValue(_ oldValue: () -> Any?) {
        guard wantsOldValue, !hasOldValue.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let value = oldValue()
        withLock { state in state.oldValue = value }
    }

    /// Whether a setter must still call this pending subscription: only for its old value.
    @inline(__always)
    var needsOldValue: Bool {
        wantsOldValue && !hasOldValue.load(ordering: .acquiring)
    }

    /// A property this subscription watches changed (or a path object vanished).
    func propertyDidChange(changedObject: ObservableModel?, oldValue: () -> Any?) {
        if isImmediate {
            deliverNow(oldValue: oldValue(), isChange: true)
        } else if markPending() {
            if changedObject != nil { recordOldValue(oldValue) }
            guard let root = changedObject.flatMap({ isRoot($0) ? $0 : nil }) ?? weakRoot else { return }
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

    /// Delivers one pending change from a drain of `queue`, which keeps the root alive.
    func deliver(drainID: UInt64) -> Outcome {
        // Change tokens take their old value along; the common case has none to move.
        var oldValue: Any?
        var callback = Invocation()
        let outcome = withLock { state -> Outcome in
            guard state.isActive else { return .skipped }
            if state.firedInDrain == drainID { return .deferred }
            guard pending.exchange(false, ordering: .acquiringAndReleasing) else { return .skipped }
            state.firedInDrain = drainID
            callback.take(state.callback)
            if wantsOldValue {
                oldValue = state.oldValue.take()
                hasOldValue.store(false, ordering: .releasing)
            }
            return .delivered
        }
        guard case .delivered = outcome else { return outcome }
        // The observer must be alive; otherwise the token ends (outside the lock: a release
        // here may deinit user objects).
        var observer: AnyObject?
        if hasObserver {
            observer = weakObserver
            guard observer != nil else {
                end()
                return .skipped
            }
        }
        return queuedRoot._withUnsafeGuaranteedRef { root in
            if options.contains(.endpointChanges) {
                // Comparing endpoints runs user `==`; an invalidate() during it must still win.
                guard endpointChanged(root: root), isActive else { return .skipped }
            }
            callback.call(observer: observer, root: root, oldValue: oldValue)
            return .delivered
        }
    }

    /// Runs the callback now on the calling thread, if the observation is active and both ends
    /// are alive. Used by immediate mode (`isChange`), and by `.initial` and `fire()`, which
    /// deliver even when `.endpointChanges` would see no change.
    @discardableResult
    func deliverNow(oldValue: Any?, isChange: Bool) -> Bool {
        let root = weakRoot
        let observer = weakObserver
        var callback = Invocation()
        let isActive = withLock { state in
            if state.isActive { callback.take(state.callback) }
            return state.isActive
        }
        guard isActive, let root else { return false }
        guard !hasObserver || observer != nil else {
            end()
            return false
        }
        if isChange, options.contains(.endpointChanges) {
            guard endpointChanged(root: root), isActive else { return false }
        }
        callback.call(observer: observer, root: root, oldValue: oldValue)
        return true
    }

    /// Queues one delivery in this tick without any change.
    func schedule() {
        guard isActive, let root = weakRoot, markPending() else { return }
        queue.enqueue(self, retaining: root)
    }

    /// With `.endpointChanges`, whether any path's endpoint differs from the last one seen.
    /// Paths through a `*` have no single endpoint and always count as changed.
    private func endpointChanged(root: ObservableModel) -> Bool {
        guard options.contains(.endpointChanges) else { return true }
        let now = paths.map { StoredEndpoint($0.endpoint(from: root)) }
        let previous = withLock { state in
            defer { state.lastEndpoints = now }
            return state.lastEndpoints
        }
        guard previous.count == now.count else { return true }
        return zip(previous, now).contains { !$0.isSame(as: $1) } || paths.contains(where: \.hasWildcard)
    }

    // MARK: Introspection

    /// The observed paths as dotted names, for debug descriptions; remembered when the root
    /// deinitializes, since names can only be read off a live object.
    var pathDescription: String {
        if let remembered = withLock({ $0.rememberedDescription }) { return remembered }
        let root = weakRoot
        return paths.map { $0.describe(from: root) }.joined(separator: ", ")
    }

    /// Called from the root's deinit, while its properties are still intact.
    func rememberDescription(root: ObservableModel, table: PropertyTable) {
        let description = paths.map { $0.describe(from: root, rootTable: table) }.joined(separator: ", ")
        withLock { $0.rememberedDescription = description }
    }

}

/// A token's callback with its types erased.
///
/// The two common shapes keep the user's closure itself, so creating a token allocates no
/// adapter closure. `observe` stores a `(Self) -> Void` as `(ObservableModel) -> Void` (and an
/// `(Observer, Self) -> Void` as `(AnyObject, ObservableModel) -> Void`) with `unsafeBitCast`:
/// both are thick functions of the same shape taking class references directly, so the
/// representation is the same, and the subscription only ever calls them with its own root (a
/// `Self`) and observer.
@usableFromInline
enum _TokenCallback: Sendable {
    case model(_ModelCallback)
    case observerAndModel(_ObserverCallback)
    case general(_GeneralCallback)
}

/// A callback copied out of the lock to be called: the closure alone, not the enum (copying
/// the enum goes through slower generic outlined copies).
private struct Invocation {
    var model: _ModelCallback?
    var observerAndModel: _ObserverCallback?
    var general: _GeneralCallback?

    mutating func take(_ callback: _TokenCallback?) {
        switch callback {
        case .model(let function): model = function
        case .observerAndModel(let function): observerAndModel = function
        case .general(let function): general = function
        case nil: break
        }
    }

    func call(observer: AnyObject?, root: ObservableModel, oldValue: Any?) {
        if let model {
            model(root)
        } else if let observerAndModel, let observer {
            observerAndModel(observer, root)
        } else if let general {
            general(observer, root, oldValue)
        }
    }
}

/// Callback shapes, as stored by `_TokenCallback`.
@usableFromInline
typealias _ModelCallback = @Sendable (ObservableModel) -> Void
@usableFromInline
typealias _ObserverCallback = @Sendable (AnyObject, ObservableModel) -> Void
/// The observer (nil without one), the observed object, and the old value for change tokens
/// (nil when unknown).
@usableFromInline
typealias _GeneralCallback = @Sendable (_ observer: AnyObject?, _ root: ObservableModel, _ oldValue: Any?) -> Void

/// Walks made during one change, shared by every token with the same root and the same typed
/// path (say, 1,000 views watching `cache.currentUser.address.zipCode`): each is walked once.
/// Paths are told apart by their key path objects; other paths are walked for each token.
struct WalkMemo {
    private var walks:
        [(root: ObjectIdentifier, identity: [ObjectIdentifier], edges: SmallArray<ObservedPath.EdgeKey>)] = []
    private static let limit = 8

    mutating func edges(for paths: SmallArray<ObservedPath>, from root: ObservableModel) -> SmallArray<
        ObservedPath.EdgeKey
    > {
        guard paths.count == 1, let identity = paths[0].typedIdentity else {
            var edges = SmallArray<ObservedPath.EdgeKey>()
            for path in paths { _ = path.walk(from: root, into: &edges, needsEndpoint: false) }
            return edges
        }
        let rootID = ObjectIdentifier(root)
        if let known = walks.first(where: { $0.root == rootID && $0.identity == identity }) { return known.edges }
        var edges = SmallArray<ObservedPath.EdgeKey>()
        _ = paths[0].walk(from: root, into: &edges, needsEndpoint: false)
        if walks.count < Self.limit { walks.append((rootID, identity, edges)) }
        return edges
    }
}

/// What makes two edges interchangeable when a path is walked again.
private struct EdgeID: Hashable {
    let registry: ObjectIdentifier
    let serial: UInt64
    let isLeaf: Bool

    init(_ registry: Registry, _ serial: UInt64, _ isLeaf: Bool) {
        self.registry = ObjectIdentifier(registry)
        self.serial = serial
        self.isLeaf = isLeaf
    }
}

/// One attachment of a subscription to a property (or `*`) of one object.
struct Edge {
    let registry: Registry
    let serial: UInt64
    let slot: Int
    let isLeaf: Bool
}

struct SubscriptionState {
    var isActive = true
    var callback: Subscription.Callback?
    var edges = SmallArray<Edge>()
    var walkGeneration: UInt64 = 0
    var firedInDrain: UInt64 = 0
    var oldValue: Any?
    var lastEndpoints: [StoredEndpoint] = []
    var rememberedDescription: String?
}

/// A path endpoint as remembered between deliveries, without retaining it: class values are
/// held weakly and compared by identity.
enum StoredEndpoint {
    case unreachable
    case object(WeakObserverBox, ObjectIdentifier)
    case value(Any)

    init(_ endpoint: ObservedPath.Endpoint) {
        switch endpoint {
        case .unreachable:
            self = .unreachable
        case .value(let value):
            if let object = PathStep.reference(in: value) {
                self = .object(WeakObserverBox(object), ObjectIdentifier(object))
            } else {
                self = .value(value)
            }
        }
    }

    func isSame(as other: StoredEndpoint) -> Bool {
        switch (self, other) {
        case (.unreachable, .unreachable):
            true
        case (.object(let box, let id), .object(_, let otherID)):
            id == otherID && box.object != nil
        case (.value(let lhs), .value(let rhs)):
            anyValuesAreIdentical(lhs, rhs)
        default:
            false
        }
    }
}

/// Where a token was created, for debug descriptions.
struct CreationSite: Sendable, CustomStringConvertible {
    let fileID: StaticString
    let line: UInt
    var description: String { "\(fileID):\(line)" }
}

/// A weak reference that can cross threads; only ever loaded, never stored to again.
final class WeakObserverBox: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
