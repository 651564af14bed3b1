extension ModelObserving where Self: ObservableModelBase {
    /// Runs `body` now and again after each change of anything it read: a tracking token.
    ///
    /// The token's dependencies are every `@Observed` property, on any object, that the last
    /// run of `body` read. A run that branches (`flag ? a : b`) stops watching `a` once it reads
    /// `b` instead; an object the run no longer reaches is no longer watched.
    ///
    /// ```swift
    /// let token = person.observe { person in
    ///     label.text = person.firstName + " " + person.lastName
    /// }
    /// ```
    ///
    /// `body` runs once right away, on the calling thread, to learn what it reads (so
    /// `.initial` changes nothing); after that, at most once per tick on `queue`'s target,
    /// however many of its dependencies changed, never inside a setter (with `.immediate`:
    /// inside the setter of each change, on the setting thread).
    ///
    /// - Parameters:
    ///   - options: `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where `body` runs after a change; the main queue by default.
    ///   - body: Receives the observed object and reads what it needs from it. Reads of
    ///     `@Observed` properties of other objects it reaches from there are tracked too.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: One run of `body` per delivery, plus O(*d*) in its dependencies to check
    ///   that they did not change (allocation-free when they did not).
    ///
    /// > Note: **Lifetime.** Pass the objects in rather than capturing them: the receiver comes
    /// > back as `body`'s argument, and a second object can be the `observer:` of
    /// > ``observe(observer:options:queue:fileID:line:_:)``; both are held weakly. A model
    /// > captured by `body` is kept alive by the token. The token ends when the receiver
    /// > deinitializes; other objects that `body` read and that deinitialize simply drop out
    /// > (the token runs once more, in the next tick).
    ///
    /// > Important: `body` must read at least one `@Observed` property. One that reads none
    /// > traps in debug builds, and returns an ended token in release builds.
    public func observe(
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ body: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        let subscription = TrackedSubscription<Self, Void>(
            root: self, observer: nil, options: options.subtracting(.initial), queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .tracked, options: options), skipsUnchanged: false,
            keepsLast: false,
            hasCallback: false, body: .init(read: { _, model in body(model) }, deliver: { _, _, _, _ in }))
        return _startTracked(subscription, observer: nil) { Self.emptyBody("observe { … }", fileID, line) }.token
    }

    /// Runs `body` now and after each change of anything it read, on behalf of `observer`,
    /// held weakly.
    ///
    /// Reads of `@Observed` properties of the observer count too, so this is also the way to
    /// track two objects with one token: one run per tick, whichever of them changed.
    ///
    /// ```swift
    /// let token = person.observe(observer: settings) { settings, person in
    ///     print(settings.showsFullName ? person.firstName + " " + person.lastName : person.firstName)
    /// }
    /// ```
    ///
    /// When the observer is gone at a delivery, `body` doesn't run and the token ends.
    ///
    /// - Parameters:
    ///   - observer: The object `body` works on; held weakly.
    ///   - options: `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where `body` runs after a change; the main queue by default.
    ///   - body: Receives the observer and the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: As for ``observe(options:queue:fileID:line:_:)``.
    public func observe<Observer: AnyObject>(
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ body: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let subscription = TrackedSubscription<Self, Void>(
            root: self, observer: observer, options: options.subtracting(.initial), queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .tracked, options: options), skipsUnchanged: false,
            keepsLast: false,
            hasCallback: false,
            body: .init(
                read: { observer, model in
                    // Runs are passed the observer alive (see `Subscription.deliverNow`).
                    _withObserver(observer, as: Observer.self) { body($0, model) }
                }, deliver: { _, _, _, _ in }))
        return _startTracked(subscription, observer: observer) {
            Self.emptyBody("observe(observer:) { … }", fileID, line)
        }.token
    }

    /// Observes any key path, and throws when it reads no `@Observed` property.
    ///
    /// The same token as `observe(_:options:queue:_:)` with a key path
    /// gives, for code that would rather handle a key path that can't be observed (a plain
    /// `var`, a `let`) than trap in a debug build.
    ///
    /// ```swift
    /// do {
    ///     let token = try person.observe(checking: \.fullName) { person in print(person.fullName) }
    /// } catch {
    ///     print(error)   // for \.nickname: "\Person.nickname reads no @Observed property …"
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: Any key path of the receiver that reads at least one `@Observed` property.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError/noObservedProperty(keyPath:type:)``.
    public func observe<Value>(
        checking keyPath: KeyPath<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        let key = TypedKey(keyPath)
        let site = CreationSite(fileID: fileID, line: line, kind: .property, options: options)
        var observes = true
        let token = _observe(
            key,
            subscription: _ModelSubscription(
                root: self, target: .key(key, options: options), options: options, queue: queue, site: site,
                callback: callback),
            orTrack: {
                let tracked = _observeTracked(
                    key, read: _TrackedRead(_KeyPathAccess(keyPath)), observer: nil, options: options, queue: queue,
                    site: site,
                    keepsLast: false,
                    reportsMisuse: false
                ) { (_: AnyObject?, model: Self, _: Value, _: Value) in callback(model) }
                observes = tracked.observes
                return tracked.token
            })
        if !observes { throw .noObservedProperty(keyPath: "\(keyPath)", type: "\(Self.self)") }
        return token
    }

    /// The misuse message of a tracking closure that read no `@Observed` property.
    static func emptyBody(_ call: String, _ fileID: StaticString, _ line: UInt) -> String {
        "\(call) at \(fileID):\(line) reads no @Observed property, so the token would observe nothing. Read an @Observed property in the closure (mark the property @Observed)."
    }
}

extension ObservableModelBase {
    /// The tracked token a typed key path falls back to when it is not a single `@Observed`
    /// property of the receiver (computed, composed, nested). `observes` is false (and the
    /// token ended) when the key path read no `@Observed` storage; that is reported (a trap
    /// in debug builds) when `reportsMisuse`.
    @usableFromInline
    final func _observeTracked<Model: ObservableModelBase, Value>(
        _ key: TypedKey, read: _TrackedRead<Model, Value>, observer: AnyObject?, options: ObservationOptions,
        queue: CoalescingQueue, site: CreationSite, keepsLast: Bool, reportsMisuse: Bool,
        deliver: @escaping @Sendable (AnyObject?, Model, Value, Value) -> Void
    ) -> (token: ObservationToken, observes: Bool) {
        let subscription = TrackedSubscription<Model, Value>(
            root: unsafeDowncast(self, to: Model.self), observer: observer, options: options, queue: queue,
            // A single key path's entry point made the site; the token is a tracked one.
            site: site.kind == .property ? site.with(kind: .tracked) : site, keyPath: key.keyPath,
            skipsUnchanged: options.contains(.endpointChanges), keepsLast: keepsLast, hasCallback: true,
            body: .init(
                read: { _, model in read.apply(model) },
                deliver: deliver))
        return _startTracked(subscription, observer: observer) {
            guard reportsMisuse else { return nil }
            return
                "\(key.keyPath) reads no @Observed property of \(type(of: self)), so the token would observe nothing. Mark the property @Observed, or use observe(checking:) to get a KeyPathError instead of this trap."
        }
    }

    /// Starts a tracked subscription and wraps it in a token. When its first evaluation read
    /// no `@Observed` storage, the token is ended and `misuse`'s message, if any, is reported
    /// (a trap in debug builds).
    final func _startTracked<Model: ObservableModelBase, Value>(
        _ subscription: TrackedSubscription<Model, Value>, observer: AnyObject?, misuse: () -> String?
    ) -> (token: ObservationToken, observes: Bool) {
        let token = ObservationToken(subscription: subscription)
        guard subscription.start(root: unsafeDowncast(self, to: Model.self), observer: observer) else {
            subscription.end()
            if let message = misuse() { _reportMisuse(message) }
            return (token, false)
        }
        return (token, true)
    }
}

/// A typed key path's read, built by inlinable code in the caller's module: there the key path
/// is a literal, and the optimizer turns its application into a direct getter call instead of
/// a trip through the key path runtime.
///
/// `@unchecked Sendable`: it only applies one (immutable) key path.
@usableFromInline
struct _TrackedRead<Model: ObservableModelBase, Value>: @unchecked Sendable {
    @usableFromInline
    let apply: (Model) -> Value

    @inlinable @inline(__always)
    init(_ access: _KeyPathAccess<Model, Value>) {
        apply = { access.read($0) }
    }
}

/// A typed key path held only by a closure that applies it (a `KeyPathChain.Segment`), built
/// by the inlinable entry points in the caller's module from the key path they were given.
///
/// The closure is the key path's only user, so where the key path is a literal the optimizer
/// moves it into the closure and turns its application into direct getter calls — for a
/// composed path such as `\.owner?.address?.zipCode` too — instead of a trip through the key
/// path runtime (≈ 1,000 instructions per component). Anything that needs the key path object
/// (a `TypedKey`, a description) asks the closure for it, from code that is not inlined.
///
/// `@unchecked Sendable`: it only applies one (immutable) key path.
@usableFromInline
struct _KeyPathAccess<Model: ObservableModelBase, Value>: @unchecked Sendable {
    @usableFromInline
    let segment: KeyPathChain<Model, Value>.Segment<Model, Value>

    /// Takes `keyPath` owned: its lifetime then ends in the closure, which is what lets the
    /// optimizer move a literal into it.
    @inlinable @inline(__always)
    init(_ keyPath: __owned KeyPath<Model, Value>) {
        segment = KeyPathChain<Model, Value>.segment(keyPath)
    }

    /// The key path applied to `model`.
    @inlinable @inline(__always)
    func read(_ model: Model) -> Value {
        KeyPathChain<Model, Value>.read(segment, on: model)
    }

    /// The key for the key path, with a reader specialized here. The reader is handed the key
    /// path (it captures nothing, so it needs no context even when the key path is not a
    /// literal); path walks through a one-step key are rare, so it applies the key path in the
    /// runtime rather than through `segment`.
    @inlinable @inline(__always)
    var key: TypedKey {
        let segment = segment
        return TypedKey(
            keyPathOf: { KeyPathChain<Model, Value>.keyPath(of: segment) },
            reader: TypedKey.reader(Model.self, Value.self))
    }

    /// `key`, not made yet: where the key path is a literal, the closure that makes it captures
    /// nothing, and its code names the key path (`_KeySource.site`).
    @inlinable @inline(__always)
    var source: _KeySource {
        let segment = segment
        return _KeySource(
            keyPathOf: { KeyPathChain<Model, Value>.keyPath(of: segment) },
            reader: TypedKey.reader(Model.self, Value.self))
    }
}

/// A programming error that would otherwise observe nothing, silently: a trap with `message`
/// in debug builds; nothing in release builds (the caller returns an ended token).
@usableFromInline
func _reportMisuse(_ message: @autoclosure () -> String) {
    #if DEBUG
        preconditionFailure("ObservationTokens: \(message())")
    #endif
}
