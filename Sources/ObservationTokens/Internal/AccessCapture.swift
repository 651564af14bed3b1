import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How many threads are resolving a key path right now. `@Observed` getters read it with one
/// relaxed load and only look further (into thread-local storage) when it is non-zero, so a
/// plain property read costs one load and a branch.
@usableFromInline
let _accessCaptureCount = Atomic<Int>(0)

/// Records which `@Observed` storage a key path reads, to map a typed `KeyPath` onto the
/// property it names.
///
/// A Swift `KeyPath` can't be inspected, but it can be applied. While a capture is active on
/// this thread, every `@Observed` getter reports `(object, serial)`; the resolver keeps the
/// access made on the object it asked about.
enum AccessCapture {
    struct Access {
        let object: ObjectIdentifier
        let serial: UInt64
        let valueType: Any.Type
    }

    /// What a capture saw: how many `@Observed` getters ran, and the first of them.
    /// Lives on the capturing thread's stack; the thread-local slot points at it.
    struct Recording {
        var count = 0
        var first: Access?
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ObservationTokens could not create its thread-local key")
        return key
    }()

    /// Applies `read` with recording on, and returns its value plus what it accessed.
    static func capture<T>(_ read: () -> T) -> (value: T, recording: Recording) {
        var recording = Recording()
        let previous = pthread_getspecific(key)
        let value = withUnsafeMutablePointer(to: &recording) { pointer in
            pthread_setspecific(key, pointer)
            _accessCaptureCount.add(1, ordering: .relaxed)
            defer {
                _accessCaptureCount.subtract(1, ordering: .relaxed)
                pthread_setspecific(key, previous)
            }
            return read()
        }
        return (value, recording)
    }

    /// Called by `@Observed` getters when some thread is capturing.
    static func record(object: ObjectIdentifier, serial: UInt64, valueType: Any.Type) {
        guard let raw = pthread_getspecific(key) else { return }
        let recording = raw.assumingMemoryBound(to: Recording.self)
        recording.pointee.count += 1
        if recording.pointee.first == nil {
            recording.pointee.first = Access(object: object, serial: serial, valueType: valueType)
        }
    }
}

/// Entry point for the inlinable getter; keeps `AccessCapture` itself internal.
@usableFromInline
func _recordObservedAccess(_ object: AnyObject, serial: UInt64, valueType: Any.Type) {
    AccessCapture.record(object: ObjectIdentifier(object), serial: serial, valueType: valueType)
}
