import Synchronization

/// The parts of a subscription that most tokens never need, with the lock that guards them:
/// kept out of line for a plain single-property token, so it stays small (see
/// `docs/Performance.md`, W7), and in place in the subscriptions whose tokens always have them.
///
/// Where they live (`Subscription.extras` points at them, for the subscription's lifetime):
/// - in the subscription's own allocation, for the subscriptions whose tokens always watch paths
///   (`ChainSubscription`, a typed chain; `TrackedSubscription`): one object per token, not the
///   subscription, an extras object and an edge list (W19: two objects fewer to free per chain
///   token);
/// - in a block of their own otherwise (path tokens of the other subscription classes, change
///   tokens), allocated with the subscription and freed by its deinit.
/// Either way a token's first `EdgeList.inlineCapacity` edges are kept inline (a chain of up to
/// that many steps allocates no list).
///
/// Locking rule: this lock may be held while taking a registry lock, never the other way round.
///
/// Thread safety: the storage never moves while the subscription lives (a class instance's
/// stored property, or a block freed only by the subscription's deinit), so its lock's address is
/// stable; `State` is read and written only inside `withLock`; `paths` is immutable and
/// `lastVisit` atomic. Whoever uses a `SubscriptionExtras` holds its subscription (every use is
/// in the subscription's own methods, or by a caller holding it), exactly as they held the
/// extras object before: the handle is a borrowed pointer and keeps nothing alive.
struct SubscriptionExtras {
    /// The storage: in the subscription's allocation, or a block of its own.
    let storage: UnsafeMutablePointer<SubscriptionExtrasStorage>

    init(_ storage: UnsafeMutablePointer<SubscriptionExtrasStorage>) {
        self.storage = storage
        // `withLock` finds the state at the storage's start. (Before the subscription is handed
        // out: no other thread sees this access.)
        assert(
            withUnsafeMutablePointer(to: &storage.pointee.state) { UnsafeMutableRawPointer($0) }
                == UnsafeMutableRawPointer(storage), "SubscriptionExtrasStorage.state must be its first field")
    }

    /// A block of its own, for a subscription that keeps no storage in place (freed by
    /// `deallocate()`, from the subscription's deinit).
    static func allocate(paths: [ObservedPath]) -> SubscriptionExtras {
        let storage = UnsafeMutablePointer<SubscriptionExtrasStorage>.allocate(capacity: 1)
        storage.initialize(to: SubscriptionExtrasStorage(paths: paths))
        return SubscriptionExtras(storage)
    }

    /// Frees a block made by `allocate(paths:)`.
    func deallocate() {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The observed paths; empty for a single-property change token.
    @inline(__always)
    var paths: [ObservedPath] { storage.pointee.paths }

    /// `paths`, borrowed in place for `body` (a copy of the array is a retain and a release).
    @inline(__always)
    func withPaths<Result>(_ body: (UnsafeBufferPointer<ObservedPath>) throws -> Result) rethrows -> Result {
        try storage.pointee.paths.withUnsafeBufferPointer(body)
    }

    /// Stores `visit` as the last change (a `Registry.nextVisit` stamp) that handled this
    /// subscription and returns the one before, so one change handles it once even if its path
    /// runs through the changed property twice.
    @inline(__always)
    func exchangeLastVisit(_ visit: UInt64) -> UInt64 {
        storage.pointee.lastVisit.exchange(visit, ordering: .relaxed)
    }

    /// Runs `body` with exclusive access to the state. Keep `body` short and free of user code.
    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        // The state is the storage's first field (checked in debug builds by `init`), reached
        // through a pointer of its own: an `inout` access to `storage.pointee.state` is an access
        // to the whole storage for the thread sanitizer, which then saw it overlap the lock's
        // own atomic operations on another thread. The lock makes the access exclusive.
        let state = UnsafeMutableRawPointer(storage).assumingMemoryBound(to: State.self)
        return try storage.pointee.lock.withLock { try body(&state.pointee) }
    }

    struct State {
        /// Where the paths run now.
        var edges = EdgeList()
        /// The parts few tokens use, in an object made at their first store: a path token
        /// without them ends and is freed without destroying each (W19).
        private(set) var rare: Rare?

        /// Change tokens: this tick's old value (tracked tokens: the last value delivered).
        var oldValue: Any? {
            get { rare?.oldValue }
            set {
                if rare == nil {
                    if case .none = newValue { return }
                    rare = Rare()
                }
                rare.unsafelyUnwrapped.oldValue = newValue
            }
        }

        /// `.endpointChanges`: the endpoints seen at the last delivery.
        var lastEndpoints: [StoredEndpoint] {
            get { rare?.lastEndpoints ?? [] }
            set {
                if rare == nil {
                    if newValue.isEmpty { return }
                    rare = Rare()
                }
                rare.unsafelyUnwrapped.lastEndpoints = newValue
            }
        }

        /// The paths' names, remembered when the root deinitializes.
        var rememberedDescription: String? {
            get { rare?.rememberedDescription }
            set {
                if rare == nil {
                    if newValue == nil { return }
                    rare = Rare()
                }
                rare.unsafelyUnwrapped.rememberedDescription = newValue
            }
        }
    }

    /// `State`'s rarely used parts; only under the extras' lock.
    final class Rare {
        var oldValue: Any?
        var lastEndpoints: [StoredEndpoint] = []
        var rememberedDescription: String?
    }

    /// Ends the extras (`Subscription.end()`): under the lock, detaches every edge but those on
    /// `skipped` (a dead root's registry, which holds no member any more) and empties the list,
    /// each edge moved out and its registry released there (as a retarget's `moveRun` releases
    /// the edges it replaces: a registry is no user object, and the lock may be held while taking
    /// a registry's lock); then the user values (an old value, endpoints), released outside
    /// every lock: a release may run a deinit, which may take these locks again.
    func end(skipping skipped: Registry?, hooks: inout ObservationStateHooks) {
        let hasUserValues = withLock { state -> Bool in
            state.edges.removeAll { edge in
                if edge.registry !== skipped {
                    // Borrowed: the edge holds it until the end of this closure.
                    Unmanaged.passUnretained(edge.registry)._withUnsafeGuaranteedRef {
                        $0.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks)
                    }
                }
            }
            return state.rare != nil
        }
        if hasUserValues { releaseUserValues() }
    }

    /// The rest of `end(skipping:hooks:)` for change and `.endpointChanges` tokens: the user
    /// values moved out under the lock, released after it (a remembered description stays).
    @inline(never)
    private func releaseUserValues() {
        let taken = withLock { state in (state.oldValue.take(), state.lastEndpoints.take()) }
        withExtendedLifetime(taken) {}
    }
}

extension Array {
    /// The array, leaving an empty one in its place (moved, not copied).
    fileprivate mutating func take() -> [Element] {
        var taken: [Element] = []
        swap(&taken, &self)
        return taken
    }
}

/// What `SubscriptionExtras` points at: kept in place (see there), never moved or copied.
struct SubscriptionExtrasStorage: ~Copyable {
    /// Only inside the lock (`SubscriptionExtras.withLock`). The first field: `withLock` reaches
    /// it at the storage's address.
    var state = SubscriptionExtras.State()
    /// Guards `state`.
    let lock = InlineLock()
    /// The observed paths; empty for a single-property change token.
    let paths: [ObservedPath]
    /// See `SubscriptionExtras.exchangeLastVisit(_:)`.
    let lastVisit = Atomic<UInt64>(0)

    init(paths: [ObservedPath]) {
        self.paths = paths
    }
}
