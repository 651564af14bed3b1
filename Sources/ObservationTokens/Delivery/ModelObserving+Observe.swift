// The deliveries: each `observe` overload here takes any source (`ObservationSource`) and says
// how its token delivers — with or without an observer, nonisolated or on the main actor, with
// or without a payload. A new source is one static factory on `ObservationSource`; a new
// delivery style is one group of overloads here. Key path literals keep their own overloads
// (`ModelObserving.swift`), inlinable so that the key path folds into a getter call.

extension ModelObserving where Self: ObservableModelBase {
    // MARK: Sources without a payload

    /// Observes a source; the callback receives the observed object.
    ///
    /// ```swift
    /// let token = person.observe([\.firstName, \.lastName]) { person in
    ///     print(person.firstName, person.lastName)
    /// }
    /// let pathToken = try cache.observe(.path("currentUser.address.zipCode")) { cache in
    ///     print(cache.currentUser?.address?.zipCode ?? "-")
    /// }
    /// ```
    ///
    /// Keep the returned token: the observation ends when it deinitializes (or on
    /// `invalidate()`, or when the object deinitializes). The callback runs at most once per
    /// tick, on `queue`'s target, however often what the source watches changed.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Receives the observed object. Use it instead of capturing the object, so
    ///     the closure holds no strong reference to it.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: What the source costs to start: O(1) for one property, O(*k*) for *k*
    ///   key paths, one walk for a path.
    public func observe(
        _ source: ObservationSource<Self, Void>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        source.start(
            self,
            _ObservationDelivery(
                observer: nil, options: options, queue: queue, fileID: fileID, line: line,
                callback: { _, model, _ in callback(model) }))
    }

    /// Observes a source on behalf of `observer`, which the token holds weakly.
    ///
    /// ```swift
    /// person.observe([\.firstName, \.lastName], observer: self) { screen, person in
    ///     screen.title = person.firstName + " " + person.lastName
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// If the observer is gone at delivery, the callback doesn't run and the token ends.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Receives the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        _ source: ObservationSource<Self, Void>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        source.start(
            self,
            _ObservationDelivery(
                observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                callback: { observer, model, _ in
                    // Deliveries pass the observer given at creation, alive.
                    _withObserver(observer, as: Observer.self) { callback($0, model) }
                }))
    }

    /// Observes a source with a callback isolated to the main actor.
    ///
    /// ```swift
    /// @MainActor final class SummaryView {
    ///     var text = ""
    ///     private var tokens = Set<ObservationToken>()
    ///
    ///     init(list: TodoList) {
    ///         list.observe([\.filter, \.remainingCount], observer: self, isolation: MainActor.shared) { view, list in
    ///             view.text = "\(list.remainingCount) left"
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
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Runs on the main actor with the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe(
        _ source: ObservationSource<Self, Void>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(source, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a source on behalf of `observer`, held weakly, with a callback isolated to the
    /// main actor. See ``observe(_:options:queue:isolation:fileID:line:_:)-(ObservationSource<Self,Void>,_,_,_,_,_,_)``
    /// for where the callback runs.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Runs on the main actor with the observer and the observed object.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Observer: AnyObject>(
        _ source: ObservationSource<Self, Void>,
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
                source, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }

    // MARK: Sources with a payload

    /// Observes a source whose callback also receives a payload: a change's old and new values
    /// (``ObservationSource/changes(_:)-(KeyPath<Root,Value>)``), a chain's endpoint, a computed
    /// value, which properties changed, a collection's change list…
    ///
    /// ```swift
    /// let token = account.observe(.changes(\.balance)) { account, change in
    ///     print(change.old, "→", change.new)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Receives the observed object and the source's payload.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Payload>(
        _ source: ObservationSource<Self, Payload>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, Payload) -> Void
    ) -> ObservationToken {
        source.start(
            self,
            _ObservationDelivery(
                observer: nil, options: options, queue: queue, fileID: fileID, line: line,
                callback: { _, model, payload in callback(model, payload) }))
    }

    /// Observes a source with a payload on behalf of `observer`, which the token holds weakly.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Receives the observer, the observed object and the source's payload.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Payload, Observer: AnyObject>(
        _ source: ObservationSource<Self, Payload>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self, Payload) -> Void
    ) -> ObservationToken {
        source.start(
            self,
            _ObservationDelivery(
                observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                callback: _observerCallback(callback)))
    }

    /// Observes a source with a payload, with a callback isolated to the main actor.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Runs on the main actor with the observed object and the payload.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Payload>(
        _ source: ObservationSource<Self, Payload>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Self, Payload) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(source, options: options, queue: queue, fileID: fileID, line: line, gate.wrap(callback)))
    }

    /// Observes a source with a payload on behalf of `observer`, held weakly, with a callback
    /// isolated to the main actor.
    ///
    /// - Parameters:
    ///   - source: What to observe (see ``ObservationSource``).
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where deliveries start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the callback is isolated to the main actor.
    ///   - fileID: The file that creates the token (the default), named by the debugging aids.
    ///   - line: The line that creates the token (the default), named by the debugging aids.
    ///   - callback: Runs on the main actor with the observer, the observed object and the
    ///     payload.
    /// - Returns: The token that keeps the observation alive.
    public func observe<Payload, Observer: AnyObject>(
        _ source: ObservationSource<Self, Payload>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @MainActor @Sendable (Observer, Self, Payload) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(
            observe(
                source, observer: observer, options: options, queue: queue, fileID: fileID, line: line,
                gate.wrap(callback)))
    }
}

/// The caller's observer-typed callback as the delivery's erased shape, for every source: the
/// same closure, reinterpreted, not a second closure around it (whose context, one allocation
/// per token, was freed again at the token's end: ≈ 300 instructions per token made and ended).
///
/// Sound because the two function types lower to the same calling convention: they differ
/// only in the first parameter, `Observer` (bound to `AnyObject`) against `AnyObject?`, both
/// passed as one borrowed object reference; `Root` (bound to `ObservableModelBase`) and
/// `Payload` are the same type on both sides and lower alike. The closure is reinterpreted as
/// the field of a struct, not as a function value: `unsafeBitCast` of a function value hands it
/// to a generic parameter, which wraps it in two reabstraction thunks (two allocations), while
/// the two boxes' fields are stored at the same abstraction (their generic parameters carry
/// the same constraints as the callers'), so the bits are the closure's own.
///
/// The delivery must then never call it with a nil observer: it is given an observer, so every
/// subscription it makes has one (`hasObserver`), and every delivery of such a subscription
/// passes it loaded and alive, or ends the token instead (`Subscription.finishDelivering`,
/// `deliverNow`, `deliverComputedChangeNow`; `.willChange` returns before its call). The
/// closure wrapped here before checked for nil with `_withObserver`; the check is the
/// subscriptions' alone now.
@inline(__always)
func _observerCallback<Observer: AnyObject, Root: ObservableModel, Payload>(
    _ callback: @escaping @Sendable (Observer, Root, Payload) -> Void
) -> @Sendable (AnyObject?, Root, Payload) -> Void {
    unsafeBitCast(_ObserverCallbackBox(call: callback), to: _ErasedObserverCallbackBox<Root, Payload>.self).call
}

/// `_observerCallback`'s view of the caller's closure.
private struct _ObserverCallbackBox<Observer: AnyObject, Root: ObservableModel, Payload> {
    let call: @Sendable (Observer, Root, Payload) -> Void
}

/// `_observerCallback`'s view of the delivery's closure.
private struct _ErasedObserverCallbackBox<Root: ObservableModel, Payload> {
    let call: @Sendable (AnyObject?, Root, Payload) -> Void
}
