// The `observer:` forms of the observe entry points that take a list of chains or string paths,
// a `whichOf:` list, a chain's `endpointOf:`, or every property: the same callbacks with the
// observer (held weakly) passed first, so that every target has both forms.

extension ModelObserving where Self: ObservableModelBase {
    /// Observes several key path chains with one token on behalf of `observer`, held weakly.
    ///
    /// ```swift
    /// cache.observe([AnyKeyPathChain(KeyPathChain(\.currentUser).then(\.name))], observer: self) { screen, cache in
    ///     screen.render(cache)
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// - Parameters:
    ///   - chains: The paths, rooted at the receiver; an empty list is a programming error.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        _ chains: [AnyKeyPathChain<Self>],
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let isValid = checkChains(chains.map(\.steps), fileID: fileID, line: line)
        let token = _observe(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths(chains.map { ObservedPath(steps: $0.steps) }),
                options: isValid ? options : [], queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .chain, options: options), callback: callback))
        if !isValid { token.invalidate() }
        return token
    }

    /// Observes several dotted string key paths with one token on behalf of `observer`, held
    /// weakly.
    ///
    /// - Parameters:
    ///   - paths: Dotted paths, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` for the first bad path; ``KeyPathError/emptyPathList`` for an
    ///   empty list.
    public func observe<Observer: AnyObject>(
        paths: [String],
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        guard !paths.isEmpty else { throw .emptyPathList }
        var parsed: [ObservedPath] = []
        for path in paths { parsed.append(try StringKeyPath.parse(path, root: self)) }
        return _observe(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths(parsed), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .path, options: options), callback: callback))
    }

    /// ``observe(whichOf:options:queue:fileID:line:_:)`` on behalf of `observer`, held weakly:
    /// once it is gone, the token ends at its next delivery.
    ///
    /// - Parameters:
    ///   - keyPaths: `@Observed` properties of the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer, the observed object and the key paths that changed.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        whichOf keyPaths: [PartialKeyPath<Self>],
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self, ChangedProperties<Self>) -> Void
    ) -> ObservationToken {
        _observe(
            whichOf: keyPaths, observer: observer, options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .whichOf, options: options)
        ) { observer, model, changed in
            // Deliveries pass the observer given at creation, alive.
            _withObserver(observer, as: Observer.self) { callback($0, model, changed) }
        }
    }

    /// ``observe(endpointOf:options:queue:fileID:line:_:)`` on behalf of `observer`, held
    /// weakly.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer, the observed object and the endpoint.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject, Value>(
        endpointOf chain: KeyPathChain<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self, ChainEndpoint<Value>) -> Void
    ) -> ObservationToken {
        let isValid = checkChains([chain.steps], fileID: fileID, line: line)
        let path = chain.path
        let token = makeToken(
            paths: [path], observer: observer, options: isValid ? options : [], queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .chain, options: options),
            callback: { observer, root, delivered in
                guard observer != nil else { return }
                let model = unsafeDowncast(root, to: Self.self)
                let endpoint = (delivered as? EndpointDelivery)?.endpoint ?? path.endpoint(from: model)
                _withObserver(observer, as: Observer.self) {
                    callback($0, model, ChainEndpoint(endpoint) ?? .unreachable)
                }
            })
        if !isValid { token.invalidate() }
        return token
    }

    /// ``observeAll(options:queue:fileID:line:_:)`` on behalf of `observer`, held weakly.
    ///
    /// - Parameters:
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observeAll<Observer: AnyObject>(
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        _observe(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths([ObservedPath(step: .wildcard)]), options: options,
                queue: queue, site: CreationSite(fileID: fileID, line: line, kind: .all, options: options),
                callback: callback))
    }
}
