import Synchronization

/// The state of one `@Computed` storage: the cached value, whether it is valid, the version
/// tokens compare with, and the subscription that watches what the last computation read.
///
/// Validity is tracked apart from the value (a cached `nil` can be valid). `generation` counts
/// invalidations: a computation marks its result valid only if no invalidation happened since
/// it started, so an invalidation racing a read never leaves a stale value marked valid.
///
/// Versions: every distinct value the property has held gets a number. A token remembers, per
/// computed value it watches, the version it last saw (its registry keeps that, by edge); a
/// delivery brings the value up to date and compares versions. A new value equal to the current
/// one keeps its version, and one equal to an earlier value that a token still holds gets that
/// earlier version back (`history`), so "changed" always means "differs from what this token
/// saw", even after a change and a change back.
///
/// `@usableFromInline`, with the valid-value read inlinable: a getter reads a valid cached
/// value with the lock taken in the caller's module, specialized for `Value`.
@usableFromInline
final class ComputedState<Model: ObservableModelBase, Value>: Locked<ComputedState.Cache>, SyntheticStateProtocol,
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
        /// The version of `value` (0: none yet).
        var version: UInt64 = 0
        var nextVersion: UInt64 = 1
        /// Earlier values that tokens may still hold, with their versions; an entry goes when
        /// its last holder moves on (`Registry.swapSeen`).
        var history: [(version: UInt64, value: Value)] = []
        /// Counts stores: a store that compared outside the lock commits only if none came in
        /// between.
        var stores: UInt64 = 0
        /// The subscription on the dependencies, created by the first computation.
        var dependencies: SyntheticDependencies?
        /// The owner's registry, known from the first computation (the registry never retains
        /// its owner; `weakOwner` gives it back while it lives).
        var registry: Registry?
        /// A release build reports a cycle once.
        var reportedCycle = false
    }

    /// The serial tokens observe (like an `@Observed` storage's), tagged `Registry.computedTag`.
    let serial: UInt64
    /// The serial dependent computed properties observe: changed on every invalidation.
    let invalidationSerial: UInt64
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
        tracksDependencies: Bool = true, declared: DeclaredDependencies<Model>? = nil,
        compute: @escaping @Sendable (Model) -> Value
    ) {
        self.tracksDependencies = tracksDependencies && declared == nil
        self.declared = declared
        let base = _observedSerials.wrappingAdd(2, ordering: .relaxed).oldValue
        serial = base | Registry.computedTag
        invalidationSerial = base + 1
        self.compute = compute
        super.init(state: Cache())
    }

    deinit {
        // Runs as the owner's storage is destroyed: detach from the other objects read.
        let dependencies = withLock { $0.dependencies.take() }
        dependencies?.endAll()
    }

    var isValid: Bool { withLock { $0.isValid } }

    /// Whether a computation ever cached a value (a never-read property has nothing to drop).
    var hasValue: Bool { withLock { $0.value != nil } }

    func value(of owner: ObservableModelBase) -> Any { read(unsafeDowncast(owner, to: Model.self)) }

    func currentVersion(of owner: ObservableModelBase) -> UInt64 {
        var version: UInt64 = 0
        _ = readVersioned(unsafeDowncast(owner, to: Model.self), version: &version)
        return version
    }

    func value(ofVersion version: UInt64) -> Any? {
        withLock { cache -> Value? in
            if cache.version == version { return cache.value }
            return cache.history.first { $0.version == version }?.value
        }
    }

    func dropVersion(_ version: UInt64) {
        let dropped = withLock { cache -> Value? in
            guard version != cache.version, let index = cache.history.firstIndex(where: { $0.version == version })
            else { return nil }
            return cache.history.remove(at: index).value
        }
        withExtendedLifetime(dropped) {}  // user values released outside the lock
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

    /// The getter's slow path: the cached value if valid; otherwise a computation.
    @usableFromInline
    func read(_ owner: Model) -> Value {
        var version: UInt64 = 0
        return readVersioned(owner, version: &version)
    }

    /// `read`, also setting `version` to the version of the value returned (0 when that value
    /// was overtaken by a newer one before it could be cached). No tuples of `Value`: in this
    /// unspecialized code each one costs a metadata lookup.
    func readVersioned(_ owner: Model, version: inout UInt64) -> Value {
        var tokenRead = false
        if _accessCaptureCount.load(ordering: .relaxed) != 0 {
            // A computed property reading this one depends on its invalidations; anyone else
            // (tokens, tracking closures) on its value.
            tokenRead = !SyntheticFrame.isComputing
            _recordObservedAccess(owner, serial: tokenRead ? serial : invalidationSerial, valueType: Value.self)
            if SyntheticFrame.isProbing {
                version = 0
                if let stale = withLock({ $0.value }) { return stale }
                // Never computed: nothing depends on it, so there is nothing to invalidate;
                // a value that is cheap to make up avoids computing just to find the property.
                if let placeholder = EmptyValue.make(Value.self) { return placeholder }
            }
        }
        var generation: UInt64 = 0
        let cached = withLock { cache -> Value? in
            generation = cache.generation
            if cache.isValid, let value = cache.value {
                version = cache.version
                return value
            }
            cache.computing += 1
            return nil
        }
        let value = cached ?? recompute(owner, generation: generation, version: &version)
        // A tracking read (a token's evaluation) notes the version it saw, for its edge here.
        if tokenRead { AccessCapture.noteVersion(version, serial: serial) }
        return value
    }

    private func recompute(_ owner: Model, generation: UInt64, version: inout UInt64) -> Value {
        let isFirst = withLock { cache -> Bool in
            guard cache.registry == nil else { return false }
            cache.registry = owner.registry
            return true
        }
        if isFirst { owner.registry.registerComputed(self) }
        if SyntheticFrame.contains(self) { return cycleValue(owner, version: &version) }
        // Created for `@Lazy` too: an object it was loaded from may deinitialize.
        let dependencies = withLock { cache -> SyntheticDependencies in
            if let existing = cache.dependencies { return existing }
            let created = SyntheticDependencies(owner: owner, state: self)
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
        version = store(value, generation: generation)
        return value
    }

    /// A read of this property from inside its own computation (a cycle between computed
    /// properties, a programming error): a debug build traps naming the property; a release
    /// build logs once and returns the last cached value, or else the type's empty value
    /// (`nil`, `0`, `false`, `""`, `[]`, …). A type with neither has no value to give: that one
    /// case traps in a release build too.
    private func cycleValue(_ owner: Model, version: inout UInt64) -> Value {
        let name = SyntheticFields.name(of: self, in: owner)
        let message =
            "@Computed \(name) reads itself through its own computation (a cycle between computed properties): break the cycle"
        _reportMisuse(message)  // a debug build stops here
        var firstReport = false
        var staleVersion: UInt64 = 0
        let stale = withLock { cache -> Value? in
            cache.computing -= 1
            firstReport = !cache.reportedCycle
            cache.reportedCycle = true
            staleVersion = cache.version
            return cache.value
        }
        if firstReport { _logMisuse(message + "; returning \(stale == nil ? "an empty value" : "the last value")") }
        version = stale == nil ? 0 : staleVersion
        if let stale { return stale }
        if let empty = EmptyValue.make(Value.self) { return empty }
        preconditionFailure("@Computed \(name) is part of a cycle and has no value yet: break the cycle")
    }

    /// Caches a computed value; valid unless invalidated since `generation`. A computation
    /// that was invalidated while it ran never replaces a valid value: a later computation
    /// (started after the invalidation) cached it, and it is newer. Returns the value's version
    /// (0 when it was overtaken and not cached).
    ///
    /// The value is compared with the current one (and with the earlier ones tokens still hold,
    /// if any) outside the lock — `==` is user code — and committed only if no other store came
    /// in between (else compared again).
    private func store(_ value: Value, generation: UInt64) -> UInt64 {
        while true {
            var overtaken = false
            var version: UInt64 = 0
            var stores: UInt64 = 0
            var history: [(version: UInt64, value: Value)] = []
            let current = withLock { cache -> Value? in
                if cache.generation != generation && cache.isValid {
                    cache.computing -= 1
                    overtaken = true
                    return nil
                }
                version = cache.version
                stores = cache.stores
                if !cache.history.isEmpty { history = cache.history }
                return cache.value
            }
            // Overtaken: the newer valid value stays; this one goes back to its reader alone.
            if overtaken { return 0 }
            var reused: UInt64 = 0
            if version != 0, let current, _valuesAreIdentical(current, value) {
                reused = version
            } else {
                for earlier in history where _valuesAreIdentical(earlier.value, value) {
                    reused = earlier.version
                    break
                }
            }
            var committed = false
            var prunes = false
            let released = withLock { cache -> Value? in
                guard cache.stores == stores else { return nil }
                committed = true
                cache.stores &+= 1
                cache.computing -= 1
                var released = cache.value
                if reused == 0 || reused != cache.version {
                    if let old = cache.value, cache.version != 0 {
                        cache.history.append((cache.version, old))
                        released = nil
                    }
                    if reused != 0, let index = cache.history.firstIndex(where: { $0.version == reused }) {
                        released = cache.history.remove(at: index).value
                        cache.version = reused
                    } else {
                        cache.version = cache.nextVersion
                        cache.nextVersion &+= 1
                    }
                }
                version = cache.version
                cache.value = value
                if cache.generation == generation {
                    cache.isValid = true
                    publish(value)
                }
                prunes = !cache.history.isEmpty
                return released
            }
            withExtendedLifetime(released) {}  // user values released outside the lock
            withExtendedLifetime(history) {}
            if committed {
                if prunes { pruneHistory() }
                return version
            }
        }
    }

    /// Drops the earlier values no token holds any more (normally each goes as its last holder
    /// moves on; this catches those whose holders ended instead).
    private func pruneHistory() {
        var held: [UInt64] = []
        let registry = withLock { cache -> Registry? in
            for earlier in cache.history { held.append(earlier.version) }
            return cache.registry
        }
        guard !held.isEmpty, let registry else { return }
        let unheld = held.filter { !registry.isSeen(serial: serial, version: $0) }
        for version in unheld { dropVersion(version) }
    }

    // MARK: Invalidating

    /// Marks the value invalid (O(1)); tells the computed properties that read it, and the
    /// tokens on it, which compare what they saw with the value when they are delivered.
    /// Computes nothing and runs no user code, except `.immediate` tokens on this property
    /// (unless `inDeinit`: then they are queued, as nothing may run inside a deinit).
    func invalidate(owner: ObservableModelBase, inDeinit: Bool) {
        let tellsDependants = withLock { cache -> Bool in
            cache.generation &+= 1
            published.withdraw()
            defer { cache.isValid = false }
            return cache.isValid || cache.computing > 0
        }
        guard tellsDependants else { return }
        owner._computedDidChange(invalidationSerial: invalidationSerial, serial: serial, inDeinit: inDeinit)
    }

    /// `invalidate(owner:inDeinit:)` for the wrapper's `invalidate()`, which has no owner at
    /// hand: found through the registry, if a computation ever ran (else there is nothing to
    /// drop).
    func invalidate() {
        guard let owner = withLock({ $0.registry })?.weakOwner else { return }
        invalidate(owner: owner, inDeinit: false)
    }

    /// A `@Hybrid` set: stores the value, valid until the next invalidation; dependants are
    /// invalidated, and tokens compare it with what they saw when they are delivered.
    func set(_ value: Value, owner: Model) {
        let isFirst = withLock { cache -> Bool in
            cache.generation &+= 1
            cache.computing += 1  // `store` counts it out
            guard cache.registry == nil else { return false }
            cache.registry = owner.registry
            return true
        }
        if isFirst { owner.registry.registerComputed(self) }
        let generation = withLock { $0.generation }
        _ = store(value, generation: generation)
        owner._computedDidChange(invalidationSerial: invalidationSerial, serial: serial, inDeinit: false)
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
}

/// What a release build can return for a value it has no way to compute: `nil` for optionals,
/// the empty collection or string, zero, `false`; plain-bits types zero-filled.
enum EmptyValue {
    static func make<Value>(_: Value.Type) -> Value? {
        if let optional = Value.self as? any ExpressibleByNilLiteral.Type {
            return optional.init(nilLiteral: ()) as? Value
        }
        if let collection = Value.self as? any RangeReplaceableCollection.Type { return collection.init() as? Value }
        if let set = Value.self as? any SetAlgebra.Type { return set.init() as? Value }
        if let dictionary = Value.self as? any ExpressibleByDictionaryLiteral.Type {
            return emptyDictionary(dictionary) as? Value
        }
        if let number = Value.self as? any AdditiveArithmetic.Type { return number.zero as? Value }
        if _isPOD(Value.self) {
            // Zero bits: a valid value of every plain type made of numbers, booleans and
            // enums without payloads (their first case).
            return withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw.initializeMemory(as: UInt8.self, repeating: 0)
                return buffer.baseAddress!.move()
            }
        }
        return nil
    }

    private static func emptyDictionary<D: ExpressibleByDictionaryLiteral>(_: D.Type) -> D { [:] }
}
