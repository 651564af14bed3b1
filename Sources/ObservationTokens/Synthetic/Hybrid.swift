/// A settable synthetic property: computed like ``Computed`` until set; a set stores the value
/// and marks it valid until the next invalidation.
///
/// ```swift
/// final class Label: ObservableModel {
///     @Observed var name = "Ada"
///     @Hybrid({ (label: Label) in label.name.uppercased() }) var title: String
/// }
/// label.title = "Custom"   // valid until `name` changes or it is invalidated
/// ```
///
/// A set tells the tokens observing it (if the value changed) and invalidates the computed
/// properties that read it. Switching between `@Computed`, `@Lazy` and `@Hybrid` is a
/// one-word change at the declaration.
///
/// > Note: Threading rules are those of ``Computed``.
///
/// - Complexity: Like ``Computed``; a set is O(*t*) in the tokens on the object.
@propertyWrapper
public struct Hybrid<Model: ObservableModelBase, Value> {
    /// The `ComputedState<Model, Value>`, typed `AnyObject` so inlinable code can load it.
    @usableFromInline
    let stateObject: AnyObject

    var state: ComputedState<Model, Value> { unsafeDowncast(stateObject, to: ComputedState<Model, Value>.self) }

    /// Declares a hybrid property.
    ///
    /// - Parameters:
    ///   - compute: Computes the value when it is invalid; its reads are its dependencies.
    public init(_ compute: @escaping @Sendable (Model) -> Value) {
        stateObject = ComputedState(compute: compute)
    }

    /// Not available: `@Hybrid` works only inside ``ObservableModel`` subclasses.
    @available(*, unavailable, message: "@Hybrid can only be used on properties of an ObservableModelBase subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swift-format-ignore
        set { fatalError("unavailable") }
    }

    /// Reads the cached or computed value, or sets it.
    @inlinable @inline(__always)
    public static subscript(
        _enclosingInstance object: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get { _readSynthetic(Unmanaged.passUnretained(object[keyPath: storageKeyPath].stateObject), object) }
        set { _setSynthetic(object[keyPath: storageKeyPath].stateObject, newValue, object) }
    }
}

extension Hybrid: SyntheticLayout {
    static var valueType: Any.Type { Value.self }

    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol {
        address.assumingMemoryBound(to: Self.self).pointee.state
    }
}
