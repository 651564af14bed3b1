/// A thread-safe container that keeps many tokens alive for one owner.
///
/// Dropping the bag (or calling ``removeAll()``) ends every token in it.
///
/// ```swift
/// final class ProfileScreen {
///     let tokens = TokenBag()
///     init(user: User) {
///         user.observe(\.name) { print($0.name) }.store(in: tokens)
///         user.observe(\.email) { print($0.email) }.store(in: tokens)
///     }
/// }
/// ```
public final class TokenBag: Sendable {
    private let state = Locked(state: State())

    private struct State {
        var tokens: [ObjectIdentifier: ObservationToken] = [:]
        /// The size at which the next insert drops ended tokens: twice the live tokens after
        /// the last sweep, so sweeping costs O(1) amortized per insert.
        var sweepAt = State.minimumSweep

        static let minimumSweep = 32

        /// Drops ended tokens (of objects that deinitialized, or invalidated) and returns them,
        /// to be released outside the lock.
        mutating func sweepIfDue() -> [ObservationToken] {
            guard tokens.count >= sweepAt else { return [] }
            var ended: [ObservationToken] = []
            tokens = tokens.filter { _, token in
                if token.isValid { return true }
                ended.append(token)
                return false
            }
            sweepAt = max(Self.minimumSweep, 2 * tokens.count)
            return ended
        }
    }

    /// Creates an empty bag.
    public init() {}

    /// The number of tokens in the bag. Ended tokens count until the bag drops them: it drops
    /// them while inserting, once the bag has doubled since its last sweep.
    public var count: Int {
        state.withLock { $0.tokens.count }
    }

    /// Adds a token. Adding the same token twice keeps one.
    ///
    /// Ended tokens (invalidated, or their object deinitialized) are dropped from time to
    /// time, so a long-lived bag that collects tokens on short-lived objects stays as large as
    /// its live tokens (at most about twice).
    ///
    /// - Complexity: O(1) amortized.
    public func insert(_ token: ObservationToken) {
        let dropped = state.withLock { state in
            state.tokens[ObjectIdentifier(token)] = token
            return state.sweepIfDue()
        }
        withExtendedLifetime(dropped) {}  // released here, outside the lock
    }

    /// Ends and removes every token.
    public func removeAll() {
        let removed = state.withLock { state in
            defer {
                state.tokens = [:]
                state.sweepAt = State.minimumSweep
            }
            return state.tokens
        }
        for token in removed.values { token.invalidate() }
    }
}
