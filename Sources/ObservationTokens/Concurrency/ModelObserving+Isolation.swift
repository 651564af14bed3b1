// Main-actor variants of every observe form, chosen by the `isolation: MainActor.shared`
// argument. Each wraps the callback so that it runs on the main actor (see `MainActorGate`)
// and calls the nonisolated form.
//
// Why an argument and not an overload on the closure's type: Swift does not overload on a
// function type's global actor (`@MainActor (T) -> Void` and `(T) -> Void` are the same
// declaration), and a defaulted discriminator doesn't help either: the type checker picks the
// nonisolated form for a `{ @MainActor … in }` closure and only then reports the lost global
// actor. `@isolated(any)` callbacks can only be called with `await`, so they can't run inside
// the drain.

extension ModelObserving where Self: ObservableModelBase {
    /// Observes one property with a callback isolated to the main actor.
    ///
    /// Pass `isolation: MainActor.shared`: the closure is then isolated to the main actor and
    /// may use main-actor state, such as a `@MainActor` view model, with no
    /// `MainActor.assumeIsolated`.
    ///
    /// ```swift
    /// @MainActor final class ProfileViewModel {
    ///     var title = ""
    ///     private var tokens = Set<ObservationToken>()
    ///
    ///     init(person: Person) {
    ///         person.observe(\.name, observer: self, isolation: MainActor.shared) { viewModel, person in
    ///             viewModel.title = person.name
    ///         }
    ///         .store(in: &tokens)
    ///     }
    /// }
    /// ```
    ///
    /// > Note: **Where it runs.** On the default ``CoalescingQueue/main`` queue the callback runs
    /// > synchronously inside the drain, which runs on the main actor; so does a
    /// > ``CoalescingQueue/drain()`` of a `.manual` queue called from main-actor code. A delivery
    /// > anywhere else (a `.dispatch` queue, a `drain()` on another thread, an `.immediate` token
    /// > set on another thread) schedules the callback on the main queue and returns: it runs
    /// > later, in the order scheduled, and not at all if the token has ended by then. `drain()`
    /// > counts such a delivery when it schedules it.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1).
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(keyPath, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes one property on behalf of `observer`, held weakly, with a callback isolated to
    /// the main actor.
    ///
    /// ```swift
    /// person.observe(\.name, observer: self, isolation: MainActor.shared) { viewModel, person in
    ///     viewModel.title = person.name
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// See the single-property `observe(_:options:queue:isolation:fileID:line:_:)` for where the callback
    /// runs.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject, Value>(
        _ keyPath: KeyPath<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(
                keyPath, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }

    /// Observes several properties with one token and a callback isolated to the main actor.
    ///
    /// - Parameters:
    ///   - keyPaths: `@Observed` properties of the receiver.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        _ keyPaths: [PartialKeyPath<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(keyPaths, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes several properties with one token on behalf of `observer`, with a callback
    /// isolated to the main actor.
    ///
    /// - Parameters:
    ///   - keyPaths: `@Observed` properties of the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        _ keyPaths: [PartialKeyPath<Self>],
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(
                keyPaths, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }

    /// Observes several properties, listed as arguments, with a callback isolated to the main
    /// actor.
    ///
    /// - Parameters:
    ///   - first: An `@Observed` property of the receiver.
    ///   - second: Another one.
    ///   - more: Any further ones.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        _ first: PartialKeyPath<Self>,
        _ second: PartialKeyPath<Self>,
        _ more: PartialKeyPath<Self>...,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        observe(
            [first, second] + more, options: options, queue: queue, isolation: isolation, fileID: fileID, line: line,
            callback)
    }

    /// Observes one property's old and new value with a callback isolated to the main actor.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object and the change.
    /// - Returns: The token that keeps the observation alive.
    public func observeChanges<Value>(
        _ keyPath: KeyPath<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self, PropertyChange<Value>) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observeChanges(keyPath, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a key path chain with a callback isolated to the main actor.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object and the endpoint's value
    ///     at delivery.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Value>(
        _ chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self, Value) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(chain, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a key path chain on behalf of `observer` with a callback isolated to the main
    /// actor.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observer, the observed object and the
    ///     endpoint's value at delivery.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject, Value>(
        _ chain: KeyPathChain<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self, Value) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(
                chain, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }

    /// Observes several key path chains with one token and a callback isolated to the main
    /// actor.
    ///
    /// - Parameters:
    ///   - chains: The paths, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        _ chains: [AnyKeyPathChain<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(chains, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a dotted string key path with a callback isolated to the main actor.
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    public func observe(
        path: String,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        try observe(
            paths: [path], options: options, queue: queue, isolation: isolation, fileID: fileID, line: line, callback)
    }

    /// Observes several dotted string key paths with one token and a callback isolated to the
    /// main actor.
    ///
    /// - Parameters:
    ///   - paths: Dotted paths, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` for the first bad path.
    public func observe(
        paths: [String],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            try observe(paths: paths, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a dotted string key path on behalf of `observer` with a callback isolated to
    /// the main actor.
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    public func observe<Observer: AnyObject>(
        path: String,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            try observe(
                path: path, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }

    /// Observes properties for as long as `observer` lives, with a callback isolated to the
    /// main actor.
    ///
    /// ```swift
    /// person.tell(self, whenAnyOf: [\.firstName, \.lastName], isolation: MainActor.shared) { screen, person in
    ///     screen.title = "\(person.firstName) \(person.lastName)"
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - keyPaths: `@Observed` properties of the receiver.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the observation is created, for its description.
    ///   - line: Where the observation is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        whenAnyOf keyPaths: [PartialKeyPath<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        tell(
            observer, whenAnyOf: keyPaths, options: options, queue: queue, fileID: fileID, line: line,
            MainActorGate().wrap(callback))
    }

    /// Observes one property for as long as `observer` lives, with a callback isolated to the
    /// main actor.
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the observation is created, for its description.
    ///   - line: Where the observation is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        when keyPath: PartialKeyPath<Self>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        tell(
            observer, whenAnyOf: [keyPath], options: options, queue: queue, isolation: isolation, fileID: fileID,
            line: line, callback)
    }
}
