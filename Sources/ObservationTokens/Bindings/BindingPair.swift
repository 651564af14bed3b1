/// One pair of a group binding: a property of the source and the property of the destination
/// it is copied to.
///
/// ```swift
/// let token = profile.bind(
///     [BindingPair(\.name, \.title), BindingPair(\.isAdmin, \.showsBadge)],
///     to: card)
/// ```
///
/// The two key paths have the same value type; pairs of different types go in one array.
public struct BindingPair<Source: ObservableModelBase, Destination: AnyObject>: Sendable {
    let key: TypedKey
    /// Copies the source property's current value to the destination property.
    let copy: @Sendable (Source, Destination) -> Void

    /// Pairs an `@Observed` property of the source with a property of the destination.
    ///
    /// - Parameters:
    ///   - source: An `@Observed` property of the source. Any other key path makes the group's
    ///     token end at once.
    ///   - destination: The property the value is written to.
    public init<Value>(
        _ source: KeyPath<Source, Value>, _ destination: ReferenceWritableKeyPath<Destination, Value>
    ) {
        key = TypedKey(source)
        nonisolated(unsafe) let source = source  // key paths are immutable
        nonisolated(unsafe) let destination = destination
        copy = { model, target in target[keyPath: destination] = model[keyPath: source] }
    }
}
