internal import CObservationTokensRuntime

/// A token's observer, held without keeping it alive: loaded, retained, for each delivery, and
/// nil once the observer's deinit has begun.
///
/// Without Objective-C, a Swift `weak` reference gives the observer a side table, after which
/// every retain and release of it, by anyone, takes the runtime's slow path (an app's
/// view-model is retained around every callback it gets). So the reference is kept the way
/// Swift's `unowned` keeps one: the observer's memory (not the observer) stays allocated while
/// the reference exists, and a load tries to retain the object, which fails once its deinit
/// has begun. An observer that is gone leaves only its allocation behind, until its token ends
/// or is released; its properties were released by its deinit.
///
/// With Objective-C (Apple platforms), observers may be Objective-C objects, which have no
/// Swift unowned count: the reference is `weak` there.
///
/// `@unchecked Sendable`: loading is thread-safe either way (a weak load, or a retain that
/// fails atomically once deinit began), and the reference is never stored to again.
struct ObserverReference: @unchecked Sendable {
    #if canImport(ObjectiveC)
        private weak var object: AnyObject?

        init(_ object: AnyObject) {
            self.object = object
        }

        /// The observer, retained, if its deinit has not begun.
        @inline(__always)
        func load() -> AnyObject? { object }
    #else
        /// Keeps the observer's memory allocated (its unowned count), so `address` stays valid
        /// to try. Never read.
        private unowned let anchor: AnyObject
        private let address: UnsafeMutableRawPointer

        init(_ object: AnyObject) {
            anchor = object
            address = Unmanaged.passUnretained(object).toOpaque()
        }

        /// The observer, retained, if its deinit has not begun.
        @inline(__always)
        func load() -> AnyObject? {
            guard ot_tryRetain(address) else { return nil }
            return Unmanaged<AnyObject>.fromOpaque(address).takeRetainedValue()
        }
    #endif
}
