#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which synthetic properties are computing on this thread (innermost first), for cycle
/// detection and so a computed getter knows a computation is reading it; and whether the
/// thread is only probing which property a key path names.
enum SyntheticFrame {
    private struct Frame {
        let state: ObjectIdentifier
        let previous: UnsafeMutableRawPointer?
    }

    /// Marks `probe` mode: the raw value 1 (never a frame's address).
    private static var probeMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ObservationTokens could not create its thread-local key")
        return key
    }()

    /// Whether a synthetic computation is running on this thread.
    static var isComputing: Bool {
        guard let top = pthread_getspecific(key) else { return false }
        return top != probeMarker
    }

    /// Whether the thread is resolving a key path for `invalidate(_:)`.
    static var isProbing: Bool { pthread_getspecific(key) == probeMarker }

    /// Whether `state` is computing on this thread already.
    static func contains(_ state: AnyObject) -> Bool {
        let id = ObjectIdentifier(state)
        var current = pthread_getspecific(key)
        while let frame = current, frame != probeMarker {
            let pointer = frame.assumingMemoryBound(to: Frame.self)
            if pointer.pointee.state == id { return true }
            current = pointer.pointee.previous
        }
        return false
    }

    /// Runs `body` (the computation of `state`) with its frame pushed.
    static func run<T>(_ state: AnyObject, _ body: () -> T) -> T {
        let previous = pthread_getspecific(key)
        var frame = Frame(state: ObjectIdentifier(state), previous: previous == probeMarker ? nil : previous)
        return withUnsafeMutablePointer(to: &frame) { pointer in
            pthread_setspecific(key, pointer)
            defer { pthread_setspecific(key, previous) }
            return body()
        }
    }

    /// Runs `body` in probe mode: computed getters with a cached value return it, valid or not.
    static func probe<T>(_ body: () -> T) -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, probeMarker)
        defer { pthread_setspecific(key, previous) }
        return body()
    }
}
