extension ModelObserving where Self: ObservableModelBase {
    /// Observes a key path chain: fires when any element along the path changes.
    ///
    /// When a middle object is replaced, the token stops watching the old object's rest of the
    /// path and starts watching the new one's; while a middle element is nil, the token waits
    /// and attaches when it becomes non-nil. The chain retains no intermediate object.
    ///
    /// ```swift
    /// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
    /// let token = cache.observe(zipCode) { cache, zipCode in
    ///     print(zipCode ?? "no address")   // nil while unreachable
    /// }
    /// ```
    ///
    /// By default every change along the path fires, even when the endpoint stays unreachable
    /// (nil → nil). Pass `.endpointChanges` to fire only when the endpoint's value changed.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observed object and the endpoint's value at delivery.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(*n*) in the chain's length to attach, and again for each change of a
    ///   middle element.
    @inlinable
    public func observe<Value>(
        _ chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, Value) -> Void
    ) -> ObservationToken {
        // The delivery is built here, in the caller's module, where it is specialized: reading
        // the chain calls its segments directly, without generic value passing or thunks.
        _observe(chain: chain, observer: nil, options: options, queue: queue, fileID: fileID, line: line) {
            _, root, delivered in
            let model = unsafeDowncast(root, to: Self.self)
            // With `.endpointChanges`, the endpoint the delivery compared; otherwise read
            // now, each segment under its object's store bit (see `KeyPathChain.segment`).
            callback(model, chain.deliveredValue(delivered, on: model))
        }
    }

    /// Observes a key path chain on behalf of `observer`, held weakly.
    ///
    /// ```swift
    /// cache.observe(KeyPathChain(\.currentUser).then(\.address).then(\.zipCode), observer: self) { label, cache, zipCode in
    ///     label.text = zipCode ?? "unreachable"
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observer, the observed object and the endpoint's value at
    ///     delivery, like the chain form without an observer.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    @inlinable
    public func observe<Observer: AnyObject, Value>(
        _ chain: KeyPathChain<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self, Value) -> Void
    ) -> ObservationToken {
        // Built here, where it is specialized (see the form without an observer).
        _observe(chain: chain, observer: observer, options: options, queue: queue, fileID: fileID, line: line) {
            observer, root, delivered in
            // Deliveries pass the observer given at creation, alive.
            guard observer != nil else { return }
            let model = unsafeDowncast(root, to: Self.self)
            let value = chain.deliveredValue(delivered, on: model)
            _withObserver(observer, as: Observer.self) { callback($0, model, value) }
        }
    }

    /// The non-inlinable half of `observe(_:observer:…)` with a chain.
    @usableFromInline
    func _observe<Value>(
        chain: KeyPathChain<Self, Value>, observer: AnyObject?, options: ObservationOptions, queue: CoalescingQueue,
        fileID: StaticString, line: UInt, kind: TokenKind = .chain, callback: @escaping _GeneralCallback
    ) -> ObservationToken {
        let isValid = checkChains([chain.steps], fileID: fileID, line: line)
        let token = makeToken(
            paths: [chain.path], observer: observer, options: isValid ? options : [], queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: kind, options: options), callback: callback)
        if !isValid { token.invalidate() }
        return token
    }

    /// Observes several key path chains with one token: one callback per tick, whichever of
    /// them changed, however often.
    ///
    /// ```swift
    /// let token = cache.observe([
    ///     AnyKeyPathChain(KeyPathChain(\.currentUser).then(\.address).then(\.zipCode)),
    ///     AnyKeyPathChain(KeyPathChain(\.currentUser).then(\.name)),
    /// ]) { cache in … }
    /// ```
    ///
    /// - Parameters:
    ///   - chains: The paths, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges` (fires when any endpoint
    ///     changed); see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        _ chains: [AnyKeyPathChain<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        let isValid = checkChains(chains.map(\.steps), fileID: fileID, line: line)
        let token = _observe(
            _ModelSubscription(
                root: self, target: .paths(chains.map { ObservedPath(steps: $0.steps) }),
                options: isValid ? options : [], queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .chain, options: options),
                callback: callback))
        if !isValid { token.invalidate() }
        return token
    }

    /// Observes a dotted string key path, resolved at run time against property names.
    ///
    /// Components are `@Observed` property names, as declared. `*` stands for every
    /// `@Observed` property of the object at that level (one level only); in the middle of a
    /// path it follows into every property that holds a model.
    ///
    /// ```swift
    /// let token = try cache.observe(path: "currentUser.address.zipCode") { cache in … }
    /// let any = try address.observe(path: "*") { address in … }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    /// - Complexity: A lookup by name in each class's cached property table, and a read of
    ///   each named property on the path; prefer typed chains on hot paths.
    public func observe(
        path: String,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        try observe(paths: [path], options: options, queue: queue, fileID: fileID, line: line, callback)
    }

    /// Observes several dotted string key paths with one token: one callback per tick.
    ///
    /// - Parameters:
    ///   - paths: Dotted paths, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` for the first bad path; ``KeyPathError/emptyPathList`` for an
    ///   empty list.
    public func observe(
        paths: [String],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        guard !paths.isEmpty else { throw .emptyPathList }
        var parsed: [ObservedPath] = []
        for path in paths { parsed.append(try StringKeyPath.parse(path, root: self)) }
        return _observe(
            _ModelSubscription(
                root: self, target: .paths(parsed), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .path, options: options), callback: callback))
    }

    /// Observes a dotted string key path on behalf of `observer`, held weakly.
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observer and the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    public func observe<Observer: AnyObject>(
        path: String,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        let parsed = try StringKeyPath.parse(path, root: self)
        return _observe(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths([parsed]), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .path, options: options), callback: callback))
    }
}
