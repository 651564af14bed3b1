// Entry points of bindings and pipelines. See docs/Bindings.md.

extension ModelObserving where Self: ObservableModelBase {
    // MARK: Pipelines

    /// The values of one property, as a pipeline to add operators to and bind or post.
    ///
    /// ```swift
    /// let token = cart.pipeline(of: \.count).map { "\($0) items" }.bind(to: badge, \.text)
    /// ```
    ///
    /// - Parameter keyPath: An `@Observed` property of the receiver. Any other key path makes
    ///   the finished token end at once (`isValid == false`).
    /// - Returns: A pipeline that reads the property at each push.
    @inlinable @inline(__always)
    public func pipeline<Value>(of keyPath: consuming KeyPath<Self, Value>) -> ValuePipeline<Value> {
        // Built here, in the caller's module, where it is specialized. The segment is the key
        // path's only user, so the optimizer moves a literal into it and reading the property is
        // a direct access instead of a trip through the key path runtime (see
        // `KeyPathChain.Segment`); the key path object is asked of it in `_values`.
        let segment = KeyPathChain<Self, Value>.segment(consume keyPath)
        let read: (Self) -> Value = { KeyPathChain<Self, Value>.read(segment, on: $0) }
        return _values(
            keyPath: { KeyPathChain<Self, Value>.keyPath(of: segment) },
            reader: KeyPathChain<Self, Value>.reader(segment),
            read: _UncheckedSendable(read))
    }

    /// The non-inlinable half of `pipeline(of:)`; never inlined, so that the segment stays the
    /// key path's only user where it is built.
    @usableFromInline @inline(never)
    func _values<Value>(
        keyPath: () -> AnyKeyPath, reader: @escaping (ObservableModelBase, AnyKeyPath) -> Any?,
        read: _UncheckedSendable<(Self) -> Value>
    ) -> ValuePipeline<Value> {
        // The source is reached through its registry, not a weak reference: the first weak
        // reference to an object makes every later retain and release of it slower.
        let registry = registry
        return ValuePipeline(
            sources: PipelineSources(
                PipelineSource(root: self, watched: .key(TypedKey(keyPath: keyPath(), reader: reader)))),
            shared: { context, next in
                guard let model = registry.weakOwner else { return }
                next(&context, read.value(unsafeDowncast(model, to: Self.self)))
            })
    }

    /// The values at the end of a key path chain, as a pipeline; pushes when anything along the
    /// path changes (only when the endpoint changes, with `.endpointChanges`).
    ///
    /// ```swift
    /// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
    /// let token = cache.pipeline(of: zipCode).map { $0 ?? "–" }.bind(to: label, \.text)
    /// ```
    ///
    /// - Parameter chain: The path, rooted at the receiver.
    /// - Returns: A pipeline that reads the endpoint at each push (nil while unreachable, for
    ///   optional chains).
    public func pipeline<Value>(of chain: KeyPathChain<Self, Value>) -> ValuePipeline<Value> {
        let registry = registry  // see `_values`
        return ValuePipeline(
            sources: PipelineSources(PipelineSource(root: self, watched: .path(chain.path))),
            shared: { context, next in
                guard let model = registry.weakOwner else { return }
                next(&context, chain.evaluate(unsafeDowncast(model, to: Self.self)))
            })
    }

    /// The values at the end of a dotted string path, as a pipeline of `Any?` (nil while the
    /// path leads nowhere).
    ///
    /// ```swift
    /// let token = try cache.pipeline(path: "currentUser.address.zipCode")
    ///     .compactMap { $0 as? String }
    ///     .bind(to: label, \.text)
    /// ```
    ///
    /// - Parameter path: The dotted path, rooted at the receiver; see
    ///   ``ObservationSource/path(_:)``.
    /// - Returns: A pipeline that reads the endpoint at each push.
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    public func pipeline(path: String) throws(KeyPathError) -> ValuePipeline<Any?> {
        let parsed = try StringKeyPath.parse(path, root: self)
        let registry = registry  // see `_values`
        return ValuePipeline(
            sources: PipelineSources(PipelineSource(root: self, watched: .path(parsed))),
            shared: { context, next in
                guard let root = registry.weakOwner else { return }
                switch parsed.endpoint(from: root) {
                case .unreachable: next(&context, nil)
                case .value(let value): next(&context, value)
                }
            })
    }

    // MARK: One-way bindings

    /// Binds a property of the receiver to a property of `destination`: one line, one token.
    ///
    /// ```swift
    /// let token = user.bind(\.name, to: label, \.text)
    /// ```
    ///
    /// `destination` takes the current value at once (unless `options` leaves out `.initial`),
    /// then each change, once per tick. Same as `pipeline(of: keyPath).bind(to:_:)`; use that
    /// form to add operators.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - destination: Held weakly; its deinit (if it is a model) or absence at the next push
    ///     ends the token.
    ///   - destinationKeyPath: The property to write.
    ///   - options: `.initial` (the default), `.immediate`.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Value, Destination: AnyObject>(
        _ keyPath: KeyPath<Self, Value>,
        to destination: Destination,
        _ destinationKeyPath: ReferenceWritableKeyPath<Destination, Value>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        pipeline(of: keyPath).bind(
            to: destination, destinationKeyPath, options: options, queue: queue, fileID: fileID, line: line)
    }

    /// Binds a property of the receiver to an optional property of `destination`: the value is
    /// written wrapped (a `String` property to a `String?` one).
    ///
    /// ```swift
    /// let token = user.bind(\.name, to: label, \.subtitle)   // subtitle: String?
    /// ```
    ///
    /// The same as the form with a non-optional destination property in every other way.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - destination: Held weakly; its deinit (if it is a model) or absence at the next push
    ///     ends the token.
    ///   - destinationKeyPath: The optional property to write.
    ///   - options: `.initial` (the default), `.immediate`.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Value, Destination: AnyObject>(
        _ keyPath: KeyPath<Self, Value>,
        to destination: Destination,
        _ destinationKeyPath: ReferenceWritableKeyPath<Destination, Value?>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        pipeline(of: keyPath).bind(
            to: destination, destinationKeyPath, options: options, queue: queue, fileID: fileID, line: line)
    }

    /// Binds the endpoint of a key path chain of the receiver to a property of `destination`.
    ///
    /// ```swift
    /// let token = cache.bind(KeyPathChain(\.currentUser).then(\.name), to: label, \.title)
    /// ```
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver; followed when an object on it is replaced.
    ///   - destination: Held weakly.
    ///   - destinationKeyPath: The property to write.
    ///   - options: `.initial` (the default), `.immediate`, `.endpointChanges`.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Value, Destination: AnyObject>(
        _ chain: KeyPathChain<Self, Value>,
        to destination: Destination,
        _ destinationKeyPath: ReferenceWritableKeyPath<Destination, Value>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        pipeline(of: chain).bind(
            to: destination, destinationKeyPath, options: options, queue: queue, fileID: fileID, line: line)
    }

    // MARK: Group bindings

    /// Binds several properties of the receiver to properties of `destination` with one token.
    ///
    /// ```swift
    /// let token = profile.bind(
    ///     [BindingPair(\.name, \.title), BindingPair(\.email, \.subtitle)],
    ///     to: card)
    /// ```
    ///
    /// Each pair is a one-way binding of its own: `destination` takes every listed value at
    /// creation (unless `options` leaves out `.initial`), then a pair is copied only when its
    /// source property changes. Properties not listed are never touched, and a change made to
    /// the destination directly stays until that pair's source property changes again.
    /// ``ObservationToken/now()`` copies every pair.
    ///
    /// - Parameters:
    ///   - pairs: Typed key path pairs, source first.
    ///   - destination: Held weakly; its deinit (if it is a model) or absence at the next push
    ///     ends the token.
    ///   - options: `.initial` (the default), `.immediate`.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps every pair bound.
    /// - Complexity: O(*n*) in the number of pairs to create; a change copies one pair.
    public func bind<Destination: AnyObject>(
        _ pairs: [BindingPair<Self, Destination>],
        to destination: Destination,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        let site = CreationSite(fileID: fileID, line: line, kind: .binding, options: options)
        if let model = destination as? ObservableModelBase {
            return bindPairs(pairs, to: destination, model: model, options: options, queue: queue, site: site)
        }
        let group = BindingGroup()
        let source = WeakReference(self)
        let target = WeakReference(destination)
        let copyAll: @Sendable () -> Void = {
            guard let model = source.load(as: Self.self) else { return }
            guard let destination = target.load(as: Destination.self) else { return group.endAll() }
            for pair in pairs { pair.copy(model, destination) }
        }
        // The hub has no edge: it runs `now()` and stands for the group, so it takes no options.
        let hub = BindingSubscription(
            root: self, target: .property, options: [], queue: queue, site: site, group: group, action: copyAll)
        group.add(hub)
        let destinationID = ObjectIdentifier(destination)
        for pair in pairs where !group.hasEnded {
            let key = pair.key
            let destinationKeyPath = pair.destinationKeyPath
            let subscription = BindingSubscription(
                root: self, target: .property, options: options.intersection(.immediate), queue: queue, site: site,
                group: group,
                purpose: .binding(
                    destinationID,
                    { _, keyPath in
                        keyPath = destinationKeyPath.value
                        return true
                    }, alone: true)
            ) {
                guard let model = source.load(as: Self.self) else { return true }
                guard let destination = target.load(as: Destination.self) else {
                    group.endAll()
                    return true
                }
                pair.copy(model, destination)
                return true
            }
            group.add(subscription)
            _ = subscription.start(root: self, key: key)
        }
        if options.contains(.initial), !group.hasEnded { copyAll() }
        return ObservationToken(subscription: hub)
    }

    /// `bind(_:to:)` to a model: each pair is a binding that takes part in cycles (see
    /// ``BindingLink``), and the destination properties are watched, so the destination's
    /// deinit ends the token.
    private func bindPairs<Destination: AnyObject>(
        _ pairs: [BindingPair<Self, Destination>], to destination: Destination, model: ObservableModelBase,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite
    ) -> ObservationToken {
        let group = BindingGroup()
        let source = WeakReference(self)
        let target = WeakReference(destination)
        var links: [BindingLink] = []
        let list = BindingLinkList()
        // The hub has no edge: it runs `now()` and stands for the group, so it takes no options.
        let hub = BindingSubscription(
            root: self, target: .property, options: [], queue: queue, site: site, group: group, purpose: .part
        ) {
            for link in list.links where link.run(.explicit) == .gone { return false }
            return true
        }
        group.add(hub)
        var needsSentinel = false
        for pair in pairs where !group.hasEnded {
            guard let serial = pair.key.resolveSerial(on: self) else {
                group.endAll()
                break
            }
            let written = pair.destinationKey.resolveSerial(on: model).map {
                BindingMember.acquire(serial: $0, on: model)
            }
            let destinationKeyPath = pair.destinationKeyPath
            let link = BindingLink(
                site: site, queue: queue, sources: [BindingMember.acquire(serial: serial, on: self)],
                destination: written, destinationID: ObjectIdentifier(destination), cutsAlone: true,
                destinationKeyPath: { destinationKeyPath.value }
            ) { _, gate, _ in
                guard let model = source.load(as: Self.self), let destination = target.load(as: Destination.self) else {
                    return .gone
                }
                guard gate({ pair.compare(model, destination) }) else { return .held }
                pair.copy(model, destination)
                return .applied
            }
            let subscription = LinkSubscription(
                root: self, target: .property, options: options.subtracting(.endpointChanges), queue: queue, site: site,
                group: group, link: link, member: link.sources.first, role: .main)
            link.start(main: subscription)
            group.add(subscription)
            _ = subscription.start(root: self, key: pair.key)
            if let written {
                let watcher = LinkSubscription(
                    root: model, target: .property, options: [], queue: queue, site: site, group: group, link: link,
                    member: written, role: .destination)
                group.add(watcher)
                if !group.hasEnded { _ = watcher.start(root: model, key: pair.destinationKey) }
            } else {
                needsSentinel = true
            }
            links.append(link)
        }
        if needsSentinel, !group.hasEnded { group.addSentinel(on: model, site: site) }
        list.links = links
        if options.contains(.initial), !group.hasEnded {
            for link in links where link.run(.explicit) == .gone {
                group.endAll()
                break
            }
        }
        return ObservationToken(subscription: hub)
    }

    // MARK: Two-way bindings

    /// Keeps a property of the receiver and a property of `other` equal, whichever side changes.
    ///
    /// ```swift
    /// let token = settings.bindTwoWay(\.volume, with: slider, \.value)
    /// ```
    ///
    /// At creation `other` takes the receiver's value (unless `options` leaves out `.initial`).
    /// Then a change on either side is copied to the other once per tick (at once with
    /// `.immediate`). The binding's own writes are not echoed back, so nothing loops, for any
    /// value type.
    ///
    /// **The later change wins.** If both sides changed since the last copy, each side ends
    /// with the value of the change made later (as with `.immediate`, where each change is
    /// copied as it is made). A two-way binding is two bindings, one each way, and follows the
    /// rules for bindings that meet or form cycles (docs/Bindings.md, "Cycles").
    ///
    /// **Two queues.** Pass `otherQueue` when `other` is confined to another queue than the
    /// receiver (a model of a background service and one of the UI): each side is then read,
    /// written and delivered on its own queue only. A change of the receiver is read on
    /// `queue`, handed over, and written to `other` in `otherQueue`'s next drain; the other way
    /// round likewise. With `.immediate`, a change is read in its setter and handed over at
    /// once; the write still waits for the other queue's drain. `.initial` and
    /// ``ObservationToken/now()`` read the receiver on the calling thread, so call them on the
    /// receiver's queue.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - other: The other model; held weakly. Either object's deinit ends the token.
    ///   - otherKeyPath: An `@Observed` property of `other`, of the same type. Binding a
    ///     property to itself (same object, same key path) is a programming error: a debug
    ///     build stops with a message; a release build returns a token that has already ended.
    ///   - options: `.initial` (the default), `.immediate`.
    ///   - queue: Where changes are delivered (the receiver's queue); the main queue by default.
    ///   - otherQueue: `other`'s queue, when it is not `queue`: changes of `other` are delivered
    ///     there, and the receiver's changes are written to `other` there.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive; ``ObservationToken/now()`` copies the
    ///   receiver's value to `other`.
    public func bindTwoWay<Value, Other: ObservableModelBase>(
        _ keyPath: ReferenceWritableKeyPath<Self, Value>,
        with other: Other,
        _ otherKeyPath: ReferenceWritableKeyPath<Other, Value>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        otherQueue: CoalescingQueue? = nil,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        TwoWayBinding.start(
            self, keyPath, other, otherKeyPath, options: options, queue: queue, otherQueue: otherQueue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options))
    }
}
