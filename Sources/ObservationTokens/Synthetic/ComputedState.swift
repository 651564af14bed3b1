import Synchronization

/// The state of one `@Computed` storage: the cached value, whether it is valid, and the
/// subscription that watches what the last computation read.
///
/// Validity is tracked apart from the value (a cached `nil` can be valid). `generation` counts
/// invalidations: a computation marks its result valid only if no invalidation happened since
/// it started, so an invalidation racing a read never leaves a stale value marked valid.
///
/// `@usableFromInline`, with the valid-value read inlinable: a getter reads a valid cached
/// value with the lock taken in the caller's module, specialized for `Value`.
@usableFromInline
final class ComputedState<Model: ObservableModel, Value>: Locked<ComputedState.Cache>, SyntheticStateProtocol,
    @unchecked Sendable
{  // see Locked; `compute` is the user's @Sendable closure
    @usableFromInline
    struct Cache {
        /// The last computed value, valid or not; nil before the first computation.
        @usableFromInline var value: Value?
        @usableFromInline var isValid = false
        var generation: UInt64 = 0
        /// Computations running now (started by reads that found the value invalid). While
        /// one runs, an invalidation tells dependants even though no valid value is cached:
        /// the running computation's result may already be on its way into one of theirs.
        var computing = 0
        /// The value tokens last heard of, for "notify only if changed".
        var published: Value?
        /// The subscription on the dependencies, created by the first computation.
        var dependencies: SyntheticDependencies?
        /// The object this storage belongs to, known from its first computation.
        weak var owner: Model?
    }

    /// The serial tokens observe (like an `@Observed` storage's).
    let serial: UInt64
    /// The serial dependent computed properties observe: changed on every invalidation.
    let invalidationSerial: UInt64
    let queue: CoalescingQueue
    let compute: @Sendable (Model) -> Value
    /// False for `@Lazy`: what the computation reads is not a dependency.
    let tracksDependencies: Bool
    /// The valid value for lock-free reads, when `Value` is plain bits of at most 32 bytes;
    /// changed only under the lock, with `Cache.value` and `Cache.isValid`.
    @usableFromInline let published = PublishedWords()
    /// `_accessCaptureCount`, reached from the state the getter has loaded.
    @usableFromInline let captureCount = accessCaptureCountAddress

    /// Dependencies declared at the declaration (`dependsOn:`), which replace tracking.
    let declared: DeclaredDependencies<Model>?

    var hasDependencies: Bool { tracksDependencies || declared != nil }

    init(
        queue: CoalescingQueue, tracksDependencies: Bool = true, declared: DeclaredDependencies<Model>? = nil,
        compute: @escaping @Sendable (Model) -> Value
    ) {
        self.tracksDependencies = tracksDependencies && declared == nil
        self.declared = declared
        serial = _observedSerials.wrappingAdd(2, ordering: .relaxed).oldValue
        invalidationSerial = serial + 1
        self.queue = queue
        self.compute = compute
        super.init(state: Cache())
    }

    deinit {
        // Runs as the owner's storage is destroyed: detach from the other objects read.
        let dependencies = withLock { $0.dependencies.take() }
        dependencies?.endAll()
    }

    var isValid: Bool { withLock { $0.isValid } }

    func value(of owner: ObservableModel) -> Any { read(unsafeDowncast(owner, to: Model.self)) }

    /// Whether `owner` has a token on this property, or on `*` (every property, this one too).
    private func isObserved(_ owner: Model) -> Bool {
        guard owner.hasEdges, let registry = owner.existingRegistry else { return false }
        let serial = serial
        return registry.withLock { state in
            state.properties.contains {
                ($0.serial == serial || $0.serial == PathStep.wildcardSerial) && !$0.members.isEmpty
            }
        }
    }

    // MARK: Reading

    /// The cached value if it is valid: the getter's fast path, inlined into the caller. Plain
    /// values of up to 32 bytes are read without the lock (``PublishedWords``).
    @inlinable @inline(__always)
    final func cachedIfValid() -> Value? {
        if PublishedWords.covers(Value.self) { return published.valid(as: Value.self) }
        return withLock { cache in cache.isValid ? cache.value : nil }
    }

    /// Marks `value` valid for lock-free readers too. Call under the lock.
    private func publish(_ value: Value) {
        if PublishedWords.covers(Value.self) { published.publish(value) }
    }

    /// The getter: the cached value if valid; otherwise a computation.
    @usableFromInline
    func read(_ owner: Model) -> Value {
        if _accessCaptureCount.load(ordering: .relaxed) != 0 {
            // A computed property reading this one depends on its invalidations; anyone else
            // (tokens, tracking closures) on its value.
            let recorded = SyntheticFrame.isComputing ? invalidationSerial : serial
            _recordObservedAccess(owner, serial: recorded, valueType: Value.self)
            if SyntheticFrame.isProbing, let stale = withLock({ $0.value }) { return stale }
        }
        let (cached, generation) = withLock { cache -> (Value?, UInt64) in
            if cache.isValid, let value = cache.value { return (value, cache.generation) }
            cache.computing += 1
            return (nil, cache.generation)
        }
        if let cached { return cached }
        return recompute(owner, generation: generation)
    }

    private func recompute(_ owner: Model, generation: UInt64) -> Value {
        withLock { cache in if cache.owner == nil { cache.owner = owner } }
        if SyntheticFrame.contains(self) {
            let name = SyntheticFields.name(of: self, in: owner)
            #if DEBUG
                assertionFailure(
                    "@Computed \(name) reads itself through its own computation (a cycle between computed properties): break the cycle"
                )
            #endif
            let stale = withLock { cache in
                cache.computing -= 1
                return cache.value
            }
            if let stale { return stale }
            preconditionFailure("@Computed \(name) is part of a cycle and has no value yet: break the cycle")
        }
        // Created for `@Lazy` too: it schedules the recomputation of an observed value.
        let dependencies = withLock { cache -> SyntheticDependencies in
            if let existing = cache.dependencies { return existing }
            let created = SyntheticDependencies(owner: owner, queue: queue, state: self)
            cache.dependencies = created
            return created
        }
        let scratch = TrackingScratch.allocate()
        defer { TrackingScratch.free(scratch) }
        let recording = scratch.recording
        // Each storage's edge is attached as the getter records it, before it reads (the
        // install race: a set between the read and a later wiring would be lost).
        if hasDependencies { recording.pointee.attacher = dependencies }
        let previous = AccessCapture.beginTracking(recording)
        var declaredCount = 0
        let value = SyntheticFrame.run(self) {
            if let declared {
                // Declared paths first, wired; then the closure, whose reads are not dependencies.
                declared.read(from: owner, property: SyntheticFields.name(of: self, in: owner))
                recording.pointee.attacher = nil
                declaredCount = scratch.pointee.accesses.count
            }
            return compute(owner)
        }
        AccessCapture.endTracking(restoring: previous)
        // Drops the edges of storages this computation no longer read.
        if tracksDependencies {
            dependencies.rewire(to: scratch.pointee.accesses)
        } else if declared != nil {
            dependencies.rewire(to: Array(scratch.pointee.accesses.prefix(declaredCount)))
        }
        scratch.pointee.accesses.removeAll()
        return store(value, owner: owner, generation: generation)
    }

    /// Caches a computed value; valid unless invalidated since `generation`. A computation
    /// that was invalidated while it ran never replaces a valid value: a later computation
    /// (started after the invalidation) cached it, and it is newer.
    private func store(_ value: Value, owner: Model, generation: UInt64) -> Value {
        let observed = isObserved(owner)
        let released = withLock { cache -> (Value?, Value?) in
            cache.computing -= 1
            if cache.generation != generation && cache.isValid { return (nil, nil) }
            let old = cache.value
            cache.value = value
            if cache.generation == generation {
                cache.isValid = true
                publish(value)
            }
            if !observed {
                let oldPublished = cache.published
                cache.published = value
                return (old, oldPublished)
            }
            return (old, nil)
        }
        withExtendedLifetime(released) {}  // user values released outside the lock
        return value
    }

    // MARK: Invalidating

    /// Marks the value invalid (O(1)); tells dependent computed properties; schedules an
    /// eager recomputation when tokens observe this one.
    func invalidate() {
        let (tellsDependants, owner) = withLock { cache -> (Bool, Model?) in
            cache.generation &+= 1
            published.withdraw()
            defer { cache.isValid = false }
            return (cache.isValid || cache.computing > 0, cache.owner)
        }
        guard let owner else { return }
        if tellsDependants { owner._propertyDidChange(serial: invalidationSerial) { () } }
        if isObserved(owner) { withLock { $0.dependencies }?.schedule() }
    }

    /// A `@Hybrid` set: stores the value, valid until the next invalidation; dependants are
    /// invalidated and tokens hear of it if it changed.
    func set(_ value: Value, owner: Model) {
        let previous = withLock { cache -> (old: Value?, published: Value?) in
            if cache.owner == nil { cache.owner = owner }
            cache.generation &+= 1
            cache.isValid = true
            publish(value)
            let old = cache.value
            cache.value = value
            let published = cache.published
            cache.published = value
            return (old, published)
        }
        owner._propertyDidChange(serial: invalidationSerial) { () }
        if let published = previous.published, _valuesAreIdentical(published, value) { return }
        owner._propertyDidChange(serial: serial) { previous.published as Any }
    }

    /// Marks the cached value valid, if there is one.
    func forceValid() {
        withLock { cache in
            if let value = cache.value {
                cache.isValid = true
                publish(value)
            }
        }
    }

    /// The end-of-tick recomputation of an observed value: notifies only if it changed.
    func recomputeEagerly(_ owner: Model) {
        let value = read(owner)
        let previous = withLock { cache -> Value? in
            defer { cache.published = value }
            return cache.published
        }
        if let previous, _valuesAreIdentical(previous, value) { return }
        owner._propertyDidChange(serial: serial) { previous as Any }
    }
}
