/// The end of a key path chain as a callback sees it: a value, or unreachable because an
/// object on the way is nil (or gone).
///
/// A chain through optionals flattens both to `nil` (`KeyPathChain<Root, String?>`); this
/// tells them apart.
///
/// ```swift
/// let token = cache.observe(endpointOf: KeyPathChain(\.currentUser).then(\.address).then(\.label)) { _, endpoint in
///     switch endpoint {
///     case .unreachable: label.text = "no address"
///     case .value(nil): label.text = "address without a label"
///     case .value(let text?): label.text = text
///     }
/// }
/// ```
public enum ChainEndpoint<Value> {
    /// An object before the last segment is nil or gone.
    case unreachable
    /// The last segment's value (which may be `nil` itself when the property is optional).
    case value(Value)

    /// The value, or nil when unreachable.
    public var value: Value? {
        if case .value(let value) = self { value } else { nil }
    }
}

extension ChainEndpoint: Sendable where Value: Sendable {}
extension ChainEndpoint: Equatable where Value: Equatable {}

extension ChainEndpoint {
    /// Converts a walk's endpoint; nil if the value is not a `Value`.
    init?(_ endpoint: ObservedPath.Endpoint) {
        switch endpoint {
        case .unreachable: self = .unreachable
        case .value(let any):
            guard let value = any as? Value else { return nil }
            self = .value(value)
        }
    }
}

extension ModelObserving where Self: ObservableModelBase {
}
