// Ending bindings and postings by what they connect, without their tokens. See docs/Bindings.md.

extension ModelObserving where Self: ObservableModelBase {
    /// Cuts off the bindings from a property of the receiver to a property of `destination`,
    /// as if their tokens had been invalidated.
    ///
    /// ```swift
    /// user.bind(\.name, to: label, \.text).store(in: &tokens)
    /// // later, without the token:
    /// user.cutOffBinding(\.name, to: label, \.text)   // 1: label.text no longer follows user.name
    /// ```
    ///
    /// Every binding that reads `keyPath` and writes `destinationKeyPath` of `destination` is
    /// cut: one-way bindings and pipelines (whatever their operators), two-way bindings between
    /// the two properties (made by either side: the whole binding ends), and pairs of group
    /// bindings (only that pair stops; the group's other pairs and its token go on). Bindings
    /// that read the property through a path, and bindings to a destination path or to a
    /// property named by a string, are not cut: end them with their tokens. A cut binding's token reports `isValid == false`
    /// (except a group's, which stays valid for its other pairs).
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - destination: The object the bindings write.
    ///   - destinationKeyPath: The property of `destination` they write (compared with `==`).
    /// - Returns: How many bindings were cut.
    /// - Complexity: O(*t*) in the tokens on the property.
    ///
    /// > Note: Safe from any thread, like `invalidate()`: a push already under way on another
    /// > thread may still finish.
    @discardableResult
    public func cutOffBinding<Value, Destination: AnyObject, DestinationValue>(
        _ keyPath: KeyPath<Self, Value>,
        to destination: Destination,
        _ destinationKeyPath: KeyPath<Destination, DestinationValue>
    ) -> Int {
        guard let serial = TypedKey(keyPath).resolveSerial(on: self) else { return 0 }
        let destinationID = ObjectIdentifier(destination)
        let written = destinationKeyPath as AnyKeyPath
        var cut: [ObjectIdentifier] = []
        for subscription in bindingSubscriptions(onSerial: serial) where subscription.isActive {
            if let subscription = subscription as? LinkSubscription {
                guard subscription.member?.serial == serial, let link = subscription.link,
                    link.destinationID == destinationID, link.writtenKeyPath == written,
                    !cut.contains(ObjectIdentifier(link))
                else { continue }
                switch subscription.role {
                case .main, .source:
                    cut.append(ObjectIdentifier(link))
                    link.cutOff()
                case .destination, .refresh:
                    continue
                }
            } else if let subscription = subscription as? BindingSubscription,
                case .binding(let id, _, let alone) = subscription.purpose, id == destinationID,
                subscription.readsOnly(serial), subscription.writtenKeyPath == written
            {
                let token =
                    alone
                    ? ObjectIdentifier(subscription)
                    : subscription.group.map(ObjectIdentifier.init) ?? ObjectIdentifier(subscription)
                guard !cut.contains(token) else { continue }
                cut.append(token)
                if alone { subscription.endAlone() } else { subscription.end() }
            }
        }
        return cut.count
    }

    /// Stops every posting of a property of the receiver, as if their tokens had been
    /// invalidated.
    ///
    /// ```swift
    /// account.pipeline(of: \.balance).post { print($0) }.store(in: &tokens)
    /// account.stopPosting(\.balance)   // 1
    /// ```
    ///
    /// Stops the tokens made by `pipeline(of: keyPath)…post`, whatever their operators, and
    /// `combineLatest` postings that have the property among their inputs. Bindings are left
    /// alone (see ``cutOffBinding(_:to:_:)``).
    ///
    /// - Parameter keyPath: An `@Observed` property of the receiver.
    /// - Returns: How many postings were stopped.
    /// - Complexity: O(*t*) in the tokens on the property.
    @discardableResult
    public func stopPosting<Value>(_ keyPath: KeyPath<Self, Value>) -> Int {
        guard let serial = TypedKey(keyPath).resolveSerial(on: self) else { return 0 }
        return stopPostings(
            bindingSubscriptions(onSerial: serial).filter { $0.rootRegistry === registry && $0.readsOnly(serial) })
    }

    /// Stops every posting of a dotted string path of the receiver, as if their tokens had been
    /// invalidated.
    ///
    /// ```swift
    /// try cache.pipeline(path: "currentUser.name").post { print($0 ?? "none") }.store(in: &tokens)
    /// try cache.stopPosting(path: "currentUser.name")   // 1
    /// ```
    ///
    /// Stops the postings of `pipeline(path: path)` and of a `KeyPathChain` pipeline that names
    /// the same properties, rooted at the receiver.
    ///
    /// - Parameter path: The dotted path, as given to `pipeline(path:)`.
    /// - Returns: How many postings were stopped.
    /// - Throws: ``KeyPathError`` for a path that does not parse, as `pipeline(path:)` would.
    /// - Complexity: O(*t*) in the tokens rooted at the receiver.
    @discardableResult
    public func stopPosting(path: String) throws(KeyPathError) -> Int {
        let described = try StringKeyPath.parse(path, root: self).describe(from: self)
        return stopPostings(
            bindingSubscriptions().filter { subscription in
                subscription.rootRegistry === registry && !subscription.isProperty
                    && subscription.paths.count == 1 && subscription.pathDescription == described
            })
    }

    private func stopPostings(_ subscriptions: [Subscription]) -> Int {
        var stopped: [ObjectIdentifier] = []
        for subscription in subscriptions where subscription.isActive {
            guard let subscription = subscription as? BindingSubscription, case .posting = subscription.purpose else {
                continue
            }
            let token = subscription.group.map(ObjectIdentifier.init) ?? ObjectIdentifier(subscription)
            guard !stopped.contains(token) else { continue }
            stopped.append(token)
            subscription.end()
        }
        return stopped.count
    }
}

extension ObservableModelBase {
    /// The subscriptions attached to the property with storage `serial` (or, with nil, to any
    /// property) of this object, retained: for finding bindings by what they connect.
    func bindingSubscriptions(onSerial serial: UInt64? = nil) -> [Subscription] {
        guard let registry = existingRegistry else { return [] }
        var found: [Subscription] = []
        for property in registry.debugSnapshot().properties where serial == nil || property.serial == serial {
            for member in property.members where !found.contains(where: { $0 === member.subscription }) {
                found.append(member.subscription)
            }
        }
        return found
    }
}

extension Subscription {
    /// Whether this subscription reads the property with storage `serial` of its root and
    /// nothing else: a single-property token, or a path of that one property.
    func readsOnly(_ serial: UInt64) -> Bool {
        if isProperty { return attachedPropertySerial == serial }
        guard paths.count == 1, paths[0].steps.count == 1, let root else { return false }
        // Read as a walk reads (the root's lock and store bit): other threads may be setting it.
        return paths[0].steps[0].readForWalk(on: root)?.serial == serial
    }
}
