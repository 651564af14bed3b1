/// A typed key path of several segments, rooted at an ``ObservableModel``, that a token can
/// observe as a whole.
///
/// Build it from `@Observed` properties, one segment at a time. Each segment is checked by the
/// compiler; optional intermediates are looked through, and make the endpoint optional:
///
/// ```swift
/// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
/// // KeyPathChain<UserCache, String?>
/// let token = cache.observe(zipCode, observer: self) { label, cache in … }
/// ```
///
/// Swift can't take a composed key path such as `\.currentUser?.address?.zipCode` apart at
/// run time, which is why the chain keeps its segments.
///
/// `@unchecked Sendable`: a chain holds only key paths, which are immutable.
public struct KeyPathChain<Root: ObservableModel, Value>: @unchecked Sendable {
    let steps: [PathStep]
    /// The endpoint now; nil when an optional intermediate is nil.
    let evaluate: (Root) -> Value

    private init(steps: [PathStep], evaluate: @escaping (Root) -> Value) {
        self.steps = steps
        self.evaluate = evaluate
    }

    /// Starts a chain with an `@Observed` property of `Root`.
    public init(_ keyPath: KeyPath<Root, Value>) {
        self.init(steps: [.key(TypedKey(keyPath))]) { $0[keyPath: keyPath] }
    }

    /// The number of segments.
    public var count: Int { steps.count }

    /// Appends a segment read on a non-optional model.
    public func then<Next>(_ keyPath: KeyPath<Value, Next>) -> KeyPathChain<Root, Next>
    where Value: ObservableModel {
        let evaluate = self.evaluate
        return KeyPathChain<Root, Next>(steps: steps + [.key(TypedKey(keyPath))]) { evaluate($0)[keyPath: keyPath] }
    }

    /// Appends a segment read on an optional model; the endpoint becomes optional.
    public func then<Model: ObservableModel, Next>(_ keyPath: KeyPath<Model, Next>) -> KeyPathChain<Root, Next?>
    where Value == Model? {
        let evaluate = self.evaluate
        return KeyPathChain<Root, Next?>(steps: steps + [.key(TypedKey(keyPath))]) { evaluate($0)?[keyPath: keyPath] }
    }

    /// Appends an optional segment read on an optional model; optionals are flattened.
    public func then<Model: ObservableModel, Next>(_ keyPath: KeyPath<Model, Next?>) -> KeyPathChain<Root, Next?>
    where Value == Model? {
        let evaluate = self.evaluate
        return KeyPathChain<Root, Next?>(steps: steps + [.key(TypedKey(keyPath))]) {
            evaluate($0)?[keyPath: keyPath] ?? nil
        }
    }

    var path: ObservedPath { ObservedPath(steps: steps) }
}

/// A ``KeyPathChain`` with its endpoint type erased, so that chains to different types can be
/// observed by one token.
///
/// ```swift
/// let token = cache.observe([
///     AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)),
///     AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.name)),
/// ]) { cache in … }   // one callback per tick, whichever path changed
/// ```
public struct AnyKeyPathChain<Root: ObservableModel>: Sendable {
    let steps: [PathStep]

    /// Erases the endpoint type of `chain`.
    public init<Value>(_ chain: KeyPathChain<Root, Value>) {
        steps = Array(chain.steps)
    }
}
