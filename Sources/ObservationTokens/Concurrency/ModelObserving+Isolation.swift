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

    /// Observes whatever the closure reads, with the closure isolated to the main actor: it runs
    /// at registration and at each delivery, and the token watches what it read that time.
    ///
    /// ```swift
    /// list.observe(observer: self, isolation: MainActor.shared) { view, list in
    ///     view.text = "\(list.remainingCount) left"   // view: a @MainActor object
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// The closure is both the read and the callback, so it runs where deliveries run: make the
    /// token on the main actor and deliver it through the main queue (the default) or a
    /// `.manual` queue drained on the main actor. A delivery anywhere else is a programming
    /// error: a debug build traps naming the fix; a release build skips that run and logs once.
    ///
    /// - Parameters:
    ///   - options: `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries run; the main queue by default.
    ///   - isolation: `MainActor.shared`: the closure is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - body: Reads what to watch, and acts on it, on the main actor.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ body: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        observe(options: options, queue: queue, fileID: fileID, line: line) { model in
            let model = MainActorHandOff(value: model)
            MainActorDelivery.runTracking(at: fileID, line) { body(model.value) }
        }
    }

    /// Observes whatever the closure reads on behalf of `observer`, held weakly, with the closure
    /// isolated to the main actor. See ``observe(options:queue:isolation:fileID:line:_:)`` for
    /// where it runs.
    ///
    /// - Parameters:
    ///   - observer: The object the closure works on; held weakly.
    ///   - options: `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where deliveries run; the main queue by default.
    ///   - isolation: `MainActor.shared`: the closure is isolated to the main actor.
    ///   - fileID: Where the token is created, for its description.
    ///   - line: Where the token is created, for its description.
    ///   - body: Reads what to watch, and acts on it, on the main actor, with the observer.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ body: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let handOff = MainActorHandOff(value: body)
        return observe(observer: observer, options: options, queue: queue, fileID: fileID, line: line) {
            observer, model in
            let arguments = MainActorHandOff(value: (observer, model))
            MainActorDelivery.runTracking(at: fileID, line) { handOff.value(arguments.value.0, arguments.value.1) }
        }
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

    /// Observes a key path chain for as long as `observer` lives, with a callback isolated to
    /// the main actor.
    ///
    /// ```swift
    /// person.tell(self, when: KeyPathChain(\.friend).then(\.name), isolation: MainActor.shared) { screen, person in
    ///     screen.subtitle = person.friend?.name ?? ""
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - chain: The path of `@Observed` properties to follow.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the observation is created, for its description.
    ///   - line: Where the observation is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    @discardableResult
    public func tell<Observer: AnyObject, Value>(
        _ observer: Observer,
        when chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) -> TellObservation {
        tell(
            observer, when: chain, options: options, queue: queue, fileID: fileID, line: line,
            MainActorGate().wrap(callback))
    }

    /// Observes a string key path for as long as `observer` lives, with a callback isolated to
    /// the main actor.
    ///
    /// - Parameters:
    ///   - observer: The object that receives the callback; held weakly.
    ///   - path: A string key path from the receiver (`"friend.name"`).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: Where the observation is created, for its description.
    ///   - line: Where the observation is created, for its description.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: A handle to fire, schedule or stop the observation; dropping it changes
    ///   nothing.
    /// - Throws: A ``KeyPathError`` when the path names no observable property.
    @discardableResult
    public func tell<Observer: AnyObject>(
        _ observer: Observer,
        whenPath path: String,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self) -> Void
    ) throws(KeyPathError) -> TellObservation {
        try tell(
            observer, whenPath: path, options: options, queue: queue, fileID: fileID, line: line,
            MainActorGate().wrap(callback))
    }
}
