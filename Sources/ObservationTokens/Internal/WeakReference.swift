internal import CObservationTokensRuntime

/// An object held without keeping it alive — a token's observer, a binding's destination, a
/// remembered endpoint: loaded, retained, when it is needed, and nil once its deinit has
/// begun. A struct, carried in closures' contexts and subscriptions, with no object of its own.
///
/// Without Objective-C, a Swift `weak` reference gives the object a side table, after which
/// every retain and release of it, by anyone, takes the runtime's slow path (an app's
/// view-model is retained around every callback it gets, a model on every set that moves a
/// path). So the reference is kept the way Swift's `unowned` keeps one: the object's memory
/// (not the object) stays allocated while the reference exists, and a load tries to retain the
/// object, which fails once its deinit has begun. An object that is gone leaves only its
/// allocation behind, until the reference goes; its properties were released by its deinit.
///
/// With Objective-C (Apple platforms), objects may be Objective-C objects, which have no Swift
/// unowned count: the reference is `weak` there.
///
/// Not generic (a generic type would cost a metadata lookup at each creation in the library's
/// unspecialized code): `load(as:)` casts back to the type it was made with.
///
/// `@unchecked Sendable`: loading is thread-safe either way (a weak load, or a retain that
/// fails atomically once deinit began), the reference is never stored to again, and what the
/// loader does with the object is its own business, as with the objects callbacks receive.
struct WeakReference: @unchecked Sendable {
    #if canImport(ObjectiveC)
        private weak var object: AnyObject?

        init(_ object: AnyObject) {
            self.object = object
        }

        /// The object, retained, if its deinit has not begun.
        @inline(__always)
        func load() -> AnyObject? { object }
    #else
        /// Keeps the object's memory allocated (its unowned count), so `address` stays valid
        /// to try. Never read.
        private unowned let anchor: AnyObject
        private let address: UnsafeMutableRawPointer

        init(_ object: AnyObject) {
            anchor = object
            address = Unmanaged.passUnretained(object).toOpaque()
        }

        /// The object, retained, if its deinit has not begun.
        @inline(__always)
        func load() -> AnyObject? {
            guard ot_tryRetain(address) else { return nil }
            return Unmanaged<AnyObject>.fromOpaque(address).takeRetainedValue()
        }
    #endif

    /// The object's class, read without retaining it (nil on Apple platforms once the object is
    /// gone). Elsewhere it may be the class of an object whose deinit has begun: the reference
    /// keeps its memory, and with it its class pointer.
    @inline(__always)
    func loadType() -> AnyObject.Type? {
        #if canImport(ObjectiveC)
            object.map { type(of: $0) }
        #else
            Unmanaged<AnyObject>.fromOpaque(address)._withUnsafeGuaranteedRef { type(of: $0) }
        #endif
    }

    /// The object, if alive; `type` must be the type of the object given to `init`.
    @inline(__always)
    func load<Object: AnyObject>(as type: Object.Type) -> Object? {
        guard let object = load() else { return nil }
        return unsafeDowncast(object, to: Object.self)
    }
}
