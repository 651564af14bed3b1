import Synchronization

/// The subscriptions that make up one binding or pipeline token, ended together.
///
/// A binding may need several subscriptions: one per source property, a hub that coalesces
/// them, one on each side of a two-way binding, one on the destination property of a binding to
/// a model (which hears the destination deinitialize), a destination path's watcher, and — for a
/// model destination whose property is not `@Observed` — a sentinel in the destination's
/// registry. The token holds one of them (its *main*
/// subscription); the group holds the rest. Whichever of them ends first — the token dropped
/// or invalidated, a root deinitialized, the destination gone at delivery — ends the group,
/// which ends every member.
///
/// Every member calls ``endAll()`` from `releaseCallback()`, which the core calls once per
/// subscription, with no lock held, when it has ended and no delivery of it is running.
/// Members and the group reference each other; `endAll()` empties the group, which breaks
/// every cycle.
final class BindingGroup: Locked<BindingGroup.State>, @unchecked Sendable {  // state is guarded by Locked
    struct State {
        /// The first member, kept out of the array: most groups have one.
        var first: Subscription?
        var members: [Subscription] = []
        /// Sentinels retained by another object's registry, with that registry.
        var sentinels: [(sentinel: Subscription, registry: Registry)] = []
        var hasEnded = false
    }

    init() {
        super.init(state: State())
    }

    /// Adds a member; ends it at once if the group has ended already.
    func add(_ member: Subscription) {
        let accepted = withLock { state -> Bool in
            guard !state.hasEnded else { return false }
            if state.first == nil {
                state.first = member
            } else {
                state.members.append(member)
            }
            return true
        }
        if !accepted { member.end() }
    }

    /// Puts a sentinel in `object`'s registry: when `object` deinitializes, the group ends. For
    /// a model destination whose property is not `@Observed` (the others are watched).
    func addSentinel(on object: ObservableModelBase, site: CreationSite) {
        let sentinel = BindingSentinel(root: object, group: self, site: site)
        let registry = object.registry
        let accepted = withLock { state -> Bool in
            guard !state.hasEnded else { return false }
            state.sentinels.append((sentinel, registry))
            return true
        }
        guard accepted else { return }
        registry.retain(sentinel)
    }

    /// Whether the group has ended.
    var hasEnded: Bool { withLock { $0.hasEnded } }

    /// For the debugging aids: the token's own subscription (every binding adds it first) and
    /// the other members (sentinels excluded); nothing once the group has ended.
    var debugMembers: (main: Subscription?, parts: [Subscription]) {
        withLock { ($0.first, $0.members) }
    }

    /// Takes the members that belong to `link` out of the group and ends them, leaving the
    /// others (one pair of a group binding, cut off).
    func endMembers(of link: BindingLink) {
        let taken = withLock { state -> [LinkSubscription] in
            guard !state.hasEnded else { return [] }
            var all = state.members
            if let first = state.first { all.insert(first, at: 0) }
            let taken = all.compactMap { $0 as? LinkSubscription }.filter { $0.link === link }
            let kept = all.filter { member in !taken.contains { $0 === member } }
            state.first = kept.first
            state.members = Array(kept.dropFirst())
            return taken
        }
        for member in taken { member.endAlone() }
    }

    /// Ends every member and takes every sentinel out of its registry. Idempotent.
    func endAll() {
        let taken = withLock { state -> State? in
            guard !state.hasEnded else { return nil }
            defer { state = State(hasEnded: true) }
            return state
        }
        guard let taken else { return }
        taken.first?.end()
        for member in taken.members { member.end() }
        for (sentinel, registry) in taken.sentinels {
            registry.endRetained { $0 === sentinel }
        }
        // `taken` is released here, outside every lock.
    }
}

/// A subscription of a binding: watches a source (or nothing, for a hub) and runs its push at
/// each delivery; ending it ends its whole ``BindingGroup``, if it has one.
///
/// A binding made of this one subscription (one source, a destination that is not a model, no
/// destination path) has no group: its push reports a destination found gone by returning
/// false, which ends the subscription.
///
/// Not generic: the action ignores the root or reaches it through its registry, and a generic
/// class would cost a metadata lookup at each creation.
final class BindingSubscription: Subscription, @unchecked Sendable {  // see Subscription
    /// What `cutOffBinding` and `stopPosting` look for.
    enum Purpose {
        /// A hub, or a source of several.
        case part
        /// The subscription of a posting.
        case posting
        /// A subscription of a binding to a property of an object that is not a model: the
        /// object, the write (which hands back the key path it writes when given no value, see
        /// `BindingWrite`), and whether cutting it off ends only this subscription (a pair of a
        /// group), not the token.
        case binding(ObjectIdentifier, BindingWrite, alone: Bool)
    }

    @exclusivity(unchecked) private var push: (@Sendable () -> Bool)?
    let group: BindingGroup?
    let purpose: Purpose

    /// A member of `group` that runs `action` at each delivery.
    ///
    /// - Parameter target: `.property` without `start`, for a hub that has no edge of its own.
    convenience init(
        root: __shared ObservableModelBase, target: Target, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, group: BindingGroup, action: @escaping @Sendable () -> Void
    ) {
        self.init(
            root: root, target: target, options: options, queue: queue, site: site, group: group, purpose: .part,
            push: {
                action()
                return true
            })
    }

    /// - Parameter push: Runs at each delivery; false (the destination is gone) ends the
    ///   subscription, and its group.
    init(
        root: __shared ObservableModelBase, target: Target, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, group: BindingGroup?, purpose: Purpose, push: @escaping @Sendable () -> Bool
    ) {
        self.push = push
        self.group = group
        self.purpose = purpose
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: target,
            options: options.subtracting(.initial), queue: queue, wantsOldValue: false, site: site)
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        if let push, !push() { end() }
    }

    /// The key path this binding writes, for `cutOffBinding`.
    var writtenKeyPath: AnyKeyPath? {
        guard case .binding(_, let write, _) = purpose else { return nil }
        var keyPath: AnyKeyPath?
        _ = write(nil, &keyPath)
        return keyPath
    }

    /// Ends this subscription without ending its group: one pair of a group binding, cut off.
    func endAlone() {
        isAlone.store(true, ordering: .releasing)
        end()
    }

    private let isAlone = Atomic<Bool>(false)

    override var mainSubscription: Subscription { group?.debugMembers.main ?? self }

    /// A hub (a binding's own subscription, with no edge) is named by what its parts watch.
    override var writtenDescription: String? {
        guard isProperty, attachedPropertySerial == nil, let group else { return nil }
        let (main, parts) = group.debugMembers
        guard main === self else { return nil }
        return DebugFormat.joined(parts.map(DebugFormat.watched))
    }

    override func releaseCallback() {
        push = nil
        if !isAlone.load(ordering: .acquiring) { group?.endAll() }
    }
}

/// Kept in another object's registry (like an observer-lifetime subscription) without any
/// edge: that object's deinit ends it, and ending it ends the group.
final class BindingSentinel: Subscription, @unchecked Sendable {  // see Subscription
    private weak var group: BindingGroup?

    init(root: __shared ObservableModelBase, group: BindingGroup, site: CreationSite) {
        self.group = group
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: .property, options: [],
            queue: CoalescingQueue.main, wantsOldValue: false, site: site)
    }

    override func releaseCallback() {
        group?.endAll()
    }

    override var mainSubscription: Subscription { group?.debugMembers.main ?? self }
}

/// A value that a `Sendable` closure may capture although its type is not `Sendable`.
///
/// Used for closures built by the inlinable entry points (specialized in the caller's module)
/// that apply a key path, which is immutable: `@unchecked Sendable` is sound for them.
@usableFromInline
struct _UncheckedSendable<Value>: @unchecked Sendable {
    @usableFromInline
    let value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}
