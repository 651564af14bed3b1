/// Options that change when a token's callback runs.
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    /// The options' bits; use the named options (``initial``, ``immediate``, …) instead.
    public let rawValue: Int

    /// Creates options from their bits; use the named options (``initial``, ``immediate``, …).
    ///
    /// - Parameter rawValue: The bits, as ``rawValue`` returns them.
    @inlinable
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Also run the callback once at registration, synchronously on the calling thread, before
    /// `observe` returns (like KVO's `.initial`).
    @inlinable public static var initial: ObservationOptions { ObservationOptions(rawValue: 1 << 0) }

    /// Immediate mode: run the callback synchronously inside the setter, on the setting thread,
    /// on every real change, and never at the end of the tick. No coalescing.
    @inlinable public static var immediate: ObservationOptions { ObservationOptions(rawValue: 1 << 1) }

    /// For key paths: fire only when the endpoint's value really changed (reachable ↔
    /// unreachable counts as a change), not on every change along the path.
    @inlinable public static var endpointChanges: ObservationOptions { ObservationOptions(rawValue: 1 << 2) }

    // The options are computed and inlinable (not stored `static let`s), so that an entry point
    // inlined in the caller's module folds its checks of a literal's options away, without a
    // call to a global's accessor per token.
}
