/// One pair of a group binding: a property of the source and the property of the destination
/// it is copied to.
///
/// ```swift
/// let token = profile.bind(
///     [BindingPair(\.name, \.title), BindingPair(\.isAdmin, \.showsBadge)],
///     to: card)
/// ```
///
/// The two key paths have the same value type (or the destination's is its `Optional`); pairs
/// of different types go in one array.
public struct BindingPair<Source: ObservableModelBase, Destination: AnyObject>: Sendable {
    let key: TypedKey
    /// The destination property (key paths are immutable).
    let destinationKeyPath: _UncheckedSendable<AnyKeyPath>
    /// Copies the source property's current value to the destination property.
    let copy: @Sendable (Source, Destination) -> Void
    /// Compares the source property's value with the destination's (see `_bindingCompare`).
    let compare: @Sendable (Source, Destination) -> BindingComparison
    /// The destination property as a key, for a destination that is a model.
    let destinationKey: TypedKey

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
        destinationKeyPath = _UncheckedSendable(destination)
        nonisolated(unsafe) let source = source  // key paths are immutable
        nonisolated(unsafe) let destination = destination
        copy = { model, target in target[keyPath: destination] = model[keyPath: source] }
        compare = { model, target in
            BindingComparison(_bindingCompare(target[keyPath: destination], model[keyPath: source]))
        }
        destinationKey = Self.key(destination)
    }

    /// Pairs an `@Observed` property of the source with an optional property of the
    /// destination: the value is written wrapped (a `String` to a `String?`).
    ///
    /// - Parameters:
    ///   - source: An `@Observed` property of the source. Any other key path makes the group's
    ///     token end at once.
    ///   - destination: The optional property the value is written to.
    public init<Value>(
        _ source: KeyPath<Source, Value>, _ destination: ReferenceWritableKeyPath<Destination, Value?>
    ) {
        key = TypedKey(source)
        destinationKeyPath = _UncheckedSendable(destination)
        nonisolated(unsafe) let source = source  // key paths are immutable
        nonisolated(unsafe) let destination = destination
        copy = { model, target in target[keyPath: destination] = model[keyPath: source] }
        compare = { model, target in
            BindingComparison(_bindingCompare(target[keyPath: destination], Optional(model[keyPath: source])))
        }
        destinationKey = Self.key(destination)
    }

    /// A key for `keyPath` on destinations that are models, resolved like a source's.
    private static func key<Value>(_ keyPath: ReferenceWritableKeyPath<Destination, Value>) -> TypedKey {
        TypedKey(
            keyPath: keyPath,
            reader: { object, keyPath in
                guard let object = object as? Destination, let keyPath = keyPath as? KeyPath<Destination, Value> else {
                    return nil
                }
                return object[keyPath: keyPath]
            })
    }
}
