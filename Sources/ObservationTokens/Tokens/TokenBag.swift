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
    private let tokens = Locked<[ObjectIdentifier: ObservationToken]>(state: [:])

    /// Creates an empty bag.
    public init() {}

    /// The number of tokens in the bag, ended ones included.
    public var count: Int {
        tokens.withLock { $0.count }
    }

    /// Adds a token. Adding the same token twice keeps one.
    ///
    /// - Complexity: O(1) amortized.
    public func insert(_ token: ObservationToken) {
        tokens.withLock { $0[ObjectIdentifier(token)] = token }
    }

    /// Ends and removes every token.
    public func removeAll() {
        let removed = tokens.withLock { tokens in
            defer { tokens = [:] }
            return tokens
        }
        for token in removed.values { token.invalidate() }
    }
}
