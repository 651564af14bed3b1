/// The change a single-property token reports: the value before this tick's first change, and
/// the value at delivery.
///
/// Several sets in one tick are one change. If they return the property to where it started,
/// the token still fires once and `old == new`.
public struct PropertyChange<Value> {
    /// The value before the first change in this tick.
    public let old: Value
    /// The value when the callback runs.
    public let new: Value

    /// Creates a change, for code that forwards or tests change callbacks.
    ///
    /// - Parameters:
    ///   - old: The value before the tick's first change.
    ///   - new: The value at delivery.
    public init(old: Value, new: Value) {
        self.old = old
        self.new = new
    }
}

extension PropertyChange: Equatable where Value: Equatable {}
extension PropertyChange: Sendable where Value: Sendable {}
