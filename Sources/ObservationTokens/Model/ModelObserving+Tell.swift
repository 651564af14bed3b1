extension ModelObserving where Self: ObservableModelBase {
    /// Observes properties for as long as `observer` lives, without a token to keep.
    ///
    /// This is the observer-lifetime style: the observed object holds the observation, and
    /// the observer is held weakly. The observation ends when you call a `stopTelling` method,
    /// when the observed object deinitializes, or at the first delivery after the observer is
    /// gone (the closure is released then, or at the next `tell`/`stopTelling` on this object,
    /// whichever comes first).
    ///
    /// ```swift
    /// person.tell(self, whenAnyOf: [\.firstName, \.lastName]) { screen, person in
    ///     screen.title = "\(person.firstName) \(person.lastName)"
    /// }
    /// // later, optional:
    /// person.stopTelling(self)
    /// ```
    ///
    /// Prefer tokens when you can store one: a token ends exactly when you drop it.
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - keyPaths: `@Observed` properties of the receiver. One that is not, or an empty list,
    ///     traps in debug builds naming the fix; in release builds nothing is observed.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observer and the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing (the observed object owns the observation).
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        whenAnyOf keyPaths: [PartialKeyPath<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        let subscription = _ObserverSubscription(
            root: self, observer: observer, target: .keys(keyPaths.map { TypedKey(partial: $0) }), options: options,
            queue: queue, site: CreationSite(fileID: fileID, line: line, kind: .tell, options: options),
            callback: callback)
        guard !keyPaths.isEmpty else {
            subscription.end()
            _reportMisuse(
                "tell(_:whenAnyOf: []) at \(subscription.site) was given an empty list, so it would observe nothing. Pass at least one key path."
            )
            return TellObservation(subscription)
        }
        let observation = _tell(subscription)
        if !subscription.isActive, let key = firstMisfitKey(of: subscription) {
            _reportMisuse("tell(_:whenAnyOf:) at \(subscription.site): \(listMisfit(key))")
        }
        return observation
    }

    /// Observes a key path chain for as long as `observer` lives, without a token to keep: the
    /// observer-lifetime style (see ``tell(_:whenAnyOf:options:queue:fileID:line:_:)``) for a
    /// path, which follows replaced middle objects like a chain token.
    ///
    /// ```swift
    /// company.tell(self, when: KeyPathChain(\.boss).then(\.name)) { screen, company in screen.render(company) }
    /// company.stopTelling(self, about: KeyPathChain(\.boss).then(\.name))
    /// ```
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - chain: The path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - fileID: The file that creates the observation (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the observation (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    @discardableResult
    public func tell<Observer: AnyObject, Value>(
        _ observer: Observer,
        when chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        let isValid = checkChains([chain.steps], fileID: fileID, line: line)
        let observation = _tell(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths([chain.path]), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .tell, options: options), callback: callback))
        if !isValid { observation.stop() }
        return observation
    }

    /// Observes a string key path for as long as `observer` lives, without a token to keep
    /// (see ``tell(_:whenAnyOf:options:queue:fileID:line:_:)``).
    ///
    /// ```swift
    /// try company.tell(self, whenPath: "boss.name") { screen, company in screen.render(company) }
    /// company.stopTelling(self, aboutPath: "boss.name")
    /// ```
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - path: A dotted key path of `@Observed` property names, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - fileID: The file that creates the observation (the default), named in descriptions.
    ///   - line: The line that creates the observation (the default), named in descriptions.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    /// - Throws: ``KeyPathError`` for a malformed path or an unknown property.
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        whenPath path: String,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) throws(KeyPathError) -> TellObservation {
        let parsed = try StringKeyPath.parse(path, root: self)
        return _tell(
            _ObserverSubscription(
                root: self, observer: observer, target: .paths([parsed]), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .tell, options: options), callback: callback))
    }

    /// Hands `subscription` to the registry, which owns it from then on, and starts it.
    private func _tell(_ subscription: Subscription) -> TellObservation {
        registry.endRetained { _ in false }  // sweeps observations whose observer is gone
        // Owned by the registry from here on: no token, the observed object keeps it.
        registry.retain(subscription)
        if !start(subscription) { registry.endRetained { $0 === subscription } }
        return TellObservation(subscription)
    }

    /// Observes one property for as long as `observer` lives, without a token to keep.
    ///
    /// See ``tell(_:whenAnyOf:options:queue:fileID:line:_:)``.
    ///
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        when keyPath: PartialKeyPath<Self>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        tell(observer, whenAnyOf: [keyPath], options: options, queue: queue, fileID: fileID, line: line, callback)
    }

    /// Ends the observer-lifetime observations of the given properties that `observer` made
    /// with `tell` on this object. Forgiving: stopping what was never observed, or twice,
    /// does nothing. Tokens are not affected.
    ///
    /// An observation of several properties ends if it includes any of `keyPaths`.
    public func stopTelling(_ observer: AnyObject, about keyPaths: [PartialKeyPath<Self>]) {
        guard let registry = existingRegistry else { return }
        let serials = Set(keyPaths.compactMap { PathStep.key(TypedKey(partial: $0)).resolveSerial(on: self) })
        let id = ObjectIdentifier(observer)
        registry.endRetained { subscription in
            subscription.observerID == id && subscription.watchesRootProperty(in: serials, root: self)
        }
    }

    /// Ends the observer-lifetime observations of `chain` that `observer` made with `tell` on
    /// this object. Forgiving, like `stopTelling(_:about:)` with key paths.
    ///
    /// A path matches when it names the same properties in the same order, whether it was
    /// given to `tell` as a chain or as a string path.
    ///
    /// - Parameters:
    ///   - observer: The observer given to `tell`.
    ///   - chain: The path given to `tell`.
    public func stopTelling<Value>(_ observer: AnyObject, about chain: KeyPathChain<Self, Value>) {
        stopTelling(observer, matching: chain.path)
    }

    /// Ends the observer-lifetime observations of the string key path `path` that `observer`
    /// made with `tell` on this object (EBNObservable's `stopTelling(_:aboutChangesTo:)`).
    /// Forgiving: a path that was never told, or that doesn't parse, ends nothing.
    ///
    /// - Parameters:
    ///   - observer: The observer given to `tell`.
    ///   - path: The path given to `tell`, or the same properties as a chain.
    public func stopTelling(_ observer: AnyObject, aboutPath path: String) {
        guard let parsed = try? StringKeyPath.parse(path, root: self) else { return }
        stopTelling(observer, matching: parsed)
    }

    private func stopTelling(_ observer: AnyObject, matching path: ObservedPath) {
        guard let registry = existingRegistry else { return }
        let id = ObjectIdentifier(observer)
        registry.endRetained { subscription in
            subscription.observerID == id && subscription.paths.contains { $0.isSame(as: path, from: self) }
        }
    }
}

extension ObservableModelBase {
    /// Ends every observer-lifetime observation that `observer` made with `tell` on this
    /// object. Forgiving: calling it when nothing is observed, or twice, does nothing.
    public final func stopTelling(_ observer: AnyObject) {
        let id = ObjectIdentifier(observer)
        existingRegistry?.endRetained { $0.observerID == id }
    }
}
