import Synchronization

/// The type-erased face of a synthetic property's state.
protocol SyntheticStateProtocol: AnyObject {
    var isValid: Bool { get }
    var serial: UInt64 { get }
    /// False for `@Lazy`, which has no dependencies (what its load reads is not one); true
    /// for tracked and declared ones.
    var hasDependencies: Bool { get }
    /// Whether a computation ever cached a value.
    var hasValue: Bool { get }
    /// Marks the value invalid and tells its dependants and tokens (see `ComputedState`).
    func invalidate(owner: ObservableModelBase, inDeinit: Bool)
    func forceValid()
    /// The property's value on `owner` (the object whose storage holds this state), as its
    /// getter returns it: cached if valid, computed otherwise.
    func value(of owner: ObservableModelBase) -> Any
    /// The version of the property's value on `owner`, brought up to date first (computed if
    /// invalid): what a token compares with the version it last saw.
    func currentVersion(of owner: ObservableModelBase) -> UInt64
    /// The value that had `version`, if the property still keeps it (the current value, or an
    /// earlier one a token holds).
    func value(ofVersion version: UInt64) -> Any?
    /// Forgets an earlier value that no token holds any more.
    func dropVersion(_ version: UInt64)
}

/// The getter of a synthetic property. Inlinable getters call it, so that loading the state
/// from the object is a direct field access rather than a key path application at run time;
/// itself inlinable, so that a valid cached value is read specialized in the caller's module —
/// without a lock for plain values (``PublishedWords``), with one lock round trip otherwise.
/// Anything else (an invalid value, a read being tracked) goes to the library's `read`.
///
/// The state is passed unretained: the wrapper that owns it is stored in `object`, which the
/// caller keeps alive for the whole read, and is never replaced after the object's
/// initialization. Not retaining it keeps a valid read free of reference counting.
@inlinable @inline(__always)
func _readSynthetic<Model: ObservableModelBase, Value>(_ state: Unmanaged<AnyObject>, _ object: Model) -> Value {
    state._withUnsafeGuaranteedRef { state in
        let state = unsafeDowncast(state, to: ComputedState<Model, Value>.self)
        if state.captureCount.pointee.load(ordering: .relaxed) == 0, let cached = state.cachedIfValid() {
            return cached
        }
        return state.read(object)
    }
}

/// The setter of a `@Hybrid` property (see `_readSynthetic`).
@usableFromInline
func _setSynthetic<Model: ObservableModelBase, Value>(_ state: AnyObject, _ value: Value, _ object: Model) {
    unsafeDowncast(state, to: ComputedState<Model, Value>.self).set(value, owner: object)
}
