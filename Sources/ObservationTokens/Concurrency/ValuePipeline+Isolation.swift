// Main-actor variants of a pipeline's finishing calls, chosen by the `isolation:
// MainActor.shared` argument as for `observe` (see `ModelObserving+Isolation.swift`): `post`
// with a main-actor closure, and `bind` to a destination whose properties are main-actor
// state. Each goes through a `MainActorGate` and calls the nonisolated form's machinery.

extension ValuePipeline {
    /// Posts each pushed value to a closure isolated to the main actor.
    ///
    /// ```swift
    /// @MainActor final class BalanceView {
    ///     var text = ""
    ///     private var tokens = Set<ObservationToken>()
    ///
    ///     init(account: Account) {
    ///         account.pipeline(of: \.balance)
    ///             .map { "\($0) €" }
    ///             .post(isolation: MainActor.shared) { [unowned self] text in self.text = text }
    ///             .store(in: &tokens)
    ///     }
    /// }
    /// ```
    ///
    /// The same as ``post(options:queue:fileID:line:_:)`` in every other way.
    ///
    /// > Note: **Where it runs.** On the default ``CoalescingQueue/main`` queue the closure runs
    /// > synchronously inside the drain, which runs on the main actor; so does a
    /// > ``CoalescingQueue/drain()`` of a `.manual` queue called from main-actor code, and the
    /// > `.initial` post of a pipeline finished on the main actor. A push anywhere else (a
    /// > `.dispatch` queue, a `drain()` on another thread, an `.immediate` posting set on another
    /// > thread) schedules the closure on the main queue and returns: it runs later, in the
    /// > order scheduled, and not at all if the token has ended by then.
    ///
    /// - Parameters:
    ///   - options: `.initial` (the default) posts the current value at creation; pass `[]` to
    ///     receive only new values. `.immediate`; `.endpointChanges` for path sources.
    ///   - queue: Where pushes start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the closure is isolated to the main actor.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    ///   - receive: Runs on the main actor once per push that passed every operator.
    /// - Returns: The token that keeps the posting alive.
    public func post(
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ receive: @escaping @MainActor @Sendable (Output) -> Void
    ) -> ObservationToken {
        let gate = MainActorGate()
        return gate.attach(post(options: options, queue: queue, fileID: fileID, line: line, gate.wrap(receive)))
    }

    /// Binds the pipeline to a property of `destination` that is main-actor state (a property
    /// of a `@MainActor` view or view model): the property is written on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Badge { var text = "" }
    ///
    /// let token = cart.pipeline(of: \.count)
    ///     .map { "\($0) items" }
    ///     .bind(to: badge, \.text, isolation: MainActor.shared)
    /// ```
    ///
    /// The same as ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)``
    /// in every other way.
    ///
    /// > Note: **Where it writes.** A push that runs on the main actor (the default
    /// > ``CoalescingQueue/main`` queue, a `.manual` queue drained from main-actor code, the
    /// > `.initial` push of a binding made on the main actor) writes at once, inside the drain.
    /// > A push anywhere else schedules the write on the main queue and returns: the write
    /// > happens later, in the order scheduled, and not at all if the token has ended by then;
    /// > it is then a new change of the destination, as a write by a posted closure would be.
    ///
    /// - Parameters:
    ///   - destination: Held weakly, as for the nonisolated form.
    ///   - keyPath: The property to write.
    ///   - options: `.initial` (the default) pushes at creation; `.immediate`; `.endpointChanges`
    ///     for path sources.
    ///   - queue: Where pushes start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the property is written on the main actor.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Destination: AnyObject>(
        to destination: Destination,
        _ keyPath: ReferenceWritableKeyPath<Destination, Output>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        _bindOnMainActor(
            to: destination, access: Self._access(keyPath), options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options))
    }

    /// Binds the pipeline to an optional property of `destination` that is main-actor state:
    /// each value is written wrapped, on the main actor.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).bind(to: header, \.subtitle, isolation: MainActor.shared)
    /// ```
    ///
    /// See ``bind(to:_:options:queue:isolation:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_,_)``
    /// for where it writes.
    ///
    /// - Parameters:
    ///   - destination: Held weakly, as for the nonisolated form.
    ///   - keyPath: The optional property to write.
    ///   - options: `.initial` (the default), `.immediate`, `.endpointChanges` for path sources.
    ///   - queue: Where pushes start; the main queue by default.
    ///   - isolation: `MainActor.shared`: the property is written on the main actor.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Destination: AnyObject>(
        to destination: Destination,
        _ keyPath: ReferenceWritableKeyPath<Destination, Output?>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        isolation: MainActor,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        _promoted()._bindOnMainActor(
            to: destination, access: ValuePipeline<Output?>._access(keyPath), options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options))
    }

    /// `_bind` with the destination's reads and writes done on the main actor: a write off it
    /// hops through a `MainActorGate`; a comparison off it answers "can't tell" rather than
    /// read main-actor state.
    private func _bindOnMainActor<Destination: AnyObject>(
        to destination: Destination, access inner: @escaping _DestinationAccess<Destination, Output>,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite
    ) -> ObservationToken {
        let inner = _UncheckedSendable(inner)  // the key path it holds is immutable
        let gate = MainActorGate()
        let write = gate.wrap { (destination: Destination, value: Output) in
            var value = value
            var unused: AnyKeyPath?
            _ = withUnsafePointer(to: &value) { inner.value(destination, $0, false, &unused) }
        }
        let access: _DestinationAccess<Destination, Output> = { destination, value, compare, keyPathOut in
            guard let destination, let value else { return inner.value(nil, nil, false, &keyPathOut) }
            if compare {
                return MainActorDelivery.isOnMainActor ? inner.value(destination, value, true, &keyPathOut) : 2
            }
            write(destination, value.pointee)
            return 0
        }
        return gate.attach(
            _bind(to: destination, access: _UncheckedSendable(access), options: options, queue: queue, site: site))
    }
}
