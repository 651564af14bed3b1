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
/// - Complexity: A read of a valid value is one lock round trip.
@propertyWrapper
public struct Lazy<Model: ObservableModel, Value> {
    let state: ComputedState<Model, Value>

    /// Declares a lazily loaded property.
    ///
    /// - Parameters:
    ///   - queue: Where recomputations of an observed value run after an invalidation.
    ///   - load: Computes the value on the first read after an invalidation.
    public init(queue: CoalescingQueue = .main, _ load: @escaping @Sendable (Model) -> Value) {
        state = ComputedState(queue: queue, tracksDependencies: false, compute: load)
    }

    /// Not available: `@Lazy` works only inside ``ObservableModel`` subclasses.
    @available(*, unavailable, message: "@Lazy can only be used on properties of an ObservableModel subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
    }

    /// Reads the cached value, loading it if invalid.
    public static subscript(
        _enclosingInstance object: Model,
        wrapped wrappedKeyPath: KeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        object[keyPath: storageKeyPath].state.read(object)
    }
}

extension Lazy: SyntheticLayout {
    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol {
        address.assumingMemoryBound(to: Self.self).pointee.state
    }
}
