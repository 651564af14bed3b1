// Sources over an object's own properties, beyond a key path and a list of them: a property's
// changes with old and new values, which of several properties changed, every property, and
// each set before it happens.

extension ObservationSource {
    /// One property, with its old and new values: `change.old` is the value before the first
    /// change of the tick (for a computed value, the value this token last saw), `change.new`
    /// the value when the callback runs.
    ///
    /// ```swift
    /// let token = account.observe(.changes(\.balance)) { account, change in
    ///     print(change.old, "→", change.new)
    /// }
    /// ```
    ///
    /// Sets that return to the starting value in one tick still deliver once, with
    /// `old == new`. A key path that is not one `@Observed` property (computed, composed) is
    /// tracked, and `old` is the value last delivered.
    ///
    /// - Parameter keyPath: The property.
    public static func changes<Value>(_ keyPath: KeyPath<Root, Value>) -> ObservationSource<
        Root, PropertyChange<Value>
    > {
        ObservationSource<Root, PropertyChange<Value>> { root, delivery in
            let access = _KeyPathAccess(keyPath)
            let key = access.key
            let site = delivery.site(.change)
            let callback = delivery.callback
            return root._observeChange(
                key, observer: delivery.observer, options: delivery.options, queue: delivery.queue, site: site,
                callback: { observer, model, oldValue in
                    let root = unsafeDowncast(model, to: Root.self)
                    let new = access.read(root)
                    let old = (oldValue as? Value) ?? new
                    callback(observer, root, PropertyChange(old: old, new: new))
                },
                orTrack: {
                    root._observeTracked(
                        key, read: _TrackedRead(access), observer: delivery.observer, options: delivery.options,
                        queue: delivery.queue, site: site, keepsLast: true, reportsMisuse: true
                    ) { (observer: AnyObject?, model: Root, new: Value, old: Value) in
                        callback(observer, model, PropertyChange(old: old, new: new))
                    }.token
                })
        }
    }

    /// A chain's endpoint, with its old and new values: `change.old` is the endpoint last
    /// delivered (at first, the one at registration).
    ///
    /// - Parameter chain: The chain, rooted at the object's type.
    public static func changes<Value>(_ chain: KeyPathChain<Root, Value>) -> ObservationSource<
        Root, PropertyChange<Value>
    > {
        ObservationSource<Root, PropertyChange<Value>> { root, delivery in
            let last = LastDelivered<Value>(chain.evaluate(root))
            let callback = delivery.callback
            let endpoint = ObservationSource<Root, Value>.chain(chain)
            return endpoint.start(
                root,
                _ObservationDelivery(
                    observer: delivery.observer, options: delivery.options, queue: delivery.queue,
                    fileID: delivery.fileID, line: delivery.line,
                    callback: { observer, model, new in
                        callback(observer, model, PropertyChange(old: last.exchange(new), new: new))
                    }))
        }
    }

    /// A string key path's endpoint, with its old and new values (`nil` while unreachable).
    ///
    /// - Parameter path: Components separated by dots (see ``path(_:)``).
    /// - Throws: ``KeyPathError``, as ``path(_:)`` does.
    public static func changes(path: String) throws(KeyPathError) -> ObservationSource<Root, PropertyChange<Any?>> {
        let declared = try StringKeyPath.parse(path, rootType: Root.self)
        return ObservationSource<Root, PropertyChange<Any?>> { root, delivery in
            let (paths, startsDeparted) = StringKeyPath.parseStarting(
                [path], declared: [declared], root: root, fileID: delivery.fileID, line: delivery.line)
            let parsed = paths[0]
            let read: @Sendable (ObservableModelBase) -> Any? = { root in
                if case .value(let value) = parsed.endpoint(from: root) { value } else { nil }
            }
            let last = LastDelivered<Any?>(read(root))
            let callback = delivery.callback
            let token = root.makeToken(
                paths: [parsed], observer: delivery.observer, options: delivery.options, queue: delivery.queue,
                site: delivery.site(.path),
                callback: { observer, model, delivered in
                    let new: Any?
                    if let delivered = delivered as? EndpointDelivery {
                        if case .value(let value) = delivered.endpoint { new = value } else { new = nil }
                    } else {
                        new = read(model)
                    }
                    callback(
                        observer, unsafeDowncast(model, to: Root.self),
                        PropertyChange(old: last.exchange(new), new: new))
                })
            if startsDeparted { token.subscription.scheduleLastDelivery() }
            return token
        }
    }

    /// Several properties, with which of them changed: one callback per tick, with the set of
    /// those that changed in it.
    ///
    /// ```swift
    /// let token = person.observe(.whichOf([\.firstName, \.lastName])) { person, changed in
    ///     if changed.contains(\.lastName) { print("new last name:", person.lastName) }
    /// }
    /// ```
    ///
    /// `.initial` and `fire()` deliver an empty set, leaving the tick's changes for their own
    /// delivery.
    ///
    /// - Parameter keyPaths: `@Observed` properties of the object.
    public static func whichOf(_ keyPaths: [PartialKeyPath<Root>]) -> ObservationSource<Root, ChangedProperties<Root>> {
        ObservationSource<Root, ChangedProperties<Root>> { root, delivery in
            root._observe(
                whichOf: keyPaths, observer: delivery.observer, options: delivery.options, queue: delivery.queue,
                site: delivery.site(.whichOf), callback: delivery.callback)
        }
    }

    /// Every observable property of the object (`*`): its `@Observed` properties, and its
    /// computed ones when their value changes.
    ///
    /// ```swift
    /// let token = person.observe(.all) { person in save(person) }
    /// ```
    public static var all: ObservationSource<Root, Void> {
        ObservationSource<Root, Void> { root, delivery in
            root._observe(
                ErasedSubscription(
                    root: root, observer: delivery.observer, target: .paths([ObservedPath(step: .wildcard)]),
                    options: delivery.options, queue: delivery.queue, wantsOldValue: false, site: delivery.site(.all),
                    callback: delivery.general))
        }
    }

    /// Each set of an `@Observed` property of the object, before it stores: the callback runs
    /// inside the setter, on the setting thread, with the old value still in place (KVO's
    /// `.prior`, Combine's `objectWillChange`). The queue and options do not apply: nothing
    /// waits for a tick. With `isolation: MainActor.shared`, a set on another thread schedules
    /// the callback on the main queue instead (the value is stored by then).
    ///
    /// ```swift
    /// let token = document.observe(.willChange) { document in document.snapshotForUndo() }
    /// ```
    public static var willChange: ObservationSource<Root, Void> {
        ObservationSource<Root, Void> { root, delivery in
            let callback = delivery.callback
            let observer = delivery.observer.map(WeakReference.init)
            let subscription = WillChangeSubscription(root: root, site: delivery.site(.willChange)) { model in
                let loaded = observer?.load()
                // On behalf of an observer that is gone: nothing to tell.
                if observer != nil, loaded == nil { return }
                callback(loaded, unsafeDowncast(model, to: Root.self), ())
            }
            let token = ObservationToken(subscription: subscription)
            subscription.register(on: root)
            return token
        }
    }
}
