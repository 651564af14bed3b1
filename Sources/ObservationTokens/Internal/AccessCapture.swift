#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

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

    private final class Recorder {
        var accesses: [Access] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ObservationTokens could not create its thread-local key")
        return key
    }()

    /// Applies `read` with recording on, and returns its value plus the accesses it made.
    static func capture<T>(_ read: () -> T) -> (value: T, accesses: [Access]) {
        let recorder = Recorder()
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(recorder).toOpaque())
        _accessCaptureCount.add(1, ordering: .relaxed)
        let value = withExtendedLifetime(recorder) { read() }
        _accessCaptureCount.subtract(1, ordering: .relaxed)
        pthread_setspecific(key, previous)
        return (value, recorder.accesses)
    }

    /// Called by `@Observed` getters when some thread is capturing.
    static func record(object: ObjectIdentifier, serial: UInt64, valueType: Any.Type) {
        guard let raw = pthread_getspecific(key) else { return }
        Unmanaged<Recorder>.fromOpaque(raw).takeUnretainedValue()
            .accesses.append(Access(object: object, serial: serial, valueType: valueType))
    }
}

/// Entry point for the inlinable getter; keeps `AccessCapture` itself internal.
@usableFromInline
func _recordObservedAccess(_ object: AnyObject, serial: UInt64, valueType: Any.Type) {
    AccessCapture.record(object: ObjectIdentifier(object), serial: serial, valueType: valueType)
}
