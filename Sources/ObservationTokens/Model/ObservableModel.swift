import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The base class for model objects whose `@Observed` properties can be observed with tokens.
///
/// Subclass it and mark each observable stored property with ``Observed``:
///
/// ```swift
/// final class Person: ObservableModel {
///     @Observed var firstName = ""
///     @Observed var lastName = ""
/// }
///
/// let person = Person()
/// let token = person.observe(\.firstName) { person in
///     print("now", person.firstName)
/// }
/// person.firstName = "Ada"   // one callback at the end of this tick, on the main thread
/// ```
///
/// `ObservableModel` names this class together with ``ModelObserving``, the protocol that
/// carries the `observe` methods. Naming a protocol that inherits `SendableMetatype` in the class
/// declaration is what keeps a model `nonisolated` in a module whose default isolation is the
/// main actor (new app targets): `final class Person: ObservableModel` compiles there as
/// written, and its properties can be read by computed values and tokens on any thread. A
/// subclass of your own model class names it again: `final class Student: Person, ModelObserving`
/// (or is declared `nonisolated`).
///
/// The object keeps a weak set of the tokens that observe it; it never retains them, and tokens
/// never retain it. When it deinitializes, every token rooted at it ends, and observers that
/// adopt ``ObservedObjectDeinitObserver`` are told.
///
/// > Note: From the moment an observed property is set until that change is delivered, the
/// > object is retained by the pending delivery, so its observers run before it goes away.
public typealias ObservableModel = ObservableModelBase & ModelObserving

/// The class behind ``ObservableModel``: subclass it as `ObservableModel`, which also names
/// ``ModelObserving`` (see there for why).
open class ObservableModelBase {
    /// Number of this object's properties (and `*`) with at least one observation edge, plus
    /// ``_readByPaths`` once a path has read one of its properties; 0 lets setters skip all
    /// bookkeeping. Changed only when a property gains its first edge or loses its last, so
    /// creating and ending the 2nd to 100th token on a property never touches it.
    @usableFromInline
    final let _edgeCount = Atomic<Int>(0)

    /// Added to `_edgeCount`, for good, the first time a path walk reads a property of this
    /// object (on whatever thread moved the path here). From then on setters store under the
    /// registry's lock, the lock walks read under, so a path may read this object's properties
    /// on other threads than the ones that write them.
    @usableFromInline
    static var _readByPaths: Int { 1 << 20 }

    /// One store in the counter above `_readByPaths` (bits 21 to 61): setters of objects read by
    /// paths count their stores there as they give `_storeBit` back, so a walk can tell, with one
    /// load, whether an object it read has been written since (see `WalkMemo.revalidate`).
    static var _storeCount: Int { 1 << 21 }

    /// The bits of `_edgeCount` that change when a setter of an object read by paths stores.
    static var _storeVersionMask: Int { _storeBit | (_storeBit - _storeCount) }

    /// The number of this object's properties (and `*`) with an observation edge.
    final var observedPropertyCount: Int { _edgeCount.load(ordering: .relaxed) & (Self._readByPaths - 1) }

    /// Whether some property (or `*`) of this object has an observation edge.
    final var hasEdges: Bool { observedPropertyCount != 0 }

    /// The properties (and `*`) that have observers, one bit each (`Registry.serialBit`): a set
    /// of a property whose bit is clear has no one to tell, and reads nothing of the registry.
    /// Changed only under the registry's lock. Kept here, beside `_edgeCount`, which the setter
    /// has just read, not in the registry (a cache miss of its own on a cold object).
    ///
    /// Sequentially consistent, like the store count that setters of objects read by paths add
    /// (`_endStoreCounted`) and the walks' reads of it (`storeVersion`): a set racing the attach
    /// of a middle edge either sees the bit, and tells the edge, or stored before the attach,
    /// and then the walk reads the new store version when it reads the object again
    /// (`WalkMemo.revalidate()`), and walks again.
    final let observedBits = Atomic<UInt64>(0)

    /// Per-object token bookkeeping, created on first observation: the bits of a +1
    /// `Unmanaged<Registry>`, or 0. Set once with a compare-exchange, released in `deinit`.
    /// (Synchronization's `AtomicLazyReference` does the same but costs hundreds of
    /// instructions per load on Linux, and setters load it.)
    private final let registryBits = Atomic<UInt>(0)

    /// Creates an object with no observers.
    public init() {}

    deinit {
        let bits = registryBits.load(ordering: .acquiring)
        guard bits != 0 else { return }
        let registry = Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeRetainedValue()
        // Stored properties (the subclasses' too) are destroyed only after every deinit body
        // has run, so the registry can still read names off `self` for ended tokens.
        registry.ownerDidDeinit(owner: self)
    }

    /// The registry if one exists. Valid as long as `self` is alive.
    @inline(__always)
    final var existingRegistry: Registry? {
        let bits = registryBits.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
    }

    /// Runs `body` on the registry, borrowed (no retain: `self` keeps it alive), if one exists.
    @inline(__always)
    final func withExistingRegistry<R>(_ body: (Registry) -> R?) -> R? {
        let bits = registryBits.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)._withUnsafeGuaranteedRef(body)
    }

    /// The registry, created on first use.
    final var registry: Registry {
        if let existing = existingRegistry { return existing }
        return makeRegistry()
    }

    /// `registry`'s first use, out of line: inline, it made every use retain and release
    /// `self` around the load, for the creation's sake.
    @inline(never)
    private final func makeRegistry() -> Registry {
        let created = Unmanaged.passRetained(Registry(owner: self))
        // One relaxed load unless the census is on.
        created._withUnsafeGuaranteedRef { DebugCensusState.registryCreated($0) }
        let bits = UInt(bitPattern: created.toOpaque())
        let (exchanged, current) = registryBits.compareExchange(
            expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if exchanged { return created.takeUnretainedValue() }
        created.release()  // another thread won the race
        return Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).takeUnretainedValue()
    }

    /// Observation edges attached to this object, counted in its registry (test hook).
    final var attachedEdgeCount: Int { existingRegistry?.attachedEdgeCount ?? 0 }

    /// A bit of `_edgeCount` that makes a store of an object read by paths and a path's read of
    /// it exclusive: the setter holds it around its store, a walk around its read (see
    /// `Registry.readForPath`). A bit rather than the registry's lock, so the setter stays
    /// inline code with no closure (a closure would capture the storage key path and keep the
    /// optimizer from turning it into a direct access).
    @usableFromInline
    static var _storeBit: Int { 1 << 62 }

    /// What the setter of an object read by paths (or with will-change observers) calls before
    /// its store: the object's will-change callbacks, then it takes `_storeBit`. Out of line.
    /// The setter's access to the storage has not begun, so user code may run here.
    @usableFromInline @inline(never)
    final func _beginExclusiveStore() {
        // The registry is borrowed for the check (`self` keeps it alive): a retain and release
        // per set here were a fifth of the cost of a set on an object read by paths.
        let bits = registryBits.load(ordering: .acquiring)
        if bits != 0,
            Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)._withUnsafeGuaranteedRef({
                $0.willChangeCount.load(ordering: .acquiring) != 0
            }),
            let registry = existingRegistry
        {
            WillChangeSubscription.tell(registry)
        }
        // Inline: a call per set of an object read by paths.
        _takeStoreBit()
    }

    /// Takes `_storeBit`; held for one plain store or one read, so waiting is short. Out of
    /// line: stores of objects read by paths, and the library's reads of them.
    @usableFromInline @inline(never)
    final func _beginExclusiveRead() {
        _takeStoreBit()
    }

    /// Waits for `_storeBit` to be free and takes it (acquiring): the loop of
    /// `_beginExclusiveStore` and `_beginExclusiveRead`, inlined into each.
    @inline(__always)
    private final func _takeStoreBit() {
        while true {
            let current = _edgeCount.load(ordering: .relaxed)
            if current & Self._storeBit == 0,
                _edgeCount.compareExchange(
                    expected: current, desired: current | Self._storeBit, ordering: .acquiring
                ).exchanged
            {
                return
            }
            _yieldWhileStoring()
        }
    }

    /// Runs `read` (a read of this object's properties by the library, on a thread that may not
    /// own them) holding `_storeBit`, so no setter of an object read by paths stores meanwhile.
    @inlinable @inline(__always)
    final func _readExclusively<T>(_ read: () -> T) -> T {
        _beginExclusiveRead()
        defer { _endExclusiveStore() }
        return read()
    }

    /// Gives `_storeBit` back after a read.
    @usableFromInline @inline(never)
    final func _endExclusiveStore() {
        _edgeCount.wrappingSubtract(Self._storeBit, ordering: .releasing)
    }

    /// Gives `_storeBit` back after a store, counting the store (one atomic add either way),
    /// and returns `_edgeCount` as the add found it (its bits below `_readByPaths`, the observed
    /// property count, are the same after the add: it changes only the bits above).
    ///
    /// The setter decides from the returned count, not from its load before the store, whether
    /// anyone observes the object: a walk may have attached its first edge here between that
    /// load and this add, and read the store version before this add (so it saw no store to
    /// walk again for). The add is a read-modify-write of the word the attach adds to, so it
    /// either comes after the attach's add, and returns a count that includes it, or before
    /// it, and then the walk's later read of the version (`WalkMemo.revalidate`) sees this store.
    @usableFromInline @inline(never)
    final func _endStoreCounted() -> Int {
        // Sequentially consistent: see `observedBits`.
        _edgeCount.wrappingAdd(Self._storeCount &- Self._storeBit, ordering: .sequentiallyConsistent).oldValue
    }

    /// The store counter and `_storeBit`: equal at two moments only if no store of this object
    /// began or ended in between.
    final var storeVersion: Int { _edgeCount.load(ordering: .sequentiallyConsistent) & Self._storeVersionMask }

    /// Slow path of an `@Observed` setter: the object has tokens and the value really changed.
    @usableFromInline
    final func _propertyDidChange(serial: UInt64, oldValue: () -> Any) {
        // Nobody observes this property, nor `*`: nothing to tell.
        let observed = observedBits.load(ordering: .sequentiallyConsistent)
        if observed & (Registry.serialBit(serial) | Registry.serialBit(PathStep.wildcardSerial)) == 0 { return }
        let bits = registryBits.load(ordering: .acquiring)
        guard bits != 0 else { return }
        // `self` keeps the registry alive, so it can be used without a retain.
        let registry = Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        // A further set whose tokens are all pending still: one load and a compare-and-swap,
        // no lock (see `SettledMark`). Everything else is out of line, so that this part saves
        // no registers.
        if registry._withUnsafeGuaranteedRef({ $0.skipsSettledSet(serial: serial) }) { return }
        _tellObservers(registry, serial: serial, oldValue: oldValue)
    }

    /// `_propertyDidChange` once it has someone to tell.
    @inline(never)
    private final func _tellObservers(_ registry: Unmanaged<Registry>, serial: UInt64, oldValue: () -> Any) {
        let immediate = registry._withUnsafeGuaranteedRef {
            $0.propertyDidChange(owner: self, serial: serial, oldValue: oldValue)
        }
        // `.immediate` callbacks run from this small frame, not the registry's. An `.immediate`
        // cascade (each callback setting the next model's property) pays it per level
        // (`CascadeDepthTests`), so the usual single token is called from here and anything
        // else is walked out of line: the frame holds the list and the old value
        // (`Registry.work` returns only `.immediate` subscriptions), nothing else.
        switch immediate {
        case nil: return
        case .one(let lone) where lone.comparesComputedValues: lone.deliverNow(oldValue: oldValue(), isChange: true)
        // Else a lone one is a computed property's dependencies (the only subscriptions that
        // don't compare computed values).
        case .one(let lone): _invalidateDependant(unsafeDowncast(lone, to: SyntheticDependencies.self))
        case .many(let list): _callImmediate(list, oldValue: oldValue)
        }
    }

    /// `_callImmediate` for the usual lone `.immediate` subscription of a stored property with a
    /// computed property reading it: that property's dependencies, which invalidate it (and,
    /// through it, its dependants; tokens on those values are checked once all are invalid).
    /// Out of line, like `_callImmediate`, whose loops over a collection retained and released
    /// the subscription.
    @inline(never)
    private final func _invalidateDependant(_ dependencies: SyntheticDependencies) {
        // Captured unretained (the caller holds both; captured as references, each was retained
        // and released around the call).
        let dependencies = Unmanaged.passUnretained(dependencies)
        let owner = Unmanaged.passUnretained(self)
        ImmediateChecks.collecting {
            dependencies._withUnsafeGuaranteedRef { dependencies in
                owner._withUnsafeGuaranteedRef { dependencies.dependencyChanged(changedObject: $0) }
            }
        }
    }

    /// `_propertyDidChange`'s calls of several `.immediate` subscriptions, or of one that
    /// invalidates computed values, out of line: the computed values the change invalidates
    /// first (their dependencies' subscriptions), then the tokens on the property, then those
    /// on the invalidated values (`ImmediateChecks`), so every callback reads final values.
    @inline(never)
    private final func _callImmediate(_ immediate: some Collection<Subscription>, oldValue: () -> Any) {
        var invalidates = false
        for subscription in immediate where !subscription.comparesComputedValues {
            invalidates = true
            break
        }
        guard invalidates else {
            for subscription in immediate { subscription.deliverNow(oldValue: oldValue(), isChange: true) }
            return
        }
        ImmediateChecks.collecting {
            for subscription in immediate where !subscription.comparesComputedValues {
                unsafeDowncast(subscription, to: SyntheticDependencies.self).dependencyChanged(changedObject: self)
            }
            for subscription in immediate where subscription.comparesComputedValues {
                subscription.deliverNow(oldValue: oldValue(), isChange: true)
            }
        }
    }

    /// A computed property of this object may have a new value (`ComputedState.invalidate` and
    /// `set`): the computed properties that read it are invalidated (their dependencies
    /// observe `invalidationSerial`), and its tokens (and `*` tokens) become pending to compare
    /// at their delivery. Out of line; runs no user code but `.immediate` tokens on the value
    /// (not `inDeinit`).
    final func _computedDidChange(invalidationSerial: UInt64, serial: UInt64, inDeinit: Bool) {
        let bits = registryBits.load(ordering: .acquiring)
        guard bits != 0 else { return }
        // Borrowed, as in `_propertyDidChange`: `self` keeps the registry alive (a retain and
        // release of it per level of an invalidation chain).
        let registry = Unmanaged<Registry>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        let observed = observedBits.load(ordering: .sequentiallyConsistent)
        // The computed values that read this one first (transitively), so that an `.immediate`
        // token's callback below reads final values.
        if observed & Registry.serialBit(invalidationSerial) != 0 {
            for (member, borrowed) in registry._withUnsafeGuaranteedRef({
                $0.members(of: invalidationSerial, owner: self)
            }) {
                // Borrowed: the list's retain keeps it until the release below (or, for the
                // dependencies of another computed property of this object, this object does).
                member._withUnsafeGuaranteedRef { dependant in
                    if dependant.comparesComputedValues {
                        dependant.propertyDidChange(changedObject: self) { () }
                    } else {
                        // Only a computed property's dependencies don't compare computed values.
                        unsafeDowncast(dependant, to: SyntheticDependencies.self).dependencyChanged(changedObject: self)
                    }
                }
                if !borrowed { member.release() }
            }
        }
        if observed & (Registry.serialBit(serial) | Registry.serialBit(PathStep.wildcardSerial)) != 0 {
            registry._withUnsafeGuaranteedRef { $0.computedDidChange(owner: self, serial: serial, inDeinit: inDeinit) }
        }
    }
}

/// Lets another thread finish its store or read (see `ObservableModel._beginExclusiveStore`).
func _yieldWhileStoring() {
    sched_yield()
}
