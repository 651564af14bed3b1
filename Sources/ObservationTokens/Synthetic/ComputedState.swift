import Synchronization

/// What a computed state keeps under its lock besides the value: validity, counts and versions.
/// Not generic, so that the state's (unspecialized) code takes its lock without looking up the
/// metadata of a generic type each time.
@usableFromInline
struct ComputedBookkeeping {
    /// Whether `ComputedState.storage` holds a value (valid or not).
    @usableFromInline var hasValue = false
    @usableFromInline var isValid = false
    var generation: UInt64 = 0
    /// Computations running now (started by reads that found the value invalid). While one
    /// runs, an invalidation tells dependants even though no valid value is cached: the running
    /// computation's result may already be on its way into one of theirs.
    var computing = 0
    /// The version of the stored value (0: none yet).
    var version: UInt64 = 0
    var nextVersion: UInt64 = 1
    /// The versions of the earlier values tokens may still hold (`ComputedState.history`), in
    /// the same order.
    var historyVersions: [UInt64] = []
    /// A one-word value's (`ComputedState.wordKind`) one earlier value, kept inline while
    /// `historyVersions` is empty (version 0: none): the usual case, a token holding the value
    /// before the current one until its delivery moves on, appends and removes nothing from the
    /// arrays (≈ 200 instructions per delivery, with the boxing). Only the one-word paths
    /// (`storeWordInPlace`, `value(ofVersion:)`, `dropVersion`) fill or read it in place; every
    /// other path moves it into the arrays first (`ComputedState.spillInline`), so it is set
    /// only while the arrays are empty.
    var inlineVersion: UInt64 = 0
    var inlineBits: UInt64 = 0
    /// Counts stores: a store that compared outside the lock commits only if none came in
    /// between.
    var stores: UInt64 = 0
    /// The subscription on the dependencies, created by the first computation.
    var dependencies: SyntheticDependencies?
    /// `dependencies`, unretained: a trivial copy, through which a computation's start calls
    /// it without a retain and a release (the state keeps it for its whole life).
    var unretainedDependencies: Unmanaged<SyntheticDependencies>?
    /// The owner's registry, known from the first computation (the registry never retains its
    /// owner; `weakOwner` gives it back while it lives).
    var registry: Registry?
    /// The tracking buffer computations reuse, and whether one is using it.
    var scratch: UnsafeMutablePointer<TrackingScratch>?
    var scratchBusy = false
    /// The computing frame (`SyntheticFrame.push`) of the computation holding `scratch`,
    /// allocated with it.
    var frame: UnsafeMutableRawPointer?
    /// The edges the computation holding `scratch` confirms its reads against
    /// (`AccessCapture.Recording.expected`), allocated with it; read and written only by that
    /// computation.
    var expected: UnsafeMutablePointer<[DependencyEdge]>?
    /// A release build reports a cycle once.
    var reportedCycle = false
}

/// What a computation takes under the lock as it starts (`ComputedState.beginComputing`).
/// Not generic: the state's unspecialized code builds it without looking up metadata.
private struct ComputeStart {
    var generation: UInt64
    var isFirst = false
    /// The dependencies were stale (`Subscription.clearStale`): the computation breaks the
    /// owner's settled marks before it reads (`Registry.breakSettledMarks`).
    var wasStale = false
    /// The state's reused tracking buffer, unless another computation has it.
    var scratch: UnsafeMutablePointer<TrackingScratch>?
    /// The frame memory that goes with `scratch`.
    var frame: UnsafeMutableRawPointer?
    /// The expected edges that go with `scratch`.
    var expected: UnsafeMutablePointer<[DependencyEdge]>?
    /// Unowned: the state keeps its dependencies' subscription for its whole life, and the
    /// computation's caller keeps the state.
    unowned(unsafe) var dependencies: SyntheticDependencies?

    init(generation: UInt64) { self.generation = generation }
}

/// What of a computed state does not depend on its model and value types: the serials, the
/// published valid value and the invalidation. Not generic, so that its dependencies'
/// subscription invalidates it through an unretained reference (`Unmanaged`, a direct call):
/// a call through the `unowned(unsafe)` existential retained and released the state around
/// each level of an invalidation chain.
@usableFromInline
class ComputedStateBase: Locked<ComputedBookkeeping>, @unchecked Sendable {  // see Locked
    /// The serial tokens observe (like an `@Observed` storage's), tagged `Registry.computedTag`.
    let serial: UInt64
    /// The serial dependent computed properties observe: changed on every invalidation.
    let invalidationSerial: UInt64
    /// The valid value for lock-free reads, when `Value` is plain bits of at most 32 bytes;
    /// changed only under the lock, with `storage` and `isValid`.
    @usableFromInline let published = PublishedWords()

    init() {
        let base = _observedSerials.wrappingAdd(2, ordering: .relaxed).oldValue
        serial = base | Registry.computedTag
        invalidationSerial = base + 1
        super.init(state: ComputedBookkeeping())
    }

    /// Marks the value invalid (O(1)); tells the computed properties that read it, and the
    /// tokens on it, which compare what they saw with the value when they are delivered.
    /// Computes nothing and runs no user code, except `.immediate` tokens on this property
    /// (unless `inDeinit`: then they are queued, as nothing may run inside a deinit).
    final func invalidate(owner: ObservableModelBase, inDeinit: Bool) {
        let tellsDependants = withLock { book -> Bool in
            book.generation &+= 1
            published.withdraw()
            defer { book.isValid = false }
            // Until a computation starts, a change of a dependency has nothing to invalidate:
            // the registry skips these dependencies (`Subscription.isStillStale`).
            if book.computing == 0 { book.dependencies?.markStale() }
            return book.isValid || book.computing > 0
        }
        guard tellsDependants else { return }
        owner._computedDidChange(invalidationSerial: invalidationSerial, serial: serial, inDeinit: inDeinit)
    }

    // The versions tokens compare (see `ComputedState`), here so that a delivery calls them
    // through an unretained reference to this class (`Registry.syncSeen`): a call through the
    // protocol's existential retained and released the state around it. Overridden by the one
    // subclass, `ComputedState`.

    /// The version of the value on `owner`, brought up to date first (`SyntheticStateProtocol`).
    func currentVersion(of owner: ObservableModelBase) -> UInt64 { preconditionFailure("overridden") }
    /// The value that had `version`, if still kept (`SyntheticStateProtocol`).
    func value(ofVersion version: UInt64) -> Any? { preconditionFailure("overridden") }
    /// Forgets an earlier value that no token holds any more (`SyntheticStateProtocol`).
    func dropVersion(_ version: UInt64) { preconditionFailure("overridden") }
}

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
/// saw", even after a change and a change back. Earlier values are kept only while some token
/// watches the property.
///
/// The value lives in raw storage beside the lock's bookkeeping, not in an `Optional<Value>`:
/// this code runs unspecialized (it is reached through the getter's slow path and through
/// deliveries), where every use of a generic type built from `Value` is a metadata lookup.
///
/// `@usableFromInline`, with the valid-value read inlinable: a getter reads a valid cached
/// value with the lock taken in the caller's module, specialized for `Value`.
@usableFromInline
final class ComputedState<Model: ObservableModelBase, Value>: ComputedStateBase, SyntheticStateProtocol,
    @unchecked Sendable
{  // see Locked; `compute` is the user's @Sendable closure; `storage` and `history` are guarded by the lock
    /// The last computed value when `hasValue`; guarded by the lock.
    @usableFromInline let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
    /// Earlier values tokens may still hold (see `historyVersions`); guarded by the lock.
    /// Boxed: an `[Any]` is a concrete type, where every use of a `[Value]` in this
    /// unspecialized code looks up its metadata (≈ 330 instructions per store of a new value).
    @exclusivity(unchecked) private var history: [Any] = []
    /// The `SyntheticDependencies.edgeChanges` the expected edges (`ComputedBookkeeping.expected`)
    /// are as of (see `recompute`); read and written only by the computation holding the
    /// reused buffer (`scratchBusy`, handed over under the lock).
    @exclusivity(unchecked) private var knownEdgeChanges: UInt64 = .max
    /// Set (under the lock) by the first store, never cleared: from then on `storage` holds a
    /// value, so a read can copy it out of the lock's closure as a plain `Value` (no optional
    /// or temporary buffer of `Value`, each a metadata lookup in this unspecialized code).
    private let hasStoredValue = Atomic<Bool>(false)

    let compute: @Sendable (Model) -> Value
    /// False for `@Lazy`: what the computation reads is not a dependency.
    let tracksDependencies: Bool
    /// `_accessCaptureCount`, reached from the state the getter has loaded.
    @usableFromInline let captureCount = accessCaptureCountAddress

    /// Dependencies declared at the declaration (`dependsOn:`), which replace tracking.
    let declared: DeclaredDependencies<Model>?
    /// How a plain one-word `Value` (`Int`, `Bool`, `Double`) is compared and stored by its
    /// bits; nil for every other type. Worked out once, so that the unspecialized code tests
    /// one stored byte instead of `Value`'s metadata.
    let wordKind: WordKind?

    var hasDependencies: Bool { tracksDependencies || declared != nil }

    init(
        tracksDependencies: Bool = true, declared: DeclaredDependencies<Model>? = nil,
        compute: @escaping @Sendable (Model) -> Value
    ) {
        self.tracksDependencies = tracksDependencies && declared == nil
        self.declared = declared
        self.compute = compute
        wordKind = WordKind(Value.self)
        super.init()
    }

    deinit {
        // Runs as the owner's storage is destroyed: detach from the other objects read.
        let dependencies = state.dependencies.take()
        dependencies?.stateWillDeinit()
        dependencies?.endAll()
        if state.hasValue { storage.deinitialize(count: 1) }
        storage.deallocate()
        if let scratch = state.scratch { TrackingScratch.free(scratch) }
        state.frame?.deallocate()
        if let expected = state.expected {
            expected.deinitialize(count: 1)
            expected.deallocate()
        }
    }

    var isValid: Bool { withLock { $0.isValid } }

    /// Whether a computation ever cached a value (a never-read property has nothing to drop).
    var hasValue: Bool { withLock { $0.hasValue } }

    func value(of owner: ObservableModelBase) -> Any { read(unsafeDowncast(owner, to: Model.self)) }

    override func currentVersion(of owner: ObservableModelBase) -> UInt64 {
        var version: UInt64 = 0
        _ = readVersioned(unsafeDowncast(owner, to: Model.self), version: &version)
        return version
    }

    override func value(ofVersion version: UInt64) -> Any? {
        withLock { book -> Any? in
            if book.hasValue, book.version == version { return storage.pointee }
            if version != 0, version == book.inlineVersion, let wordKind {
                var bits = book.inlineBits
                return wordKind.boxed(at: &bits)
            }
            guard let index = book.historyVersions.firstIndex(of: version) else { return nil }
            return history[index]
        }
    }

    override func dropVersion(_ version: UInt64) {
        if wordKind != nil {
            // A plain value: nothing to release outside the lock, nothing handed back.
            withLock { book in
                guard version != book.version else { return }
                // Usually the one kept inline (the value before the current one).
                if version == book.inlineVersion {
                    book.inlineVersion = 0
                    return
                }
                dropKeptWord(version, &book)
            }
            return
        }
        let dropped = withLock { book -> Any? in
            spillInline(&book)
            guard version != book.version, let index = book.historyVersions.firstIndex(of: version) else {
                return nil
            }
            // Usually the one kept (the value before the current one): removed from the end.
            if index == book.historyVersions.count - 1 {
                book.historyVersions.removeLast()
                return history.removeLast()
            }
            book.historyVersions.remove(at: index)
            return history.remove(at: index)
        }
        withExtendedLifetime(dropped) {}  // user values released outside the lock
    }

    /// `dropVersion` of a one-word value kept in the arrays, under the lock. Out of line, so
    /// that the usual drop (the one kept inline) is inlined into its lock's closure.
    @inline(never)
    private func dropKeptWord(_ version: UInt64, _ book: inout ComputedBookkeeping) {
        guard let index = book.historyVersions.lastIndex(of: version) else { return }
        // Usually the one kept (the value before the current one): removed from the end.
        if index == book.historyVersions.count - 1 {
            book.historyVersions.removeLast()
            history.removeLast()
        } else {
            book.historyVersions.remove(at: index)
            history.remove(at: index)
        }
    }

    // MARK: Reading

    /// The cached value if it is valid: the getter's fast path, inlined into the caller. Plain
    /// values of up to 32 bytes are read without the lock (``PublishedWords``).
    @inlinable @inline(__always)
    final func cachedIfValid() -> Value? {
        if PublishedWords.covers(Value.self) { return published.valid(as: Value.self) }
        return withLock { book in book.isValid && book.hasValue ? storage.pointee : nil }
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
    /// was overtaken by a newer one before it could be cached). Inlined into its two callers
    /// (`read`, `currentVersion`): a call less per level of a chain.
    @inline(__always)
    func readVersioned(_ owner: Model, version: inout UInt64) -> Value {
        var tokenRead = false
        if _accessCaptureCount.load(ordering: .relaxed) != 0 {
            // A computed property reading this one depends on its invalidations; anyone else
            // (tokens, tracking closures) on its value.
            tokenRead = !SyntheticFrame.isComputing
            _recordObservedAccess(owner, serial: tokenRead ? serial : invalidationSerial, valueType: Value.self)
            if SyntheticFrame.isProbing { return probingRead(owner, version: &version, tokenRead: tokenRead) }
        }
        let value = readCurrent(owner, version: &version)
        // A tracking read (a token's evaluation) notes the version it saw, for its edge here.
        if tokenRead { AccessCapture.noteVersion(version, serial: serial) }
        return value
    }

    /// `readVersioned` while probing: the cached value, valid or not, if there is one. Out of
    /// line: its `Value?` costs a metadata lookup in this unspecialized code, which the usual
    /// read should not pay.
    @inline(never)
    private func probingRead(_ owner: Model, version: inout UInt64, tokenRead: Bool) -> Value {
        if let probed = probedValue() {
            version = 0
            return probed
        }
        let value = readCurrent(owner, version: &version)
        if tokenRead { AccessCapture.noteVersion(version, serial: serial) }
        return value
    }

    /// The valid cached value, or a new computation's.
    private func readCurrent(_ owner: Model, version: inout UInt64) -> Value {
        guard let wordKind else { return readCurrentValue(owner, version: &version) }
        // A plain one-word value: copied out under the lock as its bits, and only if valid. No
        // temporary `Value` (each a metadata lookup here) and no optional start to unpack.
        var start = ComputeStart(generation: 0)
        var computes = false
        var bits: UInt64 = 0
        let slot = UnsafeRawPointer(storage)
        withLock { book in
            if book.isValid, book.hasValue {
                version = book.version
                bits = wordKind.bits(at: slot)
            } else {
                computes = true
                start = beginComputing(&book, owner: owner)
            }
        }
        if computes { return recompute(owner, start, version: &version) }
        return withUnsafeBytes(of: &bits) { $0.load(as: Value.self) }
    }

    /// `readCurrent` for a value that is not one plain word. Out of line: its temporary
    /// `Value` is a metadata lookup and a stack allocation, which the one-word read should not
    /// pay.
    @inline(never)
    private func readCurrentValue(_ owner: Model, version: inout UInt64) -> Value {
        if hasStoredValue.load(ordering: .acquiring) {
            var start: ComputeStart?
            let current = withLock { book -> Value in
                if book.isValid {
                    version = book.version
                } else {
                    start = beginComputing(&book, owner: owner)
                }
                return storage.pointee
            }
            // An invalid value's copy is simply dropped (outside the lock).
            guard let start else { return current }
            return recomputeValue(owner, start, version: &version)
        }
        let start = withLock { book in beginComputing(&book, owner: owner) }
        return recomputeValue(owner, start, version: &version)
    }

    /// Under the lock: a computation starts. Counts it in, and takes what it needs in the same
    /// round trip (the reused tracking buffer, the dependencies' subscription, created by the
    /// first computation). The usual start (an earlier computation made everything, and the
    /// reused buffer is free) is inlined into the read; the rest out of line.
    @inline(__always)
    private func beginComputing(_ book: inout ComputedBookkeeping, owner: Model) -> ComputeStart {
        guard book.registry != nil, !book.scratchBusy, book.scratch != nil,
            let dependencies = book.unretainedDependencies
        else { return beginFirstOrShared(&book, owner: owner) }
        book.computing += 1
        book.scratchBusy = true
        var start = ComputeStart(generation: book.generation)
        start.scratch = book.scratch
        start.frame = book.frame
        start.expected = book.expected
        start.wasStale = dependencies._withUnsafeGuaranteedRef { $0.clearStale() }
        start.dependencies = dependencies.takeUnretainedValue()
        return start
    }

    /// `beginComputing` for a first computation, or one while another has the reused buffer.
    @inline(never)
    private func beginFirstOrShared(_ book: inout ComputedBookkeeping, owner: Model) -> ComputeStart {
        book.computing += 1
        var start = ComputeStart(generation: book.generation)
        if book.registry == nil {
            book.registry = owner.registry
            start.isFirst = true
        }
        if !book.scratchBusy {
            if book.scratch == nil {
                book.scratch = TrackingScratch.allocate()
                book.frame = SyntheticFrame.allocateFrame()
                let expected = UnsafeMutablePointer<[DependencyEdge]>.allocate(capacity: 1)
                expected.initialize(to: [])
                book.expected = expected
            }
            book.scratchBusy = true
            start.scratch = book.scratch
            start.frame = book.frame
            start.expected = book.expected
        }
        // Created for `@Lazy` too: an object it was loaded from may deinitialize. Borrowed
        // where it is kept (a copy of the reference would retain and release it).
        if book.dependencies == nil {
            let dependencies = SyntheticDependencies(owner: owner, state: self)
            book.dependencies = dependencies
            book.unretainedDependencies = Unmanaged.passUnretained(dependencies)
        }
        // Through the unretained copy: a call on the stored reference retained and released it.
        let dependencies = book.unretainedDependencies.unsafelyUnwrapped
        start.wasStale = dependencies._withUnsafeGuaranteedRef { $0.clearStale() }
        start.dependencies = dependencies.takeUnretainedValue()
        return start
    }

    /// A probing read (`invalidate(_:)` finding which property a key path names): the cached
    /// value, valid or not; never computed, an empty value of the type, if it has one.
    private func probedValue() -> Value? {
        withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer -> Value? in
            let slot = buffer.baseAddress!
            let has = withLock { book -> Bool in
                guard book.hasValue else { return false }
                slot.initialize(to: storage.pointee)
                return true
            }
            if has { return slot.move() }
            // Never computed: nothing depends on it, so there is nothing to invalidate; a value
            // that is cheap to make up avoids computing just to find the property.
            return EmptyValue.make(Value.self)
        }
    }

    /// `recompute` for the reads of values that are not one plain word, out of line.
    @inline(never)
    private func recomputeValue(_ owner: Model, _ start: ComputeStart, version: inout UInt64) -> Value {
        recompute(owner, start, version: &version)
    }

    /// A computation, counted in by `beginComputing`. Inlined into the one-word read
    /// (`readCurrent`): a level of a chain of computed values is one frame, not two.
    @inline(__always)
    private func recompute(_ owner: Model, _ start: ComputeStart, version: inout UInt64) -> Value {
        let generation = start.generation
        // Unowned: the state keeps it (see `ComputeStart`); a strong copy would retain it.
        unowned(unsafe) let dependencies = start.dependencies.unsafelyUnwrapped
        // Before anything is read: a further set of a dependency may skip (`SettledMark`) only
        // while the value is stale.
        if start.wasStale { _ = owner.withExistingRegistry { $0.breakSettledMarks() } }
        if start.isFirst { owner.registry.registerComputed(self) }
        // Another thread computing this value has the reused buffer: one of this computation's own.
        let ownsScratch = start.scratch != nil
        let buffer = start.scratch ?? TrackingScratch.allocate()
        // Each way out gives the buffer back (`giveBack`), except the usual one: a one-word
        // value's store clears `scratchBusy` under its own lock (no call of a `defer` block,
        // which was out of line).
        if SyntheticFrame.contains(self) {
            let value = cycleValue(owner, version: &version)
            giveBack(buffer, owned: ownsScratch)
            return value
        }
        let recording = buffer.recording
        // Each storage's edge is attached as the getter records it, before it reads (the
        // install race: a set between the read and a later wiring would be lost).
        if hasDependencies { recording.pointee.attacher = dependencies }
        // The expected edges are the storages the last computation with the reused buffer read:
        // while no other computation changed the edges since, reads of those storages in the
        // same order are confirmed in place (nothing recorded, retained or attached: each has
        // its edge), the steady state of a computation. Threads: only the computation holding
        // the reused buffer (`scratchBusy`, taken and given back under the lock) reads or writes
        // the expected list and `knownEdgeChanges`. Another thread's computation meanwhile (with
        // a buffer of its own) confirms nothing and may rewire the edges; that moves
        // `edgeChanges`, so this one then records what it confirmed (`materialize`: the expected
        // list still retains those registries, whatever the edges hold now) and rewires too.
        var knownIsCurrent = false
        let expected = start.expected
        if let expected, tracksDependencies, knownEdgeChanges == dependencies.currentEdgeChanges {
            recording.pointee.expected = UnsafePointer(expected)
            knownIsCurrent = true
        }
        let previous = AccessCapture.beginTracking(recording)
        var declaredCount = 0
        let value: Value
        if let frame = start.frame, declared == nil {
            // The frame in the reused buffer's memory: no closure, no generic helper.
            let previousFrame = SyntheticFrame.push(self, into: frame)
            value = compute(owner)
            SyntheticFrame.pop(restoring: previousFrame)
        } else {
            value = SyntheticFrame.run(self) {
                if let declared {
                    // Declared paths first, wired; then the closure, whose reads are not dependencies.
                    declared.read(from: owner, property: SyntheticFields.name(of: self, in: owner))
                    recording.pointee.attacher = nil
                    declaredCount = buffer.pointee.accesses.count
                }
                return compute(owner)
            }
        }
        AccessCapture.endTracking(restoring: previous)
        // Drops the edges of storages this computation no longer read.
        if tracksDependencies {
            // The steady state, checked without the dependencies' lock: this computation read
            // exactly the expected storages, and no computation changed the edges since they
            // were expected. Confirmed in place, it recorded nothing; otherwise (a read that
            // differed, or fewer reads) the accesses are compared as recorded.
            var isSteady =
                knownIsCurrent && recording.pointee.expected != nil
                && recording.pointee.confirmed == expected.unsafelyUnwrapped.pointee.count
                && dependencies.currentEdgeChanges == knownEdgeChanges
            if !isSteady {
                AccessCapture.materialize(recording)
                isSteady =
                    knownIsCurrent
                    && AccessCapture.edges(
                        expected.unsafelyUnwrapped.pointee, match: buffer.pointee.accesses,
                        storage: { AccessCapture.KnownEdge(registry: ObjectIdentifier($0.registry), serial: $0.serial) }
                    )
                    && dependencies.currentEdgeChanges == knownEdgeChanges
            }
            if !isSteady {
                let (changes, edges) = dependencies.rewire(to: buffer.pointee.accesses)
                if let expected {
                    knownEdgeChanges = changes
                    // The list it replaces is released here, outside every lock.
                    expected.pointee = edges
                }
            }
        } else if declared != nil {
            dependencies.rewire(to: Array(buffer.pointee.accesses.prefix(declaredCount)))
        }
        if ownsScratch, let wordKind {
            while !buffer.pointee.accesses.isEmpty { buffer.pointee.accesses.removeLast() }
            let keepsHistory = owner.observedBits.load(ordering: .relaxed) & Registry.serialBit(serial) != 0
            let bits = wordKind.bits(of: value)
            if let stored = storeWordInPlace(
                bits, kind: wordKind, generation: generation, keepsHistory: keepsHistory, releasingScratch: true)
            {
                // The buffer is given back (emptied above): not to be touched again here.
                version = stored
                return value
            }
        }
        version = store(value, generation: generation, owner: owner)
        giveBack(buffer, owned: ownsScratch)
        return value
    }

    /// Gives a computation's tracking buffer back, emptied (usually one or two accesses:
    /// removed one by one, as `removeAll(keepingCapacity:)` goes through a general
    /// replacement): the state's reused one (`owned`) by clearing `scratchBusy`, one of its own
    /// by freeing it.
    @inline(__always)
    private func giveBack(_ buffer: UnsafeMutablePointer<TrackingScratch>, owned: Bool) {
        while !buffer.pointee.accesses.isEmpty { buffer.pointee.accesses.removeLast() }
        if owned {
            withLock { $0.scratchBusy = false }
        } else {
            TrackingScratch.free(buffer)
        }
    }

    /// `store` for a `wordKind` value (`Int`, `Bool`, `Double`: compared without user code,
    /// releasing nothing), as its bits: compared, committed and published in one lock round
    /// trip as one machine word, with no call through `Value`'s metadata (this code is
    /// unspecialized); also gives the reused buffer back if `releasingScratch`. Nil, changing
    /// nothing, when earlier values are kept (the general `store` compares with those). No
    /// pruning: the earlier value this store may keep is a plain value, and the next store goes
    /// through `store`, which prunes, while any is kept. Inlined into `recompute`, its one
    /// caller.
    @inline(__always)
    private func storeWordInPlace(
        _ bits: UInt64, kind: WordKind, generation: UInt64, keepsHistory: Bool, releasingScratch: Bool
    ) -> UInt64? {
        let slot = UnsafeMutableRawPointer(storage)
        return withLock { book -> UInt64? in
            // An earlier value kept (in the arrays, or inline): the general `store` compares
            // with it (a change back takes its version).
            guard book.historyVersions.isEmpty, book.inlineVersion == 0 else { return nil }
            if releasingScratch { book.scratchBusy = false }
            book.computing -= 1
            // Overtaken: the newer valid value stays; this one goes back to its reader alone.
            if book.generation != generation && book.isValid { return 0 }
            book.stores &+= 1
            if book.hasValue, book.version != 0, kind.equal(kind.bits(at: slot), bits) {
                // Equal to the current value: the same version.
                kind.store(bits, at: slot)
            } else {
                if book.hasValue, keepsHistory, book.version != 0 {
                    // Inline: the arrays are empty and the slot free (the guard above).
                    book.inlineVersion = book.version
                    book.inlineBits = kind.bits(at: slot)
                }
                kind.store(bits, at: slot)
                book.version = book.nextVersion
                book.nextVersion &+= 1
                if !book.hasValue {
                    book.hasValue = true
                    hasStoredValue.store(true, ordering: .releasing)
                }
            }
            if book.generation == generation {
                book.isValid = true
                published.publish(bits: bits)
            }
            return book.version
        }
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
        return withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer -> Value in
            let slot = buffer.baseAddress!
            var firstReport = false
            var staleVersion: UInt64 = 0
            let has = withLock { book -> Bool in
                book.computing -= 1
                firstReport = !book.reportedCycle
                book.reportedCycle = true
                staleVersion = book.version
                guard book.hasValue else { return false }
                slot.initialize(to: storage.pointee)
                return true
            }
            if firstReport { _logMisuse(message + "; returning \(has ? "the last value" : "an empty value")") }
            if has {
                version = staleVersion
                return slot.move()
            }
            version = 0
            if let empty = EmptyValue.make(Value.self) { return empty }
            preconditionFailure("@Computed \(name) is part of a cycle and has no value yet: break the cycle")
        }
    }

    /// Caches a computed value; valid unless invalidated since `generation`. A computation
    /// that was invalidated while it ran never replaces a valid value: a later computation
    /// (started after the invalidation) cached it, and it is newer. Returns the value's version
    /// (0 when it was overtaken and not cached).
    ///
    /// The value is compared with the current one (and with the earlier ones tokens still hold,
    /// if any) outside the lock — `==` is user code — and committed only if no other store came
    /// in between (else compared again). Earlier values are kept only while tokens watch the
    /// property (`owner`'s observed bits say whether any may).
    private func store(_ value: Value, generation: UInt64, owner: Model) -> UInt64 {
        while true {
            var overtaken = false
            var version: UInt64 = 0
            var stores: UInt64 = 0
            var historyCount = 0
            // The current value, compared outside the lock.
            var equalsCurrent = false
            var hasCurrent = false
            if hasStoredValue.load(ordering: .acquiring) {
                let current = withLock { book -> Value in
                    spillInline(&book)
                    if book.generation != generation && book.isValid {
                        book.computing -= 1
                        overtaken = true
                    } else {
                        version = book.version
                        stores = book.stores
                        historyCount = book.historyVersions.count
                        hasCurrent = book.version != 0
                    }
                    return storage.pointee
                }
                if !overtaken, hasCurrent { equalsCurrent = _valuesAreIdentical(current, value) }
            } else {
                withLock { book in
                    spillInline(&book)
                    if book.generation != generation && book.isValid {
                        book.computing -= 1
                        overtaken = true
                        return
                    }
                    version = book.version
                    stores = book.stores
                    historyCount = book.historyVersions.count
                }
            }
            // Overtaken: the newer valid value stays; this one goes back to its reader alone.
            if overtaken { return 0 }
            var reused: UInt64 = equalsCurrent ? version : 0
            if !equalsCurrent, historyCount > 0 { reused = earlierVersion(equalTo: value) }
            let keepsHistory = owner.observedBits.load(ordering: .relaxed) & Registry.serialBit(serial) != 0
            var committed = false
            var prunes = false
            // The value this store replaces (or, with nothing to release, a copy of the new one),
            // released after the lock; an earlier one it makes redundant goes after it.
            var dropsEarlier = false
            let released = withLock { book -> Value in
                guard book.stores == stores else { return value }
                spillInline(&book)
                committed = true
                book.stores &+= 1
                book.computing -= 1
                var released = value
                if book.hasValue {
                    if reused != 0, reused == book.version {
                        // Equal to the current value: the same version, the new instance kept.
                        released = storage.move()
                    } else if keepsHistory, book.version != 0 {
                        book.historyVersions.append(book.version)
                        history.append(storage.move() as Any)
                    } else {
                        released = storage.move()
                    }
                }
                if reused == 0 || reused != book.version {
                    if reused != 0, book.historyVersions.contains(reused) {
                        // The earlier instance goes (below); the new one is kept under its version.
                        dropsEarlier = true
                        book.version = reused
                    } else {
                        book.version = book.nextVersion
                        book.nextVersion &+= 1
                    }
                }
                version = book.version
                storage.initialize(to: value)
                if !book.hasValue {
                    book.hasValue = true
                    hasStoredValue.store(true, ordering: .releasing)
                }
                if book.generation == generation {
                    book.isValid = true
                    publish(value)
                }
                prunes = !book.historyVersions.isEmpty
                return released
            }
            // User values released outside the lock.
            withExtendedLifetime(released) {}
            if dropsEarlier { removeEarlier(reused) }
            if committed {
                if prunes { pruneHistory() }
                return version
            }
        }
    }

    /// Moves the earlier value kept inline (`ComputedBookkeeping.inlineVersion`) to the end of
    /// the arrays (empty while it is set), for the paths that look only there. Call under the
    /// lock.
    @inline(__always)
    private func spillInline(_ book: inout ComputedBookkeeping) {
        guard book.inlineVersion != 0, let wordKind else { return }
        var bits = book.inlineBits
        book.historyVersions.append(book.inlineVersion)
        history.append(wordKind.boxed(at: &bits))
        book.inlineVersion = 0
    }

    /// Removes the earlier value of `version` (now the current one's again), released outside
    /// the lock.
    private func removeEarlier(_ version: UInt64) {
        var removed: [Any] = []
        withLock { book in
            spillInline(&book)
            guard let index = book.historyVersions.firstIndex(of: version) else { return }
            book.historyVersions.remove(at: index)
            removed.append(history.remove(at: index))
        }
        withExtendedLifetime(removed) {}
    }

    /// The version of an earlier value equal to `value` that tokens still hold, or 0. Compares
    /// outside the lock (a copy of the earlier values).
    private func earlierVersion(equalTo value: Value) -> UInt64 {
        var versions: [UInt64] = []
        var values: [Any] = []
        withLock { book in
            spillInline(&book)
            versions = book.historyVersions
            values = history
        }
        for index in values.indices {
            if let earlier = values[index] as? Value, _valuesAreIdentical(earlier, value) { return versions[index] }
        }
        return 0
    }

    /// Drops the earlier values no token holds any more (normally each goes as its last holder
    /// moves on; this catches those whose holders ended instead).
    private func pruneHistory() {
        var held: [UInt64] = []
        let registry = withLock { book -> Registry? in
            spillInline(&book)
            held = book.historyVersions
            return book.registry
        }
        guard !held.isEmpty, let registry else { return }
        for version in held where !registry.isSeen(serial: serial, version: version) { dropVersion(version) }
    }

    // MARK: Invalidating

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
        var isFirst = false
        var wasStale = false
        let generation = withLock { book -> UInt64 in
            book.generation &+= 1
            book.computing += 1  // `store` counts it out
            wasStale = book.dependencies?.clearStale() ?? false
            if book.registry == nil {
                book.registry = owner.registry
                isFirst = true
            }
            return book.generation
        }
        if wasStale { _ = owner.withExistingRegistry { $0.breakSettledMarks() } }
        if isFirst { owner.registry.registerComputed(self) }
        _ = store(value, generation: generation, owner: owner)
        owner._computedDidChange(invalidationSerial: invalidationSerial, serial: serial, inDeinit: false)
    }

    /// Marks the cached value valid, if there is one.
    func forceValid() {
        let staleRegistry = withLock { book -> Registry? in
            guard book.hasValue else { return nil }
            book.isValid = true
            let wasStale = book.dependencies?.clearStale() ?? false
            publish(storage.pointee)
            return wasStale ? book.registry : nil
        }
        // Valid again: a further set of a dependency must invalidate it (see `recompute`).
        staleRegistry?.breakSettledMarks()
    }

    /// Tests: how many earlier values are kept.
    var historyCount: Int { withLock { $0.historyVersions.count + ($0.inlineVersion != 0 ? 1 : 0) } }
}

/// A plain value of one machine word that compares without user code, handled by its bits in
/// unspecialized code (`ComputedState.wordKind`). Compares as `_valuesAreIdentical` does: `==`.
enum WordKind {
    case int
    case bool
    case double

    init?(_ type: Any.Type) {
        if type == Int.self {
            self = .int
        } else if type == Bool.self {
            self = .bool
        } else if type == Double.self {
            self = .double
        } else {
            return nil
        }
    }

    /// The bits of the value at `pointer`, as `PublishedWords` lays them out (little-endian,
    /// zero above the value's size).
    @inline(__always)
    func bits(at pointer: UnsafeRawPointer) -> UInt64 {
        switch self {
        case .int: UInt64(UInt(bitPattern: pointer.load(as: Int.self)))
        case .bool: pointer.load(as: Bool.self) ? 1 : 0
        case .double: pointer.load(as: Double.self).bitPattern
        }
    }

    /// The bits of `value`, a value of the kind's type, without a call through its metadata
    /// (`withUnsafeBytes(of:)` was one in unspecialized code).
    @inline(__always)
    func bits<Value>(of value: Value) -> UInt64 {
        switch self {
        case .int: UInt64(UInt(bitPattern: unsafeBitCast(value, to: Int.self)))
        case .bool: unsafeBitCast(value, to: Bool.self) ? 1 : 0
        case .double: unsafeBitCast(value, to: Double.self).bitPattern
        }
    }

    /// Overwrites the (initialized, trivial) value at `pointer` with the one `bits` hold.
    @inline(__always)
    func store(_ bits: UInt64, at pointer: UnsafeMutableRawPointer) {
        switch self {
        case .int: pointer.storeBytes(of: Int(bitPattern: UInt(bits)), as: Int.self)
        case .bool: pointer.storeBytes(of: bits != 0, as: Bool.self)
        case .double: pointer.storeBytes(of: Double(bitPattern: bits), as: Double.self)
        }
    }

    /// `==` of the two values (for `Double`: `0 == -0`, `nan != nan`).
    @inline(__always)
    func equal(_ lhs: UInt64, _ rhs: UInt64) -> Bool {
        switch self {
        case .int, .bool: lhs == rhs
        case .double: Double(bitPattern: lhs) == Double(bitPattern: rhs)
        }
    }

    /// The value at `pointer`, boxed as its own type.
    func boxed(at pointer: UnsafeRawPointer) -> Any {
        switch self {
        case .int: pointer.load(as: Int.self)
        case .bool: pointer.load(as: Bool.self)
        case .double: pointer.load(as: Double.self)
        }
    }
}
