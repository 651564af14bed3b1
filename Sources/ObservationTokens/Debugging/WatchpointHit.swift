/// One stop of a watchpoint made by `breakOnChange(of:)`: what changed, from what, to what,
/// and where the watchpoint was set.
///
/// Values are kept as their descriptions, so a hit can cross threads and outlive the objects.
///
/// ```swift
/// ObservationDebugging.setWatchpointHandler { hit in
///     print("\(hit.path): \(hit.oldValue) → \(hit.newValue) (watch set at \(hit.site))")
/// }
/// ```
public struct WatchpointHit: Sendable, CustomStringConvertible {
    /// The watched key path, as Swift prints it (`\Person.address.zipCode`).
    public let path: String
    /// The object the key path starts at: its type and address.
    public let root: String
    /// The value before the change (`String(describing:)`).
    public let oldValue: String
    /// The value after the change (`String(describing:)`).
    public let newValue: String
    /// Where `breakOnChange(of:)` or `breakOnInvoke()` was called, as `file:line`.
    public let site: String
    /// True for a stop of `ObservationToken.breakOnInvoke()`: the token's callback ran;
    /// `path` then names the token, and the values are empty.
    public let isInvoke: Bool

    init(path: String, root: String, oldValue: String, newValue: String, site: String, isInvoke: Bool = false) {
        self.path = path
        self.root = root
        self.oldValue = oldValue
        self.newValue = newValue
        self.site = site
        self.isInvoke = isInvoke
    }

    /// A one-line summary: path, old and new value, and the creation site.
    public var description: String {
        if isInvoke { return "breakpoint on \(path) of \(root): invoked (set at \(site))" }
        return "watchpoint \(path) on \(root): \(oldValue) -> \(newValue) (set at \(site))"
    }
}
