/// Two-way bindings between `a.x` and `b.y`: two bindings, `a.x → b.y` and `b.y → a.x`, each
/// a ``BindingLink`` whose subscription watches its source, in one group and one token.
///
/// The links' rules do what the binding promises: the binding's own write of one side is a
/// push of the change the other side holds, so the link back finds that change there already
/// and writes nothing (no echo, for any value type); when both sides changed since the last
/// push, the later change wins.
///
/// On two queues (`otherQueue`), each link reads its source on its source's queue and hands
/// the value to the other queue, which writes it in its next drain (`BindingLink.land`).
enum TwoWayBinding {
    static func start<A: ObservableModelBase, B: ObservableModelBase, Value>(
        _ a: A, _ keyPathA: ReferenceWritableKeyPath<A, Value>,
        _ b: B, _ keyPathB: ReferenceWritableKeyPath<B, Value>,
        options: ObservationOptions, queue: CoalescingQueue, otherQueue: CoalescingQueue?, site: CreationSite
    ) -> ObservationToken {
        let group = BindingGroup()
        let keyA = TypedKey(keyPathA as KeyPath<A, Value>)
        let keyB = TypedKey(keyPathB as KeyPath<B, Value>)
        if a === b, keyPathA as AnyKeyPath == keyPathB as AnyKeyPath {
            // A property bound to itself: its own writes would be changes of the other side.
            #if DEBUG
                assertionFailure(
                    "bindTwoWay(_:with:_:) was asked to bind a property to itself; bind two different properties or objects"
                )
            #endif
            return endedToken(a, queue: queue, site: site, group: group)
        }
        guard let serialA = keyA.resolveSerial(on: a), let serialB = keyB.resolveSerial(on: b) else {
            // Not `@Observed`: like any token on such a key path, it has ended.
            return endedToken(a, queue: queue, site: site, group: group)
        }
        let memberA = BindingMember.acquire(serial: serialA, on: a)
        let memberB = BindingMember.acquire(serial: serialB, on: b)
        let queueB = otherQueue ?? queue
        let linkAB = link(
            from: a, keyPathA, memberA, queue: queue, to: b, keyPathB, memberB, queue: queueB, site: site)
        let linkBA = link(
            from: b, keyPathB, memberB, queue: queueB, to: a, keyPathA, memberA, queue: queue, site: site)
        let subscriptionAB = LinkSubscription(
            root: a, target: .property, options: options.subtracting(.endpointChanges), queue: queue, site: site,
            group: group, link: linkAB, member: memberA, role: .main)
        let subscriptionBA = LinkSubscription(
            root: b, target: .property, options: options.subtracting(.endpointChanges), queue: queueB, site: site,
            group: group, link: linkBA, member: memberB, role: .main)
        linkAB.start(main: subscriptionAB)
        linkBA.start(main: subscriptionBA)
        group.add(subscriptionAB)
        group.add(subscriptionBA)
        _ = subscriptionAB.start(root: a, key: keyA)
        // `b` takes `a`'s value before `b` is watched, so the binding doesn't hear its own write.
        if options.contains(.initial), !group.hasEnded, linkAB.run(.explicit) == .gone { group.endAll() }
        if !group.hasEnded { _ = subscriptionBA.start(root: b, key: keyB) }
        return ObservationToken(subscription: subscriptionAB)
    }

    /// The token of a binding that could not start.
    private static func endedToken(
        _ a: ObservableModelBase, queue: CoalescingQueue, site: CreationSite, group: BindingGroup
    ) -> ObservationToken {
        let ended = BindingSubscription(
            root: a, target: .property, options: [], queue: queue, site: site, group: group, action: {})
        ended.end()
        return ObservationToken(subscription: ended)
    }

    /// The link that copies `source.sourceKeyPath` to `destination.destinationKeyPath`, read on
    /// `sourceQueue` and written on `destinationQueue`.
    private static func link<S: ObservableModelBase, D: ObservableModelBase, Value>(
        from source: S, _ sourceKeyPath: ReferenceWritableKeyPath<S, Value>, _ sourceMember: BindingMember,
        queue sourceQueue: CoalescingQueue,
        to destination: D, _ destinationKeyPath: ReferenceWritableKeyPath<D, Value>,
        _ destinationMember: BindingMember, queue destinationQueue: CoalescingQueue, site: CreationSite
    ) -> BindingLink {
        let sourceBox = WeakReference(source)
        let destinationBox = WeakReference(destination)
        nonisolated(unsafe) let sourcePath = sourceKeyPath  // key paths are immutable
        nonisolated(unsafe) let destinationPath = destinationKeyPath
        let isAcross = sourceQueue !== destinationQueue
        return BindingLink(
            site: site, queue: sourceQueue, landingQueue: isAcross ? destinationQueue : nil,
            sources: [sourceMember], destination: destinationMember, destinationID: ObjectIdentifier(destination),
            destinationKeyPath: { destinationPath }
        ) { link, gate, _ in
            guard let source = sourceBox.load(as: S.self) else { return .gone }
            let value = source[keyPath: sourcePath]
            guard isAcross else {
                guard let destination = destinationBox.load(as: D.self) else { return .gone }
                guard gate({ BindingComparison(_bindingCompare(destination[keyPath: destinationPath], value)) }) else {
                    return .held
                }
                destination[keyPath: destinationPath] = value
                return .applied
            }
            // The destination is read and written on its own queue only.
            guard gate({ .unknown }) else { return .held }
            let origin = BindingWave.currentOrigin
            let carried = _UncheckedSendable(value)  // handed from one queue to the other, like any value
            destinationQueue.enqueueNotice {
                link.land(origin: origin) { gate in
                    guard let destination = destinationBox.load(as: D.self) else { return .gone }
                    let value = carried.value
                    let comparison = {
                        BindingComparison(_bindingCompare(destination[keyPath: destinationPath], value))
                    }
                    guard gate(comparison) else { return .held }
                    destination[keyPath: destinationPath] = value
                    return .applied
                }
            }
            return .handedOver
        }
    }
}
