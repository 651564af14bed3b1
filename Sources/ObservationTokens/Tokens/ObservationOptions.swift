/// Options that change when a token's callback runs.
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    /// The options' bits; use the named options (``initial``, ``immediate``, …) instead.
    public let rawValue: Int

    /// Creates options from their bits; use the named options (``initial``, ``immediate``, …).
    ///
    /// - Parameter rawValue: The bits, as ``rawValue`` returns them.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Also run the callback once at registration, synchronously on the calling thread, before
    /// `observe` returns (like KVO's `.initial`).
    public static let initial = ObservationOptions(rawValue: 1 << 0)

    /// Immediate mode: run the callback synchronously inside the setter, on the setting thread,
    /// on every real change, and never at the end of the tick. No coalescing.
    public static let immediate = ObservationOptions(rawValue: 1 << 1)

    /// For key paths: fire only when the endpoint's value really changed (reachable ↔
    /// unreachable counts as a change), not on every change along the path.
    public static let endpointChanges = ObservationOptions(rawValue: 1 << 2)
}
