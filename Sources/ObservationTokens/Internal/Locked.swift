import Synchronization

/// The library's one lock abstraction: a `Mutex` guarding a value of `State`.
///
/// Internal classes that need a lock subclass it, so the lock and the state live in the
/// same allocation as the object that owns them; others hold one.
///
/// `@unchecked Sendable` is sound here and only here: `state` (internal only so that inlinable
/// `withLock` can reach it) is read or written solely inside `withLock`. Callers never run user
/// code inside `withLock`.
///
/// `@usableFromInline` (with inlinable `withLock`): inlinable code such as `values(of:)`'s stream
/// takes the lock in the caller's module, specialized.
@usableFromInline
class Locked<State>: @unchecked Sendable {
    @usableFromInline let mutex = Mutex<Void>(())
    /// Makes the lock's ordering visible to the thread sanitizer. A contended `Mutex` hands
    /// the lock over inside the Swift runtime, which is not instrumented, so the sanitizer
    /// would see no synchronization. An acquire load after locking and a release store before
    /// unlocking of this word give it the same edges; both are plain moves on x86-64 and
    /// cheap elsewhere, and the word fits in the mutex's padding.
    @usableFromInline let handOff = Atomic<UInt32>(0)
    // The mutex already makes every access exclusive; skip the runtime's dynamic check.
    @usableFromInline @exclusivity(unchecked) var state: State

    @usableFromInline
    init(state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state. Keep `body` short and free of user code.
    @inlinable @inline(__always)
    final func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in
            _ = handOff.load(ordering: .acquiring)
            defer { handOff.store(0, ordering: .releasing) }
            return try body(&state)
        }
    }
}

/// `Locked`'s lock on its own, for state kept in place inside another object rather than in an
/// object of its own: a path subscription's extras, kept in the subscription's own allocation
/// (`SubscriptionExtras`). The same `Mutex` and the same hand-off word for the thread sanitizer.
///
/// Noncopyable, and used only where it lives: inside a class instance or a block that is never
/// moved while it is in use (the mutex's address is what threads wait on).
struct InlineLock: ~Copyable {
    let mutex = Mutex<Void>(())
    let handOff = Atomic<UInt32>(0)

    init() {}

    /// Runs `body` holding the lock. Keep `body` short and free of user code.
    @inline(__always)
    borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in
            _ = handOff.load(ordering: .acquiring)
            defer { handOff.store(0, ordering: .releasing) }
            return try body()
        }
    }
}
