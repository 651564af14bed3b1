import Synchronization

/// Numbers every `@Observed` storage so a setter can name its property without hashing.
@usableFromInline
let _observedSerials = Atomic<UInt64>(1)

/// Marks a stored property of an ``ObservableModel`` subclass as observable.
///
/// Setting the property notifies the tokens that observe it, unless the new value is the same
/// as the old one:
/// - class references (also optional ones) are compared with `===`;
/// - other `Equatable` values are compared with `==`;
/// - values of any other type count as changed on every set.
///
/// ```swift
/// final class Address: ObservableModel {
///     @Observed var zipCode = ""
///     @Observed var resident: Person?
/// }
/// ```
///
/// When the object has no tokens, a set is a plain store plus one relaxed atomic load: no lock,
/// no allocation, no hashing (once a path has read the object, the store also takes and gives
/// back a bit: two atomic operations). A get costs one extra relaxed atomic load.
///
/// > Note: The value itself is stored like any other stored property. The library makes token
/// > bookkeeping thread-safe, not your values: don't set a property on one thread while another
/// > thread reads or sets it, unless you synchronize those accesses yourself.
///
/// - Complexity: O(1) when unobserved; O(*t*) in the number of tokens on the object otherwise.
@propertyWrapper
public struct Observed<Value> {
    @usableFromInline
    var value: Value

    /// Identifies this storage within its object; fixed when the storage is created.
    @usableFromInline
    let serial: UInt64

    /// Creates the storage with an initial value.
    ///
    /// Inlinable, so that creating a model costs one relaxed atomic add per `@Observed`
    /// property on top of a plain stored property.
    @inlinable
    public init(wrappedValue: Value) {
        value = wrappedValue
        serial = _observedSerials.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// The stored value, read and written without notifying anyone.
    ///
    /// For code inside the model that must change storage behind the observers' backs (say, to
    /// update several properties consistently) and then tells them with
    /// ``ModelObserving/propertyDidChange(_:)``:
    ///
    /// ```swift
    /// _zipCode.storedValue = "97210"
    /// propertyDidChange(\.zipCode)
    /// ```
    public var storedValue: Value {
        get { value }
        set { value = newValue }
    }

    /// Not available: `@Observed` works only inside ``ObservableModel`` subclasses.
    @available(*, unavailable, message: "@Observed can only be used on properties of an ObservableModelBase subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swift-format-ignore
        set { fatalError("unavailable") }
    }

    /// Reads and writes the property, notifying observers of real changes.
    @inlinable
    public static subscript<Model: ObservableModelBase>(
        _enclosingInstance object: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        // Always inlined: the key paths are then literals, and the optimizer turns the key path
        // accesses into direct stored-property accesses.
        @inline(__always) get {
            if _accessCaptureCount.load(ordering: .relaxed) != 0 {
                _recordObservedAccess(object, serial: object[keyPath: storageKeyPath].serial, valueType: Value.self)
                _reportTrackedAccess(object, serial: object[keyPath: storageKeyPath].serial)  // TrackedModel
            }
            return object[keyPath: storageKeyPath].value
        }
        @inline(__always) set {
            // The old value is released only after the write access ends: its deinit (say, of a
            // model with tokens) must not run inside this property's exclusive access.
            let oldValue = object[keyPath: storageKeyPath].value
            let edges = object._edgeCount.load(ordering: .relaxed) & ~ObservableModelBase._storeBit
            if edges == 0 {
                object[keyPath: storageKeyPath].value = newValue
                return
            }
            if edges < ObservableModelBase._readByPaths {
                object[keyPath: storageKeyPath].value = newValue
            } else {
                // Paths read this object on other threads: their reads and this store exclude
                // each other.
                object._beginExclusiveStore()
                object[keyPath: storageKeyPath].value = newValue
                // Nobody observes it now: the count after the store, not `edges` (a walk may
                // have attached meanwhile; see `_endStoreCounted`).
                if object._endStoreCounted() & (ObservableModelBase._readByPaths - 1) == 0 { return }
            }
            // Compared after storing and before telling anyone, so a callback this set causes
            // always runs after the comparison.
            if _valuesAreIdentical(oldValue, newValue) { return }
            object._propertyDidChange(serial: object[keyPath: storageKeyPath].serial) { oldValue }
        }
    }
}
