extension ModelObserving where Self: ObservableModel {
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
    ///   - keyPaths: `@Observed` properties of the receiver. If any is not, nothing is observed.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main thread by default.
    ///   - callback: Receives the observer and the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        whenAnyOf keyPaths: [PartialKeyPath<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) {
        let subscription = _ObserverSubscription(
            root: self, observer: observer, target: .keys(keyPaths.map { TypedKey(partial: $0) }),
            options: options, queue: queue, site: CreationSite(fileID: fileID, line: line), callback: callback)
        registry.endRetained { _ in false }  // sweeps observations whose observer is gone
        // Owned by the registry from here on: no token, the observed object keeps it.
        registry.retain(subscription)
        if !start(subscription) { registry.endRetained { $0 === subscription } }
    }

    /// Observes one property for as long as `observer` lives, without a token to keep.
    ///
    /// See ``tell(_:whenAnyOf:options:queue:fileID:line:_:)``.
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        when keyPath: PartialKeyPath<Self>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) {
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
}

extension ObservableModel {
    /// Ends every observer-lifetime observation that `observer` made with `tell` on this
    /// object. Forgiving: calling it when nothing is observed, or twice, does nothing.
    public final func stopTelling(_ observer: AnyObject) {
        let id = ObjectIdentifier(observer)
        existingRegistry?.endRetained { $0.observerID == id }
    }
}
