extension ModelObserving where Self: ObservableModelBase {
    /// Observes one property on behalf of `observer`, held weakly, and reports its old and new
    /// value: `observeChanges(_:)` with an observer.
    ///
    /// ```swift
    /// account.observeChanges(\.balance, observer: self) { screen, account, change in
    ///     screen.animate(from: change.old, to: change.new)
    /// }
    /// .store(in: &tokens)
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver, or any key path that reads some
    ///     (then a tracked token, whose `change.old` is the value last delivered).
    ///   - observer: The object the callback works on; held weakly. Once it is gone, the token
    ///     ends at its next delivery.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observer, the observed object and the change.
    /// - Returns: The token that keeps the observation alive.
    @inlinable @inline(__always)
    public func observeChanges<Observer: AnyObject, Value>(
        _ keyPath: consuming KeyPath<Self, Value>,
        observer: Observer,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Observer, Self, PropertyChange<Value>) -> Void
    ) -> ObservationToken {
        let access = _KeyPathAccess(consume keyPath)
        let key = access.key
        let site = CreationSite(fileID: fileID, line: line, kind: .change, options: options)
        return _observeChange(
            key, observer: observer, options: options, queue: queue, site: site,
            callback: { observer, root, oldValue in
                // Deliveries pass the observer given at creation, alive.
                guard observer != nil else { return }
                let model = unsafeDowncast(root, to: Self.self)
                let new = access.read(model)
                let old = (oldValue as? Value) ?? new
                _withObserver(observer, as: Observer.self) { callback($0, model, PropertyChange(old: old, new: new)) }
            },
            orTrack: {
                _observeTracked(
                    key, read: _TrackedRead(access), observer: observer, options: options, queue: queue, site: site,
                    keepsLast: true, reportsMisuse: true
                ) { (observer: AnyObject?, model: Self, new: Value, old: Value) in
                    _withObserver(observer, as: Observer.self) {
                        callback($0, model, PropertyChange(old: old, new: new))
                    }
                }.token
            })
    }

    /// Observes a key path chain and reports its endpoint's old and new value.
    ///
    /// ```swift
    /// let token = cache.observeChanges(KeyPathChain(\.currentUser).then(\.name)) { cache, change in
    ///     print("from", change.old ?? "nobody", "to", change.new ?? "nobody")
    /// }
    /// ```
    ///
    /// `change.old` is the endpoint's value at the previous delivery (at creation for the
    /// first): the value before this tick's first change of anything along the path.
    /// `change.new` is the value when the callback runs. Without `.endpointChanges` a change
    /// along the path that leaves the endpoint's value alone is delivered with `old == new`.
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observed object and the change.
    /// - Returns: The token that keeps the observation alive.
    public func observeChanges<Value>(
        _ chain: KeyPathChain<Self, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, PropertyChange<Value>) -> Void
    ) -> ObservationToken {
        let last = LastDelivered<Value>(chain.evaluate(self))
        return observe(chain, options: options, queue: queue, fileID: fileID, line: line) { model, new in
            callback(model, PropertyChange(old: last.exchange(new), new: new))
        }
    }
}

extension ModelObserving where Self: ObservableModelBase {
    /// Observes a dotted string key path and reports its endpoint's old and new value, as
    /// `Any?` (nil while unreachable).
    ///
    /// ```swift
    /// let token = try cache.observeChanges(path: "currentUser.name") { cache, change in
    ///     print("from", change.old ?? "nobody", "to", change.new ?? "nobody")
    /// }
    /// ```
    ///
    /// `change.old` is the endpoint's value at the previous delivery (at creation for the
    /// first); `change.new` the value when the callback runs.
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observed object and the change.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    public func observeChanges(
        path: String,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, PropertyChange<Any?>) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        let parsed = try StringKeyPath.parse(path, root: self)
        let read: @Sendable (ObservableModelBase) -> Any? = { root in
            if case .value(let value) = parsed.endpoint(from: root) { value } else { nil }
        }
        let last = LastDelivered<Any?>(read(self))
        return makeToken(
            paths: [parsed], observer: nil, options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .path, options: options),
            callback: { _, root, delivered in
                let new: Any?
                if let delivered = delivered as? EndpointDelivery {
                    if case .value(let value) = delivered.endpoint { new = value } else { new = nil }
                } else {
                    new = read(root)
                }
                callback(unsafeDowncast(root, to: Self.self), PropertyChange(old: last.exchange(new), new: new))
            })
    }
}

/// The value a change token on a path delivered last, swapped under a lock.
final class LastDelivered<Value>: Locked<Value>, @unchecked Sendable {  // state is guarded by Locked
    init(_ value: Value) { super.init(state: value) }

    /// Stores `value` and returns the one it replaces.
    func exchange(_ value: Value) -> Value {
        withLock { last in
            defer { last = value }
            return last
        }
    }
}

extension ModelObserving where Self: ObservableModelBase {
    /// Observes the moment before each set of an `@Observed` property of the receiver: the
    /// callback runs on the setting thread, inside the setter, before the store, with the old
    /// value still in place (KVO's `.prior`, Combine's `objectWillChange`).
    ///
    /// ```swift
    /// let token = list.observeWillChange { list in
    ///     snapshot = list.items   // still the items as they were
    /// }
    /// ```
    ///
    /// It runs before *every* set through a setter of the object, whichever property, also
    /// one that turns out to store an equal value (the setter compares only after storing);
    /// writes through `storedValue` don't run it. The object is the granularity, as with
    /// `objectWillChange`: a setter can't tell the callback which property it is about to
    /// write without making every setter of every object slower. Like `.immediate` callbacks it
    /// runs on the setting thread: keep it short, and don't set the object's properties from it
    /// (that recurses). Once an object has one, its setters take the slower path of objects
    /// read by key paths (an out-of-line call and an atomic bit around each store), for good.
    ///
    /// - Parameters:
    ///   - fileID: The file that creates the token (the default), named in descriptions.
    ///   - line: The line that creates the token (the default), named in descriptions.
    ///   - callback: Receives the observed object, before the store.
    /// - Returns: The token that keeps the observation alive; the object's deinit ends it too.
    /// - Complexity: Each set of an object with will-change observations runs them all: O(*w*).
    public func observeWillChange(
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        let site = CreationSite(fileID: fileID, line: line, kind: .willChange, options: [])
        let subscription = WillChangeSubscription(root: self, site: site) { root in
            callback(unsafeDowncast(root, to: Self.self))
        }
        let token = ObservationToken(subscription: subscription)
        subscription.register(on: self)
        return token
    }
}
