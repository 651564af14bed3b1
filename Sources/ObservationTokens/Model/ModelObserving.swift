/// The observation methods of ``ObservableModel``, with key paths typed on the receiver.
///
/// ``ObservableModel`` conforms; you never conform a type yourself, except to name it again on
/// a subclass of your own model class in a main-actor module (see ``ObservableModel``). The
/// protocol exists so the methods can name `Self` in key paths and callbacks, and it inherits
/// `SendableMetatype` so that a class naming it is not inferred to be main-actor isolated.
public protocol ModelObserving: AnyObject, SendableMetatype {}

// The typed entry points are inlinable so the key path is applied by code specialized for it
// in the caller's module (see `TypedKey`); they only wrap their arguments and call `_observe`.
extension ModelObserving where Self: ObservableModelBase {
    /// Observes one property; the callback receives the observed object.
    ///
    /// ```swift
    /// let token = address.observe(\.zipCode) { address in
    ///     print("zip code is now", address.zipCode)
    /// }
    /// ```
    ///
    /// Keep the returned token: the observation ends when it deinitializes. The callback runs
    /// once per tick at most, on `queue`'s target, however often the property changed.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver (the lean path: one edge). Any
    ///     other key path that reads `@Observed` properties — computed (`\.fullName`), composed
    ///     (`\.address?.zipCode`), nested (`\.items.count`) — gives a tracked token, which
    ///     watches what the key path read and re-evaluates it at each delivery (see
    ///     `docs/Tracking.md`). A key path that reads no `@Observed` property traps in debug
    ///     builds and returns an ended token in release builds (`observe(checking:)` throws).
    ///   - options: `.initial`, `.immediate`, `.endpointChanges` (fire only when the value
    ///     differs from the one last delivered); see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the observed object. Use it instead of capturing the object, so
    ///     the closure holds no strong reference to it.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    public func observe<Value>(
        _ keyPath: consuming KeyPath<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        let access = _KeyPathAccess(consume keyPath)
        let source = access.source
        let site = CreationSite(fileID: fileID, line: line, kind: .property, options: options)
        return _observe(
            source,
            subscription: _ModelSubscription(
                root: self, target: .key(source, options: options), options: options, queue: queue, site: site,
                callback: callback),
            orTrack: {
                _observeTracked(
                    source.key, read: _TrackedRead(access), observer: nil, options: options, queue: queue, site: site,
                    keepsLast: false,
                    reportsMisuse: true
                ) { (_: AnyObject?, model: Self, _: Value, _: Value) in callback(model) }.token
            })
    }

    /// Observes one property on behalf of `observer`, which the token holds weakly.
    ///
    /// ```swift
    /// address.observe(\.zipCode, observer: self) { label, address in
    ///     label.text = address.zipCode
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// The callback receives both objects as arguments, so it never needs to capture `self`.
    /// If the observer is gone at delivery, the callback doesn't run and the token ends.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver, or any key path that reads some
    ///     (a tracked token; see `observe(_:options:queue:_:)` with a key path).
    ///   - observer: The object the callback works on; held weakly.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the observer and the observed object.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    public func observe<Observer: AnyObject, Value>(
        _ keyPath: consuming KeyPath<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        _observe(
            consume keyPath, observer: observer, options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .property, options: options), callback)
    }

    /// `observe(_:observer:options:queue:fileID:line:_:)` with the site given (`values(of:)`
    /// makes its tokens through it).
    @inlinable @inline(__always)
    func _observe<Observer: AnyObject, Value>(
        _ keyPath: consuming KeyPath<Self, Value>, observer: Observer, options: ObservationOptions,
        queue: CoalescingQueue, site: CreationSite, _ callback: @escaping @Sendable (Observer, Self) -> Void
    ) -> ObservationToken {
        let access = _KeyPathAccess(consume keyPath)
        let source = access.source
        return _observe(
            source,
            subscription: _ObserverSubscription(
                root: self, observer: observer, target: .key(source, options: options), options: options,
                queue: queue, site: site, callback: callback),
            orTrack: {
                _observeTracked(
                    source.key, read: _TrackedRead(access), observer: observer, options: options, queue: queue,
                    site: site,
                    keepsLast: false, reportsMisuse: true
                ) { (observer: AnyObject?, model: Self, _: Value, _: Value) in
                    // Deliveries pass the observer given at creation, alive.
                    _withObserver(observer, as: Observer.self) { callback($0, model) }
                }.token
            })
    }

}

extension ObservableModelBase {
    /// Starts a single-key-path subscription built by an inlinable entry point. A key path that
    /// is not one `@Observed` property of the receiver (computed, composed, nested) becomes the
    /// tracked token that `track` makes (see `TrackedSubscription`).
    ///
    /// Inlined, so that `track`, built from a key path literal in the caller, is specialized
    /// there and applies the key path as a direct getter call; the fast path is one call and a
    /// branch, as before.
    @inlinable @inline(__always)
    final func _observe(
        _ key: TypedKey, subscription: consuming Subscription, orTrack track: () -> ObservationToken
    ) -> ObservationToken {
        if let token = _start(key, subscription: consume subscription) { return token }
        return track()
    }

    /// `_observe(_:subscription:orTrack:)` for a key not made yet (the key path entry points).
    @inlinable @inline(__always)
    final func _observe(
        _ source: _KeySource, subscription: consuming Subscription, orTrack track: () -> ObservationToken
    ) -> ObservationToken {
        if let token = _start(source, subscription: consume subscription) { return token }
        return track()
    }

    /// The non-inlined half of `_observe`: nil when the key path needs tracking. The token
    /// takes over the caller's reference to the subscription (a borrowed one was retained for
    /// the token and released by the caller: ≈ 40 instructions per token).
    @usableFromInline
    final func _start(_ key: TypedKey, subscription: consuming Subscription) -> ObservationToken? {
        if subscription.isProperty {
            guard subscription.startInline(root: self, key: key) else { return nil }
            let token = ObservationToken(subscription: subscription)
            if token.subscription.isInitial { token.subscription.deliverNow(oldValue: nil, isChange: false) }
            return token
        }
        // `.endpointChanges`: a one-step path.
        let token = ObservationToken(subscription: subscription)
        return start(token.subscription) ? token : nil
    }

    /// `_start(_:subscription:)` for a key not made yet: a key path already resolved at its
    /// site (`_KeySource.site`) attaches without the key path object.
    @usableFromInline
    final func _start(_ source: _KeySource, subscription: consuming Subscription) -> ObservationToken? {
        if subscription.isProperty {
            guard subscription.startInline(root: self, source: source) else { return nil }
            let token = ObservationToken(subscription: subscription)
            if token.subscription.isInitial { token.subscription.deliverNow(oldValue: nil, isChange: false) }
            return token
        }
        // `.endpointChanges`: a one-step path (its target made the key).
        let token = ObservationToken(subscription: subscription)
        return start(token.subscription) ? token : nil
    }

    /// Starts a path subscription built by an inlinable entry point. An empty list of key
    /// paths or chains would observe nothing: a trap in debug builds, an ended token otherwise.
    @usableFromInline
    final func _observe(_ subscription: Subscription) -> ObservationToken {
        let token = ObservationToken(subscription: subscription)
        guard !subscription.paths.isEmpty else {
            subscription.end()
            _reportMisuse(
                "observe([]) at \(subscription.site) was given an empty list, so the token would observe nothing. Pass at least one key path."
            )
            return token
        }
        start(subscription)
        return token
    }

    /// Starts the subscription of a list of key paths (`observe([…])`). A key path that is not
    /// one `@Observed` property of the receiver is a programming error, as for a single key
    /// path: a trap in debug builds naming it and the fix, an ended token otherwise.
    @usableFromInline
    final func _observeList(_ subscription: Subscription) -> ObservationToken {
        let token = _observe(subscription)
        if !subscription.paths.isEmpty, !subscription.isActive, let key = firstMisfitKey(of: subscription) {
            _reportMisuse("observe([…]) at \(subscription.site): \(listMisfit(key))")
        }
        return token
    }

    /// Starts a single-key-path change token (`.changes`), with a type-erased callback.
    @usableFromInline
    final func _observeChange(
        _ key: TypedKey, observer: AnyObject? = nil, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, callback: @escaping _GeneralCallback, orTrack track: () -> ObservationToken
    ) -> ObservationToken {
        _observe(
            key,
            subscription: ErasedSubscription(
                root: self, observer: observer, target: .key(key, options: options), options: options, queue: queue,
                wantsOldValue: true, site: site, callback: callback),
            orTrack: track)
    }

    final func makeToken(
        paths: some Sequence<ObservedPath>,
        observer: AnyObject?,
        options: ObservationOptions,
        queue: CoalescingQueue,
        wantsOldValue: Bool = false,
        site: CreationSite,
        callback: @escaping _GeneralCallback
    ) -> ObservationToken {
        let subscription = ErasedSubscription(
            root: self, observer: observer, target: .paths(Array(paths)), options: options, queue: queue,
            wantsOldValue: wantsOldValue, site: site, callback: callback
        )
        let token = ObservationToken(subscription: subscription)
        start(subscription)
        return token
    }

    /// Attaches a new subscription and runs `.initial`. A subscription whose paths don't
    /// start with an `@Observed` property of `self` ends at once.
    @discardableResult
    final func start(_ subscription: Subscription) -> Bool {
        guard subscription.start(root: self) else { return false }
        if subscription.isInitial {
            subscription.deliverNow(oldValue: nil, isChange: false)
        }
        return true
    }
}

extension ObservableModelBase {
    /// The list source's token (`ObservationSource`'s array literal).
    final func _observeList<Root: ObservableModel>(
        _ keyPaths: [PartialKeyPath<Root>], delivery: _ObservationDelivery<Root, Void>
    ) -> ObservationToken {
        _observeList(
            ErasedSubscription(
                root: self, observer: delivery.observer, target: .keys(keyPaths.map { TypedKey(partial: $0) }),
                options: delivery.options, queue: delivery.queue, wantsOldValue: false, site: delivery.site(.list),
                callback: delivery.general))
    }
}
