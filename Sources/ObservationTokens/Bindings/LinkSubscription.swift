import Synchronization

/// A subscription of a binding that writes a model (see ``BindingLink``): the source the link
/// reads (or its hub), one source of a combined pipeline, the destination property the link
/// writes, or the watcher of a destination path. Ending it ends its whole ``BindingGroup``.
///
/// A source or a destination property is watched with `screensChanges`: a change asks the
/// link before it makes the subscription pending (`admitsChange`), which times the change and
/// lets a wave push the link within its drain instead (``BindingWave``).
final class LinkSubscription: Subscription, @unchecked Sendable {  // see Subscription; fields are immutable
    enum Role {
        /// Delivers the link's pushes: its one source, or the hub of several.
        case main
        /// One source of several: makes the hub (the link's main subscription) pending.
        case source(hub: WeakReference)
        /// The destination property: times its changes; never pending.
        case destination
        /// A destination path: brings the object at its end up to date when it changes.
        case refresh
    }

    let link: BindingLink?
    /// The property this subscription watches, when the link keeps its record.
    let member: BindingMember?
    let role: Role
    let group: BindingGroup?

    init(
        root: __shared ObservableModelBase, target: Target, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, group: BindingGroup?, link: BindingLink?, member: BindingMember?, role: Role
    ) {
        self.link = link
        self.member = member
        self.role = role
        self.group = group
        lastSeenSet = Atomic(member?.setOrigin.load(ordering: .relaxed) ?? 0)
        let screens: Bool
        switch role {
        case .main, .source: screens = !options.contains(.immediate)
        case .destination: screens = true
        case .refresh: screens = false
        }
        var options = options
        if case .destination = role { options = [] }
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: target,
            options: options.subtracting(.initial), queue: queue, wantsOldValue: false, site: site,
            screensChanges: screens)
    }

    override func admitsChange() -> Bool {
        switch role {
        case .main, .source: return link?.sourceWillChange(member) ?? true
        case .destination:
            member?.timeChange()
            return false
        case .refresh: return true
        }
    }

    /// A queued delivery, in a drain of `queue`.
    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        guard let link else { return }
        switch role {
        case .main:
            if link.run(.delivery, queued: true) == .gone { end() }
        case .source(let hub):
            // Internal work: the hub's push counts, this delivery doesn't.
            queue.countAdjustment.subtract(1, ordering: .relaxed)
            hub.load(as: Subscription.self)?.schedule()
        case .destination:
            queue.countAdjustment.subtract(1, ordering: .relaxed)
        case .refresh:
            if link.run(.refresh, queued: true) == .gone { end() }
        }
    }

    /// A change at a set (`.immediate`: the old value is given), or `fire()` (none is).
    override func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        if oldValue == nil || !isImmediate {
            fired()
        } else {
            changed()
        }
    }

    /// A `.endpointChanges` path source: a change at a set, or a queued delivery.
    override func invoke(observer: AnyObject?, root: ObservableModelBase, endpoint: ObservedPath.Endpoint) {
        if isImmediate {
            changed()
        } else {
            invoke(observer: observer, root: root)
        }
    }

    /// An `.immediate` source changed: push now.
    private func changed() {
        guard let link else { return }
        switch role {
        case .main, .source:
            if link.run(.change, origin: timeSet(), changed: member) == .gone { end() }
        case .destination:
            break
        case .refresh:
            if link.run(.refresh) == .gone { end() }
        }
    }

    /// `fire()`, or `now()`: push now, as a new change.
    private func fired() {
        guard let link else { return }
        switch role {
        case .main, .source:
            if link.run(.explicit) == .gone { end() }
        case .destination:
            break
        case .refresh:
            if link.run(.refresh) == .gone { end() }
        }
    }

    /// The change an `.immediate` source's set carries: the push's writing now, or else the
    /// number the first binding to hear of this set gave it (a binding that heard of it before
    /// this one changed the property's `setOrigin` since this one last looked), or else a new
    /// one. So every binding that reads the property gives one set one number.
    private func timeSet() -> UInt64 {
        let pushing = BindingWave.currentOrigin
        let origin: UInt64
        if pushing != 0 {
            origin = pushing
        } else if let member, case let last = member.setOrigin.load(ordering: .relaxed),
            last != lastSeenSet.load(ordering: .relaxed)
        {
            origin = last
        } else {
            origin = BindingClock.next()
        }
        member?.noteSet(origin)
        lastSeenSet.store(origin, ordering: .relaxed)
        return origin
    }

    /// The `setOrigin` of `member` this subscription last gave or took.
    private let lastSeenSet: Atomic<UInt64>

    /// Ends this subscription without ending its group (one pair of a group binding, cut
    /// off): `BindingGroup.endMembers(of:)` ends the link's other subscriptions with it.
    func endAlone() {
        isAlone.store(true, ordering: .releasing)
        end()
    }

    private let isAlone = Atomic<Bool>(false)

    /// For the debugging aids: the binding's token, when this is one of its parts.
    override var mainSubscription: Subscription { group?.debugMembers.main ?? self }

    /// For the debugging aids: a binding's token with other parts (a two-way binding's other
    /// side) is named by what all of them watch (`"name, text"`).
    override var writtenDescription: String? {
        let parts = deliveringParts
        guard !parts.isEmpty else { return nil }
        return DebugFormat.joined([DebugFormat.pathNames(of: self)] + parts.map(DebugFormat.watched))
    }

    override var hasDebugParts: Bool { !deliveringParts.isEmpty }

    /// The other subscriptions of this token that deliver it or its other side (not the ones
    /// that only watch a destination), when this is the token's own subscription.
    private var deliveringParts: [Subscription] {
        guard let group else { return [] }
        let (main, parts) = group.debugMembers
        guard main === self else { return [] }
        return parts.filter { part in
            guard let link = part as? LinkSubscription else { return true }
            switch link.role {
            case .destination, .refresh: return false
            case .main, .source: return true
            }
        }
    }

    override func releaseCallback() {
        if isAlone.load(ordering: .acquiring) {
            link?.end()
            return
        }
        link?.end()
        group?.endAll()
    }
}
