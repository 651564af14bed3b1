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
    /// Observes a key path chain; the callback tells an unreachable endpoint (an object on the
    /// way is nil) from a `nil` at the endpoint.
    ///
    /// ```swift
    /// let token = cache.observe(endpointOf: KeyPathChain(\.currentUser).then(\.address).then(\.label)) { cache, endpoint in
    ///     if case .unreachable = endpoint { print("no address") }
    /// }
    /// ```
    ///
    /// Otherwise like `observe(_:)` with a chain: one callback per tick, retargeted when a middle object is replaced. With
    /// `.endpointChanges`, the callback gets the endpoint the delivery compared.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observed object and the endpoint.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(*n*) in the chain's length to attach and for each delivery's read.
    public func observe<Value>(
        endpointOf chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, ChainEndpoint<Value>) -> Void
    ) -> ObservationToken {
        let isValid = checkChains([chain.steps], fileID: fileID, line: line)
        let path = chain.path
        let token = makeToken(
            paths: [path], observer: nil, options: isValid ? options : [], queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .chain, options: options),
            callback: { _, root, delivered in
                let model = unsafeDowncast(root, to: Self.self)
                let endpoint = (delivered as? EndpointDelivery)?.endpoint ?? path.endpoint(from: model)
                callback(model, ChainEndpoint(endpoint) ?? .unreachable)
            })
        if !isValid { token.invalidate() }
        return token
    }
}
