// Sources that follow paths: typed key path chains and string key paths. The payload of a chain
// is its endpoint's value; string paths have none (read what you need from the object).

extension ObservationSource {
    /// A chain of key paths through other objects, starting with one key path of the object;
    /// extend it with `then`. The callback receives the endpoint's value.
    ///
    /// ```swift
    /// let token = cache.observe(.chain(\.currentUser).then(\.address).then(\.zipCode)) { cache, zipCode in
    ///     print(zipCode ?? "no zip code")
    /// }
    /// ```
    ///
    /// The chain retargets when an object along it is replaced, waits while one is nil, and
    /// retains nothing. See ``KeyPathChain`` for the segments it accepts and the rules.
    ///
    /// - Parameter keyPath: The first segment: an `@Observed` property of the object.
    public static func chain<Value>(_ keyPath: KeyPath<Root, Value>) -> ObservationSource<Root, Value> {
        .chain(KeyPathChain(keyPath))
    }

    /// A chain of key paths built as a ``KeyPathChain``. The callback receives the endpoint's
    /// value (with `.endpointChanges`, only when it changed).
    ///
    /// ```swift
    /// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
    /// let token = cache.observe(.chain(zipCode)) { cache, zipCode in print(zipCode ?? "-") }
    /// ```
    ///
    /// - Parameter chain: The chain, rooted at the object's type.
    public static func chain<Value>(_ chain: KeyPathChain<Root, Value>) -> ObservationSource<Root, Value> {
        ObservationSource<Root, Value>(chain: chain) { root, delivery in
            // The subscription gives the delivery's callback the endpoint (`ChainSubscription`):
            // no closure of the source's own around it.
            chain.startToken(on: root, options: delivery.options, fileID: delivery.fileID, line: delivery.line) {
                paths, evaluator, options, site in
                ChainSubscription(
                    root: root, observer: delivery.observer, paths: paths, evaluator: evaluator, options: options,
                    queue: delivery.queue, site: site, callback: delivery.callback)
            }
        }
    }

    /// Several chains as one token: one callback per tick, whichever changed.
    ///
    /// - Parameter chains: The chains, type-erased to their root.
    public static func chains(_ chains: [AnyKeyPathChain<Root>]) -> ObservationSource<Root, Void> {
        ObservationSource<Root, Void> { root, delivery in
            let isValid = root.checkChains(chains.map(\.steps), fileID: delivery.fileID, line: delivery.line)
            let token = root._observe(
                ErasedSubscription(
                    root: root, observer: delivery.observer,
                    target: .paths(chains.map { ObservedPath(steps: $0.steps) }),
                    options: isValid ? delivery.options : [], queue: delivery.queue, wantsOldValue: false,
                    site: delivery.site(.chain), callback: delivery.general))
            if !isValid { token.invalidate() }
            return token
        }
    }

    /// A chain whose callback is told whether the endpoint was reachable: a
    /// ``ChainEndpoint`` tells a `nil` value from an object missing on the way.
    ///
    /// - Parameter chain: The chain, rooted at the object's type.
    public static func endpoint<Value>(of chain: KeyPathChain<Root, Value>) -> ObservationSource<
        Root, ChainEndpoint<Value>
    > {
        ObservationSource<Root, ChainEndpoint<Value>> { root, delivery in
            let callback = delivery.callback
            let isValid = root.checkChains([chain.steps], fileID: delivery.fileID, line: delivery.line)
            let paths = chain.paths
            let path = paths[0]
            let token = root.makeToken(
                paths: paths, observer: delivery.observer, options: isValid ? delivery.options : [],
                queue: delivery.queue, site: delivery.site(.chain),
                callback: { observer, model, delivered in
                    let root = unsafeDowncast(model, to: Root.self)
                    let endpoint = (delivered as? EndpointDelivery)?.endpoint ?? path.endpoint(from: root)
                    callback(observer, root, ChainEndpoint(endpoint) ?? .unreachable)
                })
            if !isValid { token.invalidate() }
            return token
        }
    }

    /// A string key path from the object (`"currentUser.address.zipCode"`, `"items.*.title"`).
    ///
    /// ```swift
    /// let token = try cache.observe(.path("currentUser.address.zipCode")) { cache in
    ///     print(cache.currentUser?.address?.zipCode ?? "-")
    /// }
    /// ```
    ///
    /// See `docs/KeyPaths.md` for the syntax (`*`, collection components) and the rules.
    ///
    /// The path is checked when the source is made, against the declared types (past
    /// collections, their element type). When a token starts, it is checked again against the
    /// objects it reaches: one that doesn't fit (past a value typed `Any`, an object without the
    /// component) traps in debug builds naming the path; release builds say so once. An
    /// object-following index with no object there makes a token that delivers once and ends.
    ///
    /// - Parameter path: Components separated by dots.
    /// - Throws: ``KeyPathError`` naming the component that is not an observable property of its
    ///   declared type.
    public static func path(_ path: String) throws(KeyPathError) -> ObservationSource<Root, Void> {
        try paths([path])
    }

    /// Several string key paths as one token: one callback per tick, whichever changed.
    ///
    /// - Parameter paths: The paths; at least one.
    /// - Throws: ``KeyPathError`` for the first path that can't be observed, or
    ///   `.emptyPathList`.
    public static func paths(_ paths: [String]) throws(KeyPathError) -> ObservationSource<Root, Void> {
        guard !paths.isEmpty else { throw .emptyPathList }
        // Checked now against the declared types (the error is the caller's to handle); read
        // again against the object when the token starts, where the objects the path reaches
        // are known.
        var declared: [ObservedPath] = []
        for path in paths { declared.append(try StringKeyPath.parse(path, rootType: Root.self)) }
        return ObservationSource<Root, Void> { root, delivery in
            let (parsed, startsDeparted) = StringKeyPath.parseStarting(
                paths, declared: declared, root: root, fileID: delivery.fileID, line: delivery.line)
            let token = root._observe(
                ErasedSubscription(
                    root: root, observer: delivery.observer, target: .paths(parsed), options: delivery.options,
                    queue: delivery.queue, wantsOldValue: false, site: delivery.site(.path),
                    callback: delivery.general))
            if startsDeparted { token.subscription.scheduleLastDelivery() }
            return token
        }
    }
}

extension ObservationSource where Payload: ObservableModelBase {
    /// Extends a chain source by one segment (`.chain(\.currentUser).then(\.address)`).
    ///
    /// - Parameter keyPath: An `@Observed` property of the endpoint's type.
    public func then<Next>(_ keyPath: KeyPath<Payload, Next>) -> ObservationSource<Root, Next> {
        guard let chain = chain as? KeyPathChain<Root, Payload> else {
            return readingAfterwards { $0[keyPath: keyPath] }
        }
        return .chain(chain.then(keyPath))
    }
}

extension ObservationSource {
    /// Extends a chain source through an optional endpoint (`.chain(\.currentUser).then(\.name)`
    /// with `currentUser: User?`); the chain waits while it is nil.
    ///
    /// - Parameter keyPath: An `@Observed` property of the endpoint's type.
    public func then<Model: ObservableModelBase, Next>(_ keyPath: KeyPath<Model, Next>) -> ObservationSource<
        Root, Next?
    > where Payload == Model? {
        guard let chain = chain as? KeyPathChain<Root, Payload> else {
            return readingAfterwards { $0?[keyPath: keyPath] }
        }
        return .chain(chain.then(keyPath))
    }

    /// Extends a chain source through an optional endpoint to an optional property.
    ///
    /// - Parameter keyPath: An optional `@Observed` property of the endpoint's type.
    public func then<Model: ObservableModelBase, Next>(_ keyPath: KeyPath<Model, Next?>) -> ObservationSource<
        Root, Next?
    > where Payload == Model? {
        guard let chain = chain as? KeyPathChain<Root, Payload> else {
            return readingAfterwards { $0?[keyPath: keyPath] }
        }
        return .chain(chain.then(keyPath))
    }

    /// `then` on a source that is not a chain (`.value { $0.user }.then(\.name)`): a
    /// programming error — only a chain observes the segments it adds. A trap in debug builds;
    /// release builds say so once and deliver the segment read from each delivery of this source,
    /// without observing it.
    private func readingAfterwards<Next>(_ read: @escaping (Payload) -> Next) -> ObservationSource<Root, Next> {
        let message =
            "ObservationSource.then(_:) extends a chain: start it with .chain(\\.property), or read the property inside .value { }"
        #if DEBUG
            _reportMisuse(message)
        #else
            RuntimeComponentLog.logOnce(message)
        #endif
        let start = self.start
        return ObservationSource<Root, Next> { root, delivery in
            let callback = delivery.callback
            nonisolated(unsafe) let read = read
            return start(
                root,
                _ObservationDelivery(
                    observer: delivery.observer, options: delivery.options, queue: delivery.queue,
                    fileID: delivery.fileID, line: delivery.line,
                    callback: { observer, root, payload in callback(observer, root, read(payload)) }))
        }
    }
}
