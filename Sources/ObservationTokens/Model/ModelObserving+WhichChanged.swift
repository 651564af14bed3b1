extension ModelObserving where Self: ObservableModelBase {
    /// Observes several properties with one token whose callback learns which of them changed
    /// this tick.
    ///
    /// ```swift
    /// let token = person.observe(whichOf: [\.firstName, \.lastName]) { person, changed in
    ///     if changed.contains(\.lastName) { sortContacts() }
    ///     render(person)
    /// }
    /// ```
    ///
    /// The callback runs at most once per tick, whichever of the properties changed and however
    /// often, with those that changed since its last call (FBKVOController's key path
    /// argument, for a coalescing token). `fire()` and `.initial` call it with an empty
    /// set; with `.immediate` it runs inside each setter, with that one property. For a token
    /// that doesn't need to know, `observe(_:)` with a list is cheaper: this one holds a
    /// subscription per property, which records the change inside the setter, plus one that
    /// coalesces them.
    ///
    /// - Parameters:
    ///   - keyPaths: `@Observed` properties of the receiver; an empty list is a programming
    ///     error (a debug-build trap; an ended token in release builds).
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observed object and the key paths that changed.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(*k*) in the key paths to create; a set costs what a set of a plain
    ///   token's property costs, and the tick's delivery O(changed key paths).
    public func observe(
        whichOf keyPaths: [PartialKeyPath<Self>],
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self, ChangedProperties<Self>) -> Void
    ) -> ObservationToken {
        let site = CreationSite(fileID: fileID, line: line)
        let group = BindingGroup()
        let changed = ChangedIndexes()
        let model = WeakReference(self)
        nonisolated(unsafe) let keyPaths = keyPaths  // key paths are immutable
        // The hub: scheduled by each property's subscription, delivered once per tick.
        let hub = BindingSubscription(
            root: self, target: .property, options: [], queue: queue, site: site, group: group
        ) {
            guard let model = model.load(as: Self.self) else { return }
            callback(model, ChangedProperties(keyPaths: keyPaths, changed: changed.take()))
        }
        group.add(hub)
        let token = ObservationToken(subscription: hub)
        guard !keyPaths.isEmpty else {
            group.endAll()
            _reportMisuse(
                "observe(whichOf: []) at \(site) was given an empty list, so the token would observe nothing. Pass at least one key path."
            )
            return token
        }
        let weakHub = WeakReference(hub)
        let immediate = options.contains(.immediate)
        for (index, keyPath) in keyPaths.enumerated() {
            let member = BindingSubscription(
                root: self, target: .paths([ObservedPath(step: .key(TypedKey(partial: keyPath)))]),
                // Immediate either way: without `.immediate` it only records the change and
                // schedules the hub (bookkeeping, no user code), so a tick's drain delivers, and
                // counts, the hub alone.
                options: .immediate, queue: queue, site: site, group: group
            ) {
                if immediate {
                    guard let model = model.load(as: Self.self),
                        weakHub.load(as: BindingSubscription.self)?.isActive == true
                    else { return }
                    callback(model, ChangedProperties(keyPaths: keyPaths, changed: [index]))
                } else {
                    changed.insert(index)
                    weakHub.load(as: BindingSubscription.self)?.schedule()
                }
            }
            group.add(member)
            guard member.start(root: self) else {
                // Not an @Observed property: the same loud no-op as observe(_:).
                group.endAll()
                _reportMisuse(
                    "observe(whichOf:) at \(site): \(keyPath) reads no @Observed property of \(Self.self), so it can't be observed. Mark the property @Observed."
                )
                return token
            }
        }
        if options.contains(.initial) { hub.deliverNow(oldValue: nil, isChange: false) }
        return token
    }

    /// Observes every `@Observed` property of the receiver with one token: the typed form of a
    /// `*` string path.
    ///
    /// ```swift
    /// let token = settings.observeAll { settings in save(settings) }
    /// ```
    ///
    /// Properties are those the class declares `@Observed`, superclass ones included; a
    /// property's change fires the token once per tick, however many change.
    ///
    /// - Parameters:
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    ///   - callback: Receives the observed object.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1) to create: one edge for all the properties.
    public func observeAll(
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (Self) -> Void
    ) -> ObservationToken {
        _observe(
            _ModelSubscription(
                root: self, target: .paths([ObservedPath(step: .wildcard)]), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line), callback: callback))
    }
}

/// Which of the properties an `observe(whichOf:)` token watches changed since its last call.
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

/// The indexes of the key paths that changed since the last delivery of an
/// `observe(whichOf:)` token.
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
