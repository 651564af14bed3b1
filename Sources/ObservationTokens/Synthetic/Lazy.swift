/// A lazily loaded property: computed on first read and cached until invalidated by hand.
///
/// Unlike ``Computed``, what the closure reads is not a dependency: only ``ModelObserving``'s
/// `invalidate` calls (and invalidation of nothing else) make it compute again. Validity is
/// tracked apart from the value: a cached `nil` is valid.
///
/// ```swift
/// final class Document: ObservableModel {
///     @Lazy({ (document: Document) in loadThumbnail(document) }) var thumbnail: Image?
/// }
/// document.invalidate(\.thumbnail)   // the next read loads it again
/// ```
///
/// > Note: Threading rules are those of ``Computed``.
///
/// - Complexity: A read of a valid value is a few loads for plain values of at most 32 bytes
///   (see ``Computed``), one lock round trip otherwise.
@propertyWrapper
public struct Lazy<Model: ObservableModelBase, Value> {
    /// The `ComputedState<Model, Value>`, typed `AnyObject` so inlinable code can load it.
    @usableFromInline
    let stateObject: AnyObject

    var state: ComputedState<Model, Value> { unsafeDowncast(stateObject, to: ComputedState<Model, Value>.self) }

    /// Declares a lazily loaded property.
    ///
    /// - Parameters:
    ///   - load: Computes the value on the first read after an invalidation.
    public init(_ load: @escaping @Sendable (Model) -> Value) {
        stateObject = ComputedState(tracksDependencies: false, compute: load)
    }

    /// Not available: `@Lazy` works only inside ``ObservableModel`` subclasses.
    @available(*, unavailable, message: "@Lazy can only be used on properties of an ObservableModelBase subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
    }

    /// Reads the cached value, loading it if invalid.
    @inlinable @inline(__always)
    public static subscript(
        _enclosingInstance object: Model,
        wrapped wrappedKeyPath: KeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        _readSynthetic(Unmanaged.passUnretained(object[keyPath: storageKeyPath].stateObject), object)
    }
}

extension Lazy: SyntheticLayout {
    static var valueType: Any.Type { Value.self }

    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol {
        address.assumingMemoryBound(to: Self.self).pointee.state
    }
}
