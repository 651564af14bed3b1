/// The type-erased face of a synthetic property's state.
protocol SyntheticStateProtocol: AnyObject {
    var isValid: Bool { get }
    var serial: UInt64 { get }
    func invalidate()
    func forceValid()
}

/// The getter of a synthetic property. Inlinable getters call it, so that loading the state
/// from the object is a direct field access rather than a key path application at run time.
@usableFromInline
func _readSynthetic<Model: ObservableModel, Value>(_ state: AnyObject, _ object: Model) -> Value {
    unsafeDowncast(state, to: ComputedState<Model, Value>.self).read(object)
}

/// The setter of a `@Hybrid` property (see `_readSynthetic`).
@usableFromInline
func _setSynthetic<Model: ObservableModel, Value>(_ state: AnyObject, _ value: Value, _ object: Model) {
    unsafeDowncast(state, to: ComputedState<Model, Value>.self).set(value, owner: object)
}
