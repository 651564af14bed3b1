extension ModelObserving where Self: ObservableModelBase {

    /// `observe(.whichOf(…))` with or without an observer (held weakly: once it is gone, the token
    /// ends at its next delivery).
    func _observe(
        whichOf keyPaths: [PartialKeyPath<Self>], observer: AnyObject?, options: ObservationOptions,
        queue: CoalescingQueue, site: CreationSite,
        callback: @escaping @Sendable (AnyObject?, Self, ChangedProperties<Self>) -> Void
    ) -> ObservationToken {
        let group = BindingGroup()
        let hub = WhichOfSubscription(
            root: self, observer: observer, keyPaths: keyPaths, options: options, queue: queue, site: site,
            group: group, callback: callback)
        // The hub is the token's subscription: the group's first member.
        group.add(hub)
        let token = ObservationToken(subscription: hub)
        guard !keyPaths.isEmpty else {
            group.endAll()
            _reportMisuse(
                "observe(.whichOf([])) at \(site) was given an empty list, so the token would observe nothing. Pass at least one key path."
            )
            return token
        }
        let weakHub = WeakReference(hub)
        let immediate = options.contains(.immediate)
        let partSite = site.with(kind: .part)
        for (index, keyPath) in keyPaths.enumerated() {
            let key = TypedKey(partial: keyPath)
            let member = BindingSubscription(
                root: self, target: .property,
                // Immediate either way: without `.immediate` it only records the change and
                // schedules the hub (bookkeeping, no user code), so a tick's drain delivers, and
                // counts, the hub alone. With it, the hub delivers now, with this property.
                options: .immediate, queue: queue, site: partSite, group: group
            ) {
                guard let hub = weakHub.load(as: WhichOfSubscription<Self>.self) else { return }
                if immediate {
                    hub.deliverNow(oldValue: index, isChange: true)
                } else {
                    hub.changed.insert(index)
                    hub.schedule()
                }
            }
            group.add(member)
            guard member.start(root: self, key: key) else {
                // Not an @Observed property: as loud as observe(_:) with one.
                group.endAll()
                _reportMisuse("observe(.whichOf(…)) at \(site): \(listMisfit(key))")
                return token
            }
        }
        if options.contains(.initial) { hub.deliverNow(oldValue: nil, isChange: false) }
        return token
    }

}

/// Which of the properties an `observe(.whichOf([…]))` token watches changed since its last call.
///
/// ```swift
/// if changed.contains(\.lastName) { sortContacts() }
/// ```
///
/// `@unchecked Sendable`: it holds key path objects, which are immutable, and a set of indexes.
public struct ChangedProperties<Model: AnyObject>: @unchecked Sendable {
    private let watched: [PartialKeyPath<Model>]
    private let changed: Set<Int>

    init(keyPaths: [PartialKeyPath<Model>], changed: Set<Int>) {
        watched = keyPaths
        self.changed = changed
    }

    /// Whether `keyPath` (one of the token's) changed.
    ///
    /// - Complexity: O(*k*) in the token's key paths.
    public func contains(_ keyPath: PartialKeyPath<Model>) -> Bool {
        changed.contains { watched[$0] == keyPath }
    }

    /// The key paths that changed, in the order the token lists them.
    public var keyPaths: [PartialKeyPath<Model>] {
        watched.indices.filter(changed.contains).map { watched[$0] }
    }

    /// How many of the token's key paths changed.
    public var count: Int { changed.count }

    /// True for a call without a change (`.initial`, `fire()`, `schedule()`).
    public var isEmpty: Bool { changed.isEmpty }
}

/// The token of `observe(.whichOf(…))`: delivered at most once per tick, with the key paths that
/// changed since its last delivery.
///
/// Its parts, one `.immediate` subscription per key path in its group, record which key path
/// changed and schedule it (with `.immediate`, deliver it with that key path). It has the key
/// paths as its paths, for descriptions and `breakOnInvoke()`, but no edge of its own; ending
/// it ends the group, and any part ending (its object deinitialized) ends it.
final class WhichOfSubscription<Model: ObservableModelBase>: Subscription, @unchecked Sendable {  // see Subscription
    @exclusivity(unchecked) private var callback: (@Sendable (AnyObject?, Model, ChangedProperties<Model>) -> Void)?
    nonisolated(unsafe) private let keyPaths: [PartialKeyPath<Model>]  // key paths are immutable
    private let observer: WeakReference?
    let changed = ChangedIndexes()
    let group: BindingGroup

    init(
        root: __shared Model, observer: AnyObject?, keyPaths: [PartialKeyPath<Model>], options: ObservationOptions,
        queue: CoalescingQueue, site: CreationSite, group: BindingGroup,
        callback: @escaping @Sendable (AnyObject?, Model, ChangedProperties<Model>) -> Void
    ) {
        self.callback = callback
        self.keyPaths = keyPaths
        self.observer = observer.map(WeakReference.init)
        self.group = group
        super.init(
            rootRegistry: root.registry, hasObserver: observer != nil,
            // `.endpointChanges` is not a `whichOf` option: its parts say what changed.
            target: .paths(keyPaths.map { ObservedPath(step: .key(TypedKey(partial: $0))) }),
            options: options.subtracting(.endpointChanges), queue: queue, wantsOldValue: false, site: site)
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    /// A tick's delivery: the key paths that changed since the last one.
    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        callback?(
            observer, unsafeDowncast(root, to: Model.self),
            ChangedProperties(keyPaths: keyPaths, changed: changed.take()))
    }

    /// `deliverNow`: an `.immediate` change of the key path at index `oldValue`, or (`nil`)
    /// `.initial` and `fire()`, which get an empty set and leave the changes recorded for the
    /// tick's delivery alone.
    override func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        let changed: Set<Int> = (oldValue as? Int).map { [$0] } ?? []
        callback?(
            observer, unsafeDowncast(root, to: Model.self), ChangedProperties(keyPaths: keyPaths, changed: changed))
    }

    override func releaseCallback() {
        callback = nil
        group.endAll()
    }
}

/// The indexes of the key paths that changed since the last delivery of an
/// `observe(.whichOf(…))` token.
final class ChangedIndexes: Locked<Set<Int>>, @unchecked Sendable {  // state is guarded by Locked
    init() { super.init(state: []) }

    func insert(_ index: Int) {
        withLock { _ = $0.insert(index) }
    }

    /// The indexes recorded so far, leaving none.
    func take() -> Set<Int> {
        withLock { indexes in
            defer { indexes = [] }
            return indexes
        }
    }
}
