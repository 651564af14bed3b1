import Synchronization

/// The library's one lock abstraction: a `Mutex` guarding a value of `State`.
///
/// Internal classes that need a lock subclass it, so the lock and the state live in the
/// same allocation as the object that owns them.
///
/// `@unchecked Sendable` is sound here and only here: `state` is private and is read or
/// written solely inside `mutex.withLock`. Callers never run user code inside `withLock`.
class Locked<State>: @unchecked Sendable {
    private let mutex = Mutex<Void>(())
    // The mutex already makes every access exclusive; skip the runtime's dynamic check.
    @exclusivity(unchecked) private var state: State

    init(state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state. Keep `body` short and free of user code.
    @inline(__always)
    final func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in try body(&state) }
    }
}
