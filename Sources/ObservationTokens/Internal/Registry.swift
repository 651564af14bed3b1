internal import CObservationTokensRuntime
import Synchronization

/// Per-object token bookkeeping: for each observed property, the weak set of subscriptions
/// whose paths run through it.
///
/// Created on an object's first observation and kept by the object. The registry never
/// retains a token or its subscription, except the observer-lifetime subscriptions (`tell`),
/// which have no token to own them.
final class Registry: Locked<RegistryState>, @unchecked Sendable {  // state is guarded by Locked
    let ownerID: ObjectIdentifier
    /// The owner's dynamic type, for descriptions after it is gone.
    let ownerType: ObservableModelBase.Type
    /// Whether the owner adopts `ObservationStateObserving`; checked once, at creation.
    let reportsObservationState: Bool
    /// Set under the lock once the owner's deinit has taken (retained) the members: a detach
    /// from a dead owner (every token's end after the owner's deinit) returns without the lock.
    /// A hint only: `isDead` decides. (Beside the flag above, in the padding after it.)
    private let isDeadHint = Atomic<Bool>(false)

    /// Valid only under the lock while `isDead` is false: the owner's deinit takes the lock
    /// to set `isDead`, so it can't finish while we use this reference.
    ///
    /// Never turned into a strong reference: another thread may drop the last one at any
    /// moment, and a release under our lock would run the owner's deinit, which takes it.
    private let owner: Unmanaged<ObservableModelBase>

    /// The owner, retained, while it is alive and not deinitializing; nil from the moment its
    /// deinit begins. Takes the lock, so call it outside this registry's lock.
    ///
    /// Not a `weak` reference: the first weak reference to an object gives it a side table,
    /// after which every retain and release of it takes the runtime's slow path (≈ 40
    /// instructions each instead of one atomic add). Models are retained and released on every
    /// set that moves a path and every delivery, so that cost was ≈ 23 % of an app-shaped
    /// workload (W17). Under the lock, while `isDead` is false, the owner's memory is valid (its
    /// deinit takes the lock to set `isDead`), and `swift_tryRetain` retains it unless its
    /// deinit has begun.
    var weakOwner: ObservableModelBase? {
        withLock { state -> ObservableModelBase? in
            guard !state.isDead, ot_tryRetain(owner.toOpaque()) else { return nil }
            return owner.takeRetainedValue()
        }
    }

    /// The owner's store version (`ObservableModel.storeVersion`), or nil once it is dead;
    /// neither retains it.
    var ownerStoreVersion: Int? {
        withLock { state in state.isDead ? nil : owner._withUnsafeGuaranteedRef { $0.storeVersion } }
    }

    /// A serial's bit in the owner's `observedBits`: one of 64, shared by serials 64 apart, so
    /// a clear bit proves a property unobserved, and a set one proves nothing.
    static func serialBit(_ serial: UInt64) -> UInt64 {
        1 << (serial & 63)
    }

    /// The properties whose members are all pending at an epoch of the registry's queue, and that
    /// epoch (see `SettledMark`): a further set of one of them skips the lock. Written under the
    /// lock, read without it.
    let settledMark = Atomic<UInt64>(0)

    /// The bits of `RegistryState.settledEpoch` (unretained: the state keeps it), or 0. Set
    /// once, under the lock, before any mark.
    let settledEpochBits = Atomic<UInt>(0)

    /// How many `observeWillChange` observations are registered here (among `retained`): a
    /// store checks this word before looking for them.
    let willChangeCount = Atomic<Int>(0)

    /// The owner without reference counting, for whoever keeps it alive otherwise (a queued
    /// delivery retains its root).
    var unretainedOwner: Unmanaged<ObservableModelBase> { owner }

    /// Borrows `owner` (an owned parameter was retained and released around the call). The
    /// creator tells `DebugCensusState` (from here, `self` was retained and released around it).
    init(owner: borrowing ObservableModelBase) {
        self.owner = .passUnretained(copy owner)
        ownerID = ObjectIdentifier(copy owner)
        ownerType = type(of: copy owner)
        reportsObservationState = Self.reportsObservationState(type(of: copy owner))
        super.init(state: RegistryState())
    }

    deinit {
        // The property list's spilled buffer is freed by hand (see `PropertyList`).
        state.properties.freeSpill()
    }

    // MARK: Edges

    /// Adds `subscription` to the observers of `serial` (a property, or `*`).
    /// Returns the slot for `detach`, or nil once the owner has deinitialized.
    func attach(
        _ subscription: Subscription, serial: UInt64, isLeaf: Bool, hooks: inout ObservationStateHooks
    ) -> Int? {
        let result = withLock { state -> (slot: Int, transition: Bool)? in
            guard !state.isDead else { return nil }
            return insert(subscription, serial: serial, isLeaf: isLeaf, into: &state)
        }
        guard let result else { return nil }
        if result.transition { hooks.append(registry: self, serial: serial, isObserved: true) }
        return result.slot
    }

    /// Attaches a single-property subscription through a key path resolved on this object
    /// before: the lookup and the insert under one lock. Returns nil if the key path is not
    /// known yet (or the owner has deinitialized); the caller resolves it and uses `attach`.
    ///
    /// A key path not known here but resolved on another object of the class is resolved
    /// from the class's table under the same lock (the storage's immutable serial, read off the
    /// owner) and remembered: an object's first token takes this lock once, where resolving
    /// first and attaching then took it three times.
    ///
    /// A non-zero `site` (see `_KeySource.site`) is remembered, here and in the class's table,
    /// as making `keyPath`, for `attach(_:site:hooks:)`.
    func attach(
        _ subscription: Subscription, keyPath: AnyKeyPath, site: UInt = 0, hooks: inout ObservationStateHooks
    ) -> (serial: UInt64, slot: Int)? {
        attach(subscription, hooks: &hooks) { state in
            var known = state.resolvedKeys.serial(for: keyPath)
            if known == nil {
                // The owner is alive: we hold the lock and it is not dead (see `owner`). The
                // class table's lock is a leaf: nothing is locked inside it.
                known = owner._withUnsafeGuaranteedRef { PropertyTable.knownSerial(of: keyPath, site: site, in: $0) }
                if let known { state.resolvedKeys.remember(keyPath, serial: known) }
            }
            if site != 0, let known { state.resolvedKeys.remember(site: site, serial: known) }
            return known
        }
    }

    /// `attach(_:keyPath:site:hooks:)` for a key path known only by the site that makes it
    /// (`_KeySource.site`), without the key path object: nil unless a key path made there was
    /// resolved on this object or on another of its class. `transition`: the owner wants to
    /// hear that the property became observed (see `ObservationStateHooks`); the caller tells
    /// it, with no lock held.
    ///
    /// Inlined where a token is made (`ObservableModelBase._start`): a call and its frame fewer
    /// per token, with `RegistryState.index(of:)`'s first check inline (W3 −19, W18 −25). A
    /// site the object doesn't know yet is resolved by `resolveFromTable(site:_:)`.
    @inline(__always)
    func attachReportingTransition(
        _ subscription: Subscription, site: UInt
    ) -> (serial: UInt64, slot: Int, transition: Bool)? {
        attach(subscription) { state in
            if let known = state.resolvedKeys.serial(forSite: site) { return known }
            return resolveFromTable(site: site, &state)
        }
    }

    /// Under the lock: the serial of the key path made at `site` from the class's table, as in
    /// `attach(_:keyPath:site:hooks:)`, remembered here.
    private func resolveFromTable(site: UInt, _ state: inout RegistryState) -> UInt64? {
        let known = owner._withUnsafeGuaranteedRef { PropertyTable.knownSerial(ofSite: site, in: $0) }
        if let known { state.resolvedKeys.remember(site: site, serial: known) }
        return known
    }

    /// `attachReportingTransition(_:site:)`, the transition collected in `hooks`.
    @inline(__always)
    private func attach(
        _ subscription: Subscription, hooks: inout ObservationStateHooks,
        resolve: (inout RegistryState) -> UInt64?
    ) -> (serial: UInt64, slot: Int)? {
        guard let result = attach(subscription, resolve: resolve) else { return nil }
        if result.transition { hooks.append(registry: self, serial: result.serial, isObserved: true) }
        return (result.serial, result.slot)
    }

    /// The lookups above: `resolve` finds the serial under the lock, and the insert follows.
    @inline(__always)
    private func attach(
        _ subscription: Subscription, resolve: (inout RegistryState) -> UInt64?
    ) -> (serial: UInt64, slot: Int, transition: Bool)? {
        withLock { state -> (serial: UInt64, slot: Int, transition: Bool)? in
            guard !state.isDead, let serial = resolve(&state) else { return nil }
            let (slot, transition) = insert(subscription, serial: serial, isLeaf: true, into: &state)
            return (serial, slot, transition)
        }
    }

    /// Under the lock. Whether the property became observed is worked out only for owners that
    /// want to hear about it (it scans for `*` observers).
    private func insert(
        _ subscription: Subscription, serial: UInt64, isLeaf: Bool, into state: inout RegistryState
    ) -> (slot: Int, transition: Bool) {
        let index = state.index(of: serial)
        let wasObserved = reportsObservationState && state.isObserved(propertyAt: index)
        let (wasEmpty, slot) = state.properties.withEntry(at: index) { property in
            (property.members.isEmpty, property.members.insert(subscription, flag: isLeaf))
        }
        clearSettled(&state)
        if Self.keepsSeenVersions(serial) { seenEdgeAttached(subscription, serial: serial, slot: slot, &state) }
        if wasEmpty {
            // The owner is alive: we hold the lock and it is not dead (see `owner`).
            _ = owner._withUnsafeGuaranteedRef { $0._edgeCount.add(1, ordering: .relaxed) }
            _ = owner._withUnsafeGuaranteedRef {
                $0.observedBits.bitwiseOr(Self.serialBit(serial), ordering: .sequentiallyConsistent)
            }
        }
        return (slot, reportsObservationState && !wasObserved)
    }

    /// Removes an edge added by `attach`. A no-op once the owner has deinitialized.
    func detach(serial: UInt64, slot: Int, hooks: inout ObservationStateHooks) {
        // Nothing is left attached; the deinit holds the members it took (see `ownerDidDeinit`).
        if isDeadHint.load(ordering: .acquiring) { return }
        if Self.keepsSeenVersions(serial) {
            seenEdgeDetaching(serial: serial, slot: slot)
        }
        let transition = withLock { state -> Bool in
            guard !state.isDead, let index = state.properties.firstIndex(ofSerial: serial) else {
                return false
            }
            let (removed, isEmpty) = state.properties.withEntry(at: index) { property in
                let before = property.members.count
                property.members.remove(at: slot)
                return (property.members.count < before, property.members.isEmpty)
            }
            clearSettled(&state)
            guard removed else { return false }
            if isEmpty { lastMemberLeft(&state) }
            // An entry left empty stays, with its (small) table, for the property's next observer.
            return reportsObservationState && !state.isObserved(propertyAt: index)
        }
        if transition { hooks.append(registry: self, serial: serial, isObserved: false) }
    }

    /// A property's last edge went: one property fewer observed, and its bit cleared from the
    /// owner's `observedBits` (recomputed: bits are shared by serials 64 apart). Under the lock;
    /// out of line, so that a detach that leaves members stays small.
    @inline(never)
    private func lastMemberLeft(_ state: inout RegistryState) {
        var observed: UInt64 = 0
        state.properties.forEachEntry { property in
            if !property.members.isEmpty { observed |= Self.serialBit(property.serial) }
        }
        owner._withUnsafeGuaranteedRef {
            $0._edgeCount.subtract(1, ordering: .relaxed)
            $0.observedBits.store(observed, ordering: .sequentiallyConsistent)
        }
    }

    // MARK: Computed values

    /// Tags the value serial of a computed property (`ComputedState.serial`), so that a
    /// registry knows an edge on one without asking anyone.
    static var computedTag: UInt64 { 1 << 62 }

    /// Whether `serial` is a computed property's value serial.
    @inline(__always)
    static func isComputed(_ serial: UInt64) -> Bool {
        serial & computedTag != 0
    }

    /// Remembers a computed state of the owner, at its first computation.
    func registerComputed(_ state: ComputedStateBase) {
        withLock { registryState in
            guard !registryState.computedStates.contains(where: { $0.serial == state.serial }) else { return }
            registryState.computedStates.append(ComputedLink(serial: state.serial, state: state))
        }
    }

    /// Whether members of `serial` have seen versions: a computed value's, or `*` (serial 0). One
    /// comparison: `serial - 1` wraps 0 to the top, and computed serials are at least
    /// `computedTag`, while other serials are small.
    @inline(__always)
    static func keepsSeenVersions(_ serial: UInt64) -> Bool {
        serial &- 1 >= computedTag &- 1
    }

    /// Under the lock: a new edge on a computed value (or `*` of an owner with computed
    /// properties) has seen no version yet (see `syncSeen`), and its subscription learns it
    /// watches one. Out of line: most edges are on stored properties.
    @inline(never)
    private func seenEdgeAttached(
        _ subscription: Subscription, serial: UInt64, slot: Int, _ state: inout RegistryState
    ) {
        guard serial != PathStep.wildcardSerial || hasSyntheticProperties(&state) else { return }
        _ = state.withSeen(of: serial) { $0.clear(slot: slot) }
        subscription.noteComputedEdge()
    }

    /// Before an edge on a computed value (or `*`) detaches: forgets what it saw, and drops the
    /// computed value's earlier value that only it held (after unlocking).
    @inline(never)
    private func seenEdgeDetaching(serial: UInt64, slot: Int) {
        let dropped = withLock { state -> (ComputedStateBase?, UInt64)? in
            guard !state.isDead, let unheld = state.withSeen(of: serial, { $0.clear(slot: slot) }) else { return nil }
            return (state.computed(serial: serial), unheld)
        }
        if let dropped { dropped.0?.dropVersion(dropped.1) }
    }

    /// Under the lock: whether the owner's class has computed properties.
    private func hasSyntheticProperties(_ state: inout RegistryState) -> Bool {
        if let known = state.hasSyntheticProperties { return known }
        // The owner is alive: we hold the lock and it is not dead (see `owner`).
        let has = owner._withUnsafeGuaranteedRef { !PropertyTable($0).synthetic.isEmpty }
        state.hasSyntheticProperties = has
        return has
    }

    /// Brings the computed value `serial` of the owner (alive: the caller holds it) up to
    /// date, computing it if invalid (no lock held), and records its version as what the member
    /// at `slot` has seen. Returns whether that differs from what it saw before. For `*`, the
    /// version is a digest of every computed property of the owner.
    func syncSeen(
        owner: ObservableModelBase, serial: UInt64, slot: Int, oldValue: inout Any?, wantsOldValue: Bool
    ) -> Bool {
        if serial == PathStep.wildcardSerial {
            return syncSeen(
                owner: owner, serial: serial, slot: slot, state: nil, oldValue: &oldValue, wantsOldValue: wantsOldValue)
        }
        // Unretained, as the registry keeps it (`ComputedLink`): the owner, which the caller
        // holds, keeps its computed states (a strong copy, or the existential the link held
        // before, retained and released it around each delivery).
        if let link = withLock({ $0.computedStates.first { $0.serial == serial } }) {
            return syncSeen(
                owner: owner, serial: serial, slot: slot, state: Unmanaged.passUnretained(link.state),
                oldValue: &oldValue, wantsOldValue: wantsOldValue)
        }
        guard let state = Self.findComputed(serial: serial, on: owner) else { return false }
        // Never computed on this owner: held here for the call. Every synthetic state is a
        // `ComputedState`, a `ComputedStateBase`.
        return withExtendedLifetime(state) {
            syncSeen(
                owner: owner, serial: serial, slot: slot,
                state: Unmanaged.passUnretained(unsafeDowncast(state as AnyObject, to: ComputedStateBase.self)),
                oldValue: &oldValue, wantsOldValue: wantsOldValue)
        }
    }

    /// `syncSeen` once the computed state of `serial` is known (nil for `*`), unretained: the
    /// caller keeps it alive. Out of line: code inlined into its caller retained it for its
    /// calls.
    @inline(never)
    private func syncSeen(
        owner: ObservableModelBase, serial: UInt64, slot: Int, state: Unmanaged<ComputedStateBase>?,
        oldValue: inout Any?, wantsOldValue: Bool
    ) -> Bool {
        let version =
            state?._withUnsafeGuaranteedRef { $0.currentVersion(of: owner) }
            ?? Self.digestOfComputedProperties(of: owner)
        let swapped = withLock { registryState -> (old: UInt64, unheld: Bool)? in
            guard !registryState.isDead else { return nil }
            return registryState.withSeen(of: serial) { $0.set(slot: slot, to: version, counted: state != nil) }
        }
        guard let swapped else { return false }
        let changed = swapped.old != version || version == 0
        if changed, wantsOldValue, swapped.old != 0, let state {
            oldValue = state._withUnsafeGuaranteedRef { $0.value(ofVersion: swapped.old) }
        }
        if swapped.unheld, let state { state._withUnsafeGuaranteedRef { $0.dropVersion(swapped.old) } }
        return changed
    }

    /// Records `version` as what the member at `slot` of the computed value `serial` saw (a
    /// tracked evaluation's read), without reading anything.
    func recordSeen(serial: UInt64, slot: Int, version: UInt64) {
        let dropped = withLock { state -> (ComputedStateBase?, UInt64)? in
            guard !state.isDead else { return nil }
            let swapped = state.withSeen(of: serial) { $0.set(slot: slot, to: version, counted: true) }
            return swapped.unheld ? (state.computed(serial: serial), swapped.old) : nil
        }
        if let dropped { dropped.0?.dropVersion(dropped.1) }
    }

    /// A computed state of `owner` not registered yet (it never computed on it), from the
    /// class's table.
    private static func findComputed(serial: UInt64, on owner: ObservableModelBase) -> (any SyntheticStateProtocol)? {
        SyntheticFields.fields(of: owner).first { $0.state.serial == serial }?.state
    }

    /// A digest of the versions of every computed property of `owner` that has dependencies
    /// (brought up to date first): what a `*` token compares. Equal digests mean equal
    /// versions, but for a 64-bit hash collision.
    static func digestOfComputedProperties(of owner: ObservableModelBase) -> UInt64 {
        var digest: UInt64 = 0x9E37_79B9_7F4A_7C15
        for field in SyntheticFields.fields(of: owner) where field.state.hasDependencies {
            var mixed = field.state.serial &* 0xBF58_476D_1CE4_E5B9 ^ field.state.currentVersion(of: owner)
            mixed = (mixed ^ (mixed >> 31)) &* 0x94D0_49BB_1331_11EB
            digest = (digest ^ mixed) &* 0x9E37_79B9_7F4A_7C15
        }
        return digest | 1  // never 0, which means "nothing seen"
    }

    /// Whether some member of the computed value `serial` saw `version` last.
    func isSeen(serial: UInt64, version: UInt64) -> Bool {
        withLock { state in
            state.seenVersions.first { $0.serial == serial }?.versions.isHeld(version) ?? false
        }
    }

    /// A computed value of the owner may have changed (it was invalidated, or a `@Hybrid` was
    /// set): its tokens, and those on `*`, become pending without computing anything; their
    /// deliveries compare. `.immediate` ones compare now, on this thread (unless `inDeinit`:
    /// then they are queued, as no user code may run inside a deinit). A computed property
    /// depending on `*` is invalidated.
    func computedDidChange(owner: ObservableModelBase, serial: UInt64, inDeinit: Bool) {
        // The usual members, queued tokens comparing the value (a leaf edge, not `.immediate`
        // or inside a deinit), are marked under the lock: atomics only, no user code, nothing
        // retained but a token this marks for queueing (then queued after unlocking). Only if
        // every member is one, so that the general route below keeps its order otherwise.
        // Several marked for queueing: a list (nil, the usual case, releases nothing).
        var pending: [Subscription]?
        // One member alone (a token on the value: the usual case) is marked by the scan that
        // checked it, not by a second scan of the property list; retained (under the lock) only
        // if this marks it for queueing.
        var loneQueued: Unmanaged<Subscription>?
        let markedAll = withLock { state -> Bool in
            var allMarkable = true
            var count = 0
            var lone: Unmanaged<Subscription>?
            state.properties.forEachInPlace(serialOrWildcard: serial) { property in
                property.members.forEachInPlace { member, isLeaf in
                    count += 1
                    lone = member
                    allMarkable =
                        allMarkable
                        && member._withUnsafeGuaranteedRef {
                            $0.comparesComputedValues && isLeaf && (inDeinit || !$0.isImmediate)
                        }
                }
            }
            guard allMarkable else { return false }
            if count == 1, let lone {
                // Under the lock: it can't go away.
                if lone._withUnsafeGuaranteedRef({ $0.markCheck() }) { loneQueued = lone.retain() }
                return true
            }
            state.properties.forEachInPlace(serialOrWildcard: serial) { property in
                property.members.forEachInPlace { member, _ in
                    // Retained (under the lock: it can't go away) only if it is to be queued.
                    if member._withUnsafeGuaranteedRef({ $0.markCheck() }) {
                        if pending == nil { pending = [] }
                        pending!.append(member.takeUnretainedValue())
                    }
                }
            }
            return true
        }
        if markedAll {
            if let loneQueued {
                // Its retain balanced as this strong reference goes. A root that is gone is
                // deinitializing; its deinit ends the subscription.
                let subscription = loneQueued.takeRetainedValue()
                if let root = subscription.isRoot(owner) ? owner : subscription.root {
                    subscription.queue.enqueue(subscription, retaining: root)
                }
            } else if let pending, !pending.isEmpty {
                CoalescingQueue.enqueue(pending, changedObject: owner)
            }
            return
        }
        var queued: [Subscription] = []
        // Usually one member (a token on the value): kept inline, nothing allocated; retained
        // by hand under the lock (a trivial element: the loops below count no references),
        // released at the end.
        var members = SmallArray<(subscription: Unmanaged<Subscription>, isLeaf: Bool)>()
        withLock { state in
            state.properties.forEachInPlace(serialOrWildcard: serial) { property in
                property.members.forEachInPlace { member, isLeaf in
                    members.append((member.retain(), isLeaf))  // under the lock: it can't go away
                }
            }
        }
        guard !members.isEmpty else { return }
        defer { for member in members { member.subscription.release() } }
        // Borrowed in the loops (the list's retains keep them): a strong copy retained and
        // released each once per loop.
        // Other computed properties' dependencies (declared on `*`) first: they invalidate.
        for member in members {
            member.subscription._withUnsafeGuaranteedRef { subscription in
                if !subscription.comparesComputedValues { subscription.propertyDidChange(changedObject: owner) { () } }
            }
        }
        for member in members {
            let queues = member.subscription._withUnsafeGuaranteedRef { subscription -> Bool in
                guard subscription.comparesComputedValues else { return false }
                if subscription.isImmediate, !inDeinit {
                    // After the set that invalidated the value has told everyone else, if inside one.
                    if !ImmediateChecks.holdBack(subscription) { subscription.deliverComputedChangeNow() }
                    return false
                }
                if !member.isLeaf { subscription.markNeedsWalk() }
                return subscription.markCheck()
            }
            if queues { queued.append(member.subscription.takeUnretainedValue()) }
        }
        if !queued.isEmpty { CoalescingQueue.enqueue(queued, changedObject: owner) }
    }

    /// The members of exactly `serial` (not `*`): the dependencies of computed properties that
    /// read a computed value of `owner`, told of its invalidation. Each is retained by hand
    /// (the caller releases it) unless `borrowed`: the dependencies of another computed
    /// property of `owner` (the usual chain), which its state owns for its whole life, and
    /// the states live as long as `owner`'s storage, which the caller holds.
    func members(
        of serial: UInt64, owner: ObservableModelBase
    ) -> SmallArray<(subscription: Unmanaged<Subscription>, borrowed: Bool)> {
        withLock { state in
            var members = SmallArray<(subscription: Unmanaged<Subscription>, borrowed: Bool)>()
            // One entry per serial.
            guard let index = state.properties.firstIndex(ofSerial: serial) else { return members }
            state.properties.withEntry(at: index) { property in
                property.members.forEachInPlace { member, _ in
                    let borrowed = member._withUnsafeGuaranteedRef { !$0.comparesComputedValues && $0.isRoot(owner) }
                    // Else retained under the lock: it can't go away.
                    members.append((borrowed ? member : member.retain(), borrowed))
                }
            }
            return members
        }
    }

    // MARK: Reads by path walks

    /// Runs `read` (which reads properties of the owner for a path walk) under the lock and the
    /// owner's `_storeBit`, the first time marking the owner as read by paths: from then on its
    /// `@Observed` setters take that bit around their stores too, so the read never overlaps a
    /// write of the property on another thread (see `ObservableModel._readByPaths`). `read` gets the serial cached for
    /// a key path, if any. Returns nil once the owner has deinitialized.
    func readForPath<T>(_ read: ((AnyKeyPath) -> UInt64?) -> T) -> T? {
        readForPathVersioned(read)?.value
    }

    /// Marks the owner as read by paths (once), so its setters call `_beginStore(serial:)`
    /// before storing: for will-change observations, which read nothing.
    func markReadByPaths() {
        withLock { state in
            guard !state.isDead, !state.isReadByPaths else { return }
            state.isReadByPaths = true
            _ = owner._withUnsafeGuaranteedRef {
                $0._edgeCount.add(ObservableModelBase._readByPaths, ordering: .relaxed)
            }
        }
    }

    /// Whether objects of `type` adopt `ObservationStateObserving`. A conformance check costs
    /// ≈ 290 instructions, once per registry, that is per first token on an object; apps create
    /// many objects of one class in a row, so the last class's answer is kept.
    private static func reportsObservationState(_ type: ObservableModelBase.Type) -> Bool {
        observationStateAnswer.answer(for: type) { $0 is any ObservationStateObserving.Type }
    }

    private static let observationStateAnswer = LastClassAnswer()

    /// `readForPath`, also returning the owner's store version at the read (see
    /// `ObservableModel.storeVersion`).
    func readForPathVersioned<T>(_ read: ((AnyKeyPath) -> UInt64?) -> T) -> (value: T, version: Int)? {
        withLock { state in
            guard !state.isDead else { return nil }
            if !state.isReadByPaths {
                state.isReadByPaths = true
                // The owner is alive: we hold the lock and it is not dead (see `owner`).
                _ = owner._withUnsafeGuaranteedRef {
                    $0._edgeCount.add(ObservableModelBase._readByPaths, ordering: .relaxed)
                }
            }
            return owner._withUnsafeGuaranteedRef { owner in
                owner._beginExclusiveRead()
                defer { owner._endExclusiveStore() }
                let value = read { keyPath in state.resolvedKeys.serial(for: keyPath) }
                // Read while holding the bit: no store can be under way, so the counter is the
                // one this value goes with.
                return (value, owner.storeVersion & ~ObservableModelBase._storeBit)
            }
        }
    }

    /// `readForPathVersioned` for a typed model step whose key path this object has resolved
    /// before: the serial, what the key's `modelReader` read (nil: the object is not of the reader's type;
    /// `.some(nil)`: no model there), and the store version. Nil, reading nothing, when the
    /// key path is not cached here or the owner is dead; the caller then takes the general
    /// route.
    func readCachedModel(_ box: TypedKeyBox, on object: ObservableModelBase) -> (
        serial: UInt64, next: ObservableModelBase??, version: Int
    )? {
        guard box.key.modelReader != nil else { return nil }
        return withLock { state in
            // A computed value is read outside the lock, by the general route: reading it may
            // compute it, which runs user code.
            guard !state.isDead, state.isReadByPaths, let serial = state.resolvedKeys.serial(for: box.key.keyPath),
                !Self.isComputed(serial)
            else {
                return nil
            }
            object._beginExclusiveRead()
            defer { object._endExclusiveStore() }
            // Called in place, not bound first: a copy of the closure retained its context.
            let next = box.key.modelReader.unsafelyUnwrapped(object, box.key.keyPath)
            // Read while holding the bit (see `readForPathVersioned`).
            return (serial, next, object.storeVersion & ~ObservableModelBase._storeBit)
        }
    }

    // MARK: Changes

    /// The lone leaf candidate a set found (retained by hand under the lock): takes the old
    /// value and is queued if it was not pending yet. Out of line: the setter's common cases
    /// never come here.
    @inline(never)
    private static func enqueue(lone: Unmanaged<Subscription>, owner: ObservableModelBase, oldValue: () -> Any) {
        // Borrowed under the retain the set made under the lock, which passes to the queue's
        // item (as a first plain subscription's does) or is given back.
        let root = lone._withUnsafeGuaranteedRef { subscription -> ObservableModelBase? in
            subscription.recordOldValue(oldValue)
            guard subscription.markPendingForChange() else { return nil }
            // A root that is gone is deinitializing; its deinit ends the subscription.
            return subscription.isRoot(owner) ? owner : subscription.root
        }
        guard let root else {
            lone.release()
            return
        }
        CoalescingQueue.enqueue(retained: lone, retaining: root)
    }

    /// The slow path of a setter: tell every subscription on `serial` (and on `*`).
    ///
    /// The value really changed (the setter compared already). Under the lock, a plain
    /// subscription (see `Subscription.isPlain`) costs one atomic operation, plus a retain if
    /// it was not pending yet; a leaf subscription that is already pending costs one atomic
    /// operation and nothing else. Subscriptions that need more (old values, immediate mode, or
    /// a path running through this property) are handled after unlocking.
    ///
    /// Returns the `.immediate` subscriptions to call, for the caller to call after this frame
    /// is gone: a cascade of immediate callbacks (each setting the next model's property) then
    /// costs the setter's small frames per level, not this function's large one.
    func propertyDidChange(owner: ObservableModelBase, serial: UInt64, oldValue: () -> Any) -> ImmediateSubscriptions? {
        // Optional arrays: the common case allocates nothing and releases nothing. The first
        // plain subscription made pending is kept apart, retained by hand (a trivial value, so
        // the sets that make nothing pending release nothing): one alone is queued without an
        // array. Once there are two, the array owns it.
        var firstPlain: Unmanaged<Subscription>?
        var plain: [Subscription]?
        // The same for leaf candidates (path and tracked tokens): one alone needs no array.
        var firstCandidate: Unmanaged<Subscription>?
        var candidates: [Subscription]?
        // And for the subscriptions that need work after unlocking (a path through this
        // property, immediate mode): usually one, which needs no list either.
        var needsWork: NeedsWork?
        // (A further set whose members are all pending still skips all this before calling:
        // see `SettledMark`.)
        withLock { state in
            // Whether every member was pending already, with nothing more to tell (then the
            // property is marked settled for further sets), and the epoch that must not move
            // meanwhile.
            var settles = true
            let epochBefore = state.settledEpoch?.value.load(ordering: .sequentiallyConsistent) ?? 1
            // Scanned in place (`PropertyList.forEachInPlace`): a read-only copy of an entry (or of
            // an array) would retain and release its storage on every set.
            state.properties.forEachInPlace(serialOrWildcard: serial) { property in
                let memberCount = property.members.count
                property.members.forEachInPlace { member, isLeaf in
                    // The common cases touch no reference count: a plain subscription that
                    // was pending already, and any leaf subscription pending already.
                    let route = member._withUnsafeGuaranteedRef { subscription -> Route in
                        if subscription.isPlain { return subscription.markPending() ? .enqueue : .settled }
                        // A computed value invalid already, with no computation running.
                        if !subscription.comparesComputedValues, isLeaf, subscription.isStillStale() {
                            return subscription.rootRegistry === self ? .staleHere : .stale
                        }
                        return isLeaf && !subscription.isImmediate && subscription.isStillPending()
                            && !subscription.needsOldValue ? .settled : .slowPath
                    }
                    switch route {
                    case .settled, .staleHere: return
                    case .stale:
                        // Skipped, but never settled: the value (of another object) clears the
                        // stale bit as it starts computing, and breaks only its own object's
                        // marks (`breakSettledMarks`); the set after it must invalidate again.
                        settles = false
                        return
                    case .enqueue:
                        // The tick's first set: the next one marks (a set per tick, the usual
                        // case, never pays for the mark).
                        settles = false
                        guard let first = firstPlain else {
                            firstPlain = member.retain()  // under the lock: it can't go away
                            return
                        }
                        if plain == nil {
                            plain = []
                            plain!.reserveCapacity(memberCount)
                            plain!.append(first.takeRetainedValue())
                        }
                        plain!.append(member.takeUnretainedValue())
                        return
                    case .slowPath: break
                    }
                    settles = false
                    let subscription = member.takeUnretainedValue()
                    if subscription.isImmediate || !isLeaf {
                        // Retained under the lock, where it can't go away; `work` passes it on.
                        switch needsWork {
                        case nil:
                            needsWork = .one(member.retain(), isLeaf: isLeaf)
                        case .one(let first, let firstIsLeaf):
                            needsWork = .many([(first, firstIsLeaf), (member.retain(), isLeaf)])
                        case .many(var list):
                            needsWork = nil  // the list stays unique while it grows
                            list.append((member.retain(), isLeaf))
                            needsWork = .many(list)
                        }
                    } else if let first = firstCandidate {
                        candidates = [first.takeRetainedValue(), subscription]
                        firstCandidate = nil
                    } else if candidates != nil {
                        candidates!.append(subscription)
                    } else {
                        firstCandidate = member.retain()  // under the lock: it can't go away
                    }
                }
            }
            if settles { markSettled(serial: serial, epochBefore: epochBefore, &state) }
        }
        // Plain subscriptions are single-property tokens on this property: rooted here.
        if let plain {
            CoalescingQueue.enqueue(plain, root: owner)
        } else if let firstPlain {
            // Its retain passes to the queue's item.
            CoalescingQueue.enqueue(retained: firstPlain, retaining: owner)
        }
        if let firstCandidate { Self.enqueue(lone: firstCandidate, owner: owner, oldValue: oldValue) }
        guard candidates != nil || needsWork != nil else { return nil }
        if var candidates {
            for subscription in candidates {
                // Pending or not, a change token without this tick's old value takes this one
                // (it may be pending through schedule()).
                subscription.recordOldValue(oldValue)
            }
            // Those made pending move forward, in order; the rest are cut off only if there are
            // any (`removeAll(where:)` replaced an empty subrange even when all stayed: ≈ 440
            // instructions per set with two or more candidates).
            var kept = 0
            for index in candidates.indices where candidates[index].markPendingForChange() {
                if kept != index { candidates.swapAt(kept, index) }
                kept += 1
            }
            if kept != candidates.count { candidates.removeSubrange(kept...) }
            if !candidates.isEmpty { CoalescingQueue.enqueue(candidates, changedObject: owner) }
        }
        switch needsWork {
        case nil:
            return nil
        case .one(let lone, let isLeaf):
            // A lone `.immediate` leaf (a computed value's dependencies, usually): `work` would
            // walk and queue nothing, and hand it back.
            if isLeaf, lone._withUnsafeGuaranteedRef({ $0.isImmediate }) { return .one(lone.takeRetainedValue()) }
            return Self.work(
                CollectionOfOne((subscription: lone, isLeaf: isLeaf)), owner: owner, serial: serial, oldValue: oldValue)
        case .many(let list):
            return Self.work(list, owner: owner, serial: serial, oldValue: oldValue)
        }
    }

    /// The slow path's work after unlocking, for the subscriptions that need it (a path
    /// through the changed property, `.immediate` tokens): retargets the paths, marks the
    /// subscriptions pending and queues them; returns the `.immediate` ones.
    ///
    /// Each entry comes retained by hand under the lock, and that retain is passed on, never
    /// repeated: to its queue's item for a subscription queued alone (as a set's first plain
    /// subscription's is), to the list for several, to the `.immediate` ones handed back; any
    /// other is released. One route for one subscription (`CollectionOfOne`: W17's chain token,
    /// moved by a set of `owner`) and for several; specialized for one, the visit stamp and the
    /// lists fold away. Out of line: inlined, it made the frame of every set's slow path larger
    /// (W18 +3 per set).
    @inline(never)
    private static func work(
        _ needsWork: some Collection<(subscription: Unmanaged<Subscription>, isLeaf: Bool)>,
        owner: ObservableModelBase, serial: UInt64, oldValue: () -> Any
    ) -> ImmediateSubscriptions? {
        let isAlone = needsWork.count == 1
        // A path may run through this property twice (`a.next.next` with `a.next === a`): each
        // subscription is handled once per change, told apart by a stamp (cheaper than a set).
        // Subscriptions without extras have a single edge, so they can't come twice; nor can
        // one alone.
        let visit = isAlone ? 0 : nextVisit.add(1, ordering: .relaxed).newValue
        // Made when a walk needs it: a two-step chain moved alone (the usual case) moves its
        // leaf without one (`Subscription.retargetTwoStepAlone`).
        var walks: WalkMemo?
        var immediate: ImmediateSubscriptions?
        // Queued together: tokens rooted at `owner` (1,000 views on `root.a.b`) share one item.
        // The first is kept apart: one alone is queued without a list.
        var firstPending: Unmanaged<Subscription>?
        var pending: [Subscription] = []
        for (member, isLeaf) in needsWork {
            // Borrowed under the entry's retain.
            let outcome = member._withUnsafeGuaranteedRef { subscription -> WorkOutcome in
                if !isAlone, let extras = subscription.extras,
                    extras.exchangeLastVisit(visit) == visit
                {
                    return .done
                }
                if !isLeaf, !isAlone || !subscription.retargetTwoStepAlone(changed: owner, serial: serial) {
                    if walks == nil { walks = WalkMemo(changed: owner, serial: serial, isAlone: isAlone) }
                    subscription.retarget(walks: &walks!)
                }
                if subscription.isImmediate { return .immediate }
                if subscription.markPendingForChange() {
                    subscription.recordOldValue(oldValue)
                    return .pending
                }
                if subscription.needsOldValue { subscription.recordOldValue(oldValue) }
                return .done
            }
            switch outcome {
            case .done:
                member.release()
            case .immediate:
                let subscription = member.takeRetainedValue()
                switch immediate {
                case nil: immediate = .one(subscription)
                case .one(let first): immediate = .many([first, subscription])
                case .many(var list):
                    immediate = nil  // the list stays unique while it grows
                    list.append(subscription)
                    immediate = .many(list)
                }
            case .pending:
                if firstPending == nil {
                    firstPending = member
                } else {
                    if pending.isEmpty { pending.reserveCapacity(needsWork.count) }
                    pending.append(member.takeRetainedValue())
                }
            }
        }
        // What a walk read may have changed before its edges were attached (a set on an object
        // that had no edges yet tells no one): read again, now that they are, and walk again.
        walks?.revalidate()
        guard let firstPending else { return immediate }
        if pending.isEmpty {
            // Its retain passes to the queue's item. The owner is passed as it is (not bound
            // with the root first: a retain and release).
            if firstPending._withUnsafeGuaranteedRef({ $0.isRoot(owner) }) {
                CoalescingQueue.enqueue(retained: firstPending, retaining: owner)
            } else if let root = firstPending._withUnsafeGuaranteedRef({ $0.root }) {
                CoalescingQueue.enqueue(retained: firstPending, retaining: root)
            } else {
                // A root that is gone is deinitializing; its deinit ends the subscription.
                firstPending.release()
            }
        } else {
            pending.insert(firstPending.takeRetainedValue(), at: 0)
            CoalescingQueue.enqueue(pending, changedObject: owner)
        }
        return immediate
    }

    /// What `work` does with an entry's retain.
    private enum WorkOutcome {
        /// Released: handled twice, or not made pending.
        case done
        /// Handed back with the `.immediate` subscriptions.
        case immediate
        /// Queued.
        case pending
    }

    /// Stamps for `SubscriptionExtras.lastVisit`, one per change that needs the slow path.
    private static let nextVisit = Atomic<UInt64>(0)

    /// The `.immediate` subscriptions a set hands back to its setter: usually one (a computed
    /// property's dependency), which needs no list. One word, like the optional array it
    /// replaces, so the setter's frame (paid per level of an `.immediate` cascade) stays small.
    enum ImmediateSubscriptions {
        case one(Subscription)
        case many([Subscription])
    }

    private enum Route {
        /// Pending already, with nothing more to tell until its delivery.
        case settled
        /// A computed value's dependency, invalid already with no computation running: of
        /// another object (`stale`), or of this registry's owner (`staleHere`, which may be
        /// settled: its computation breaks the mark, see `SettledMark`).
        case stale, staleHere
        case enqueue, slowPath
    }

    /// What a set's slow path hands to `work`: one subscription or a list, each retained by
    /// hand under the lock.
    private enum NeedsWork {
        case one(Unmanaged<Subscription>, isLeaf: Bool)
        case many([(subscription: Unmanaged<Subscription>, isLeaf: Bool)])
    }

    /// Observations watching `serial` (or `*`), for introspection: distinct subscriptions,
    /// not edges, so a token whose paths reach the property twice (`["a.x", "a.x"]`, a looping
    /// path, `*.*`) counts once.
    ///
    /// - Complexity: O(*e*) in the edges on the property and on `*`.
    func observerCount(ofSerial serial: UInt64) -> Int {
        withLock { state in
            var seen = Set<UnsafeMutableRawPointer>()
            for property in state.properties
            where property.serial == serial || property.serial == PathStep.wildcardSerial {
                property.members.forEachUnretained { member, _ in seen.insert(member.toOpaque()) }
            }
            return seen.count
        }
    }

    /// Edges attached here, over all properties (for tests and introspection).
    var attachedEdgeCount: Int {
        withLock { state in state.properties.reduce(0) { $0 + $1.members.count } }
    }

    /// Serials with at least one observer (`wildcardSerial` for `*`).
    var observedSerials: [UInt64] {
        withLock { state in state.properties.filter { !$0.members.isEmpty }.map(\.serial) }
    }

    // MARK: Key path cache

    /// The serial a typed key path resolved to on this object, if it was resolved before.
    /// Key paths are compared by identity (a key path literal is one object for the whole
    /// process); the cache retains them, so an identity can't be reused while cached.
    func cachedSerial(for keyPath: AnyKeyPath) -> UInt64? {
        withLock { state in state.resolvedKeys.serial(for: keyPath) }
    }

    /// Remembers a resolution (bounded per property: see `ResolvedKeys.remember`).
    func remember(_ keyPath: AnyKeyPath, serial: UInt64) {
        withLock { state in state.resolvedKeys.remember(keyPath, serial: serial) }
    }

    // MARK: Observer-lifetime subscriptions

    func retain(_ subscription: Subscription) {
        let accepted = withLock { state -> Bool in
            guard !state.isDead else { return false }
            state.retained.append(subscription)
            return true
        }
        if !accepted { subscription.end() }
    }

    /// Removes and ends the retained subscriptions that match.
    func endRetained(where matches: (Subscription) -> Bool) {
        let all = withLock { state in state.retained }
        let doomed = all.filter { matches($0) || $0.observerIsGone || !$0.isActive }
        guard !doomed.isEmpty else { return }
        let ids = Set(doomed.map(ObjectIdentifier.init))
        for subscription in doomed { subscription.end() }
        let removed = withLock { state -> [Subscription] in
            let removed = state.retained.filter { ids.contains(ObjectIdentifier($0)) }
            state.retained.removeAll { ids.contains(ObjectIdentifier($0)) }
            return removed
        }
        withExtendedLifetime(removed) {}
    }

    // MARK: Owner lifetime

    /// Called from the owner's deinit: ends the tokens rooted here (they keep a description
    /// naming their properties) and retargets paths that ran through the owner.
    ///
    /// The subscriptions are taken out under the lock into a buffer on the stack (a model's
    /// few tokens; a heap array past `deinitBufferCapacity`), retained, and told outside it.
    func ownerDidDeinit(owner: ObservableModelBase) {
        withUnsafeTemporaryAllocation(of: Unmanaged<Subscription>.self, capacity: Self.deinitBufferCapacity) {
            buffer in
            var overflow: [Unmanaged<Subscription>] = []
            let count = withLock { state -> Int in
                state.isDead = true
                var total = state.retained.count
                state.properties.forEachEntry { total += $0.members.count }
                if total > buffer.count { overflow.reserveCapacity(total) }
                // Retained here, under the lock (the members are alive: see `WeakSet`); the
                // registry's own references to `retained` go with the array below, while these
                // keep them alive. (Two plain loops: a nested function that captured `overflow`
                // made every access to it checked dynamically.)
                if total > buffer.count {
                    state.properties.forEachEntry { property in
                        property.members.forEachUnretained { member, _ in
                            overflow.append(member.retain())
                        }
                    }
                    for subscription in state.retained { overflow.append(Unmanaged.passRetained(subscription)) }
                } else {
                    var count = 0
                    state.properties.forEachEntry { property in
                        property.members.forEachUnretained { member, _ in
                            buffer.initializeElement(at: count, to: member.retain())
                            count += 1
                        }
                    }
                    for subscription in state.retained {
                        buffer.initializeElement(at: count, to: Unmanaged.passRetained(subscription))
                        count += 1
                    }
                }
                state.properties.removeAll()
                state.retained = []
                // Only now, with every member retained above: a detach that sees the hint returns
                // without the lock and its token may free the subscription at once, so the hint
                // must not be seen before our retain (stored first, it let a token's end free a
                // member this loop was about to retain). Release here, acquire in `detach`: our
                // retains happen before that token's release.
                isDeadHint.store(true, ordering: .releasing)
                return total
            }
            if overflow.isEmpty {
                let taken = UnsafeBufferPointer(rebasing: buffer[..<count])
                tellDeinit(taken, owner: owner)
                for subscription in taken { subscription.release() }
                // `Unmanaged` is trivial: nothing to deinitialize in the buffer.
            } else {
                overflow.withUnsafeBufferPointer { tellDeinit($0, owner: owner) }
                for subscription in overflow { subscription.release() }
            }
        }
    }

    /// Subscriptions of a dying owner taken out on the stack (beyond: a heap array).
    private static var deinitBufferCapacity: Int { 16 }

    /// `ownerDidDeinit`'s work outside the lock, on the subscriptions it took out (retained by it).
    private func tellDeinit(_ all: UnsafeBufferPointer<Unmanaged<Subscription>>, owner: ObservableModelBase) {
        // Each subscription once (one may watch several properties here): among a few, a scan
        // of those before it costs less than hashing; among many, a set.
        var seen = all.count > 16 ? Set<ObjectIdentifier>(minimumCapacity: all.count) : nil
        // Single-property tokens rooted here describe themselves by their property's name from
        // now on: its index in the class's cached table, found by the storage's immutable serial
        // (no reflection, no value read) and kept by the subscription (nothing allocated).
        // Stored before any token is told, as telling one may describe it.
        var table: PropertyTable?
        var last: (serial: UInt64, index: Int)?
        for member in all {
            // Borrowed: `all` holds each one.
            member._withUnsafeGuaranteedRef { subscription in
                guard subscription.rootRegistry === self, let serial = subscription.attachedPropertySerial else {
                    return
                }
                if last?.serial != serial {
                    if table == nil { table = PropertyTable(owner) }
                    last = (serial, table!.index(ofSerial: serial, in: owner) ?? -1)
                }
                if last!.index >= 0 { subscription.rememberPropertyName(index: last!.index) }
            }
        }
        for index in all.indices {
            if seen != nil {
                guard seen!.insert(ObjectIdentifier(all[index].takeUnretainedValue())).inserted else { continue }
            } else if all[..<index].contains(where: { $0.toOpaque() == all[index].toOpaque() }) {
                continue
            }
            all[index]._withUnsafeGuaranteedRef { subscription in
                // A property token needs nothing remembered (its name index was stored above).
                if subscription.rootRegistry === self, !subscription.isProperty {
                    subscription.rememberDescription(root: owner)
                }
                subscription.objectDidDeinit(ownerID)
            }
        }
    }
}

struct RegistryState {
    struct PropertyObservers {
        let serial: UInt64
        /// Subscriptions, each with whether the edge is a path's leaf.
        var members = WeakSet<Subscription>()
    }

    /// The first three properties inline (see `PropertyList`).
    var properties = PropertyList()
    var retained: [Subscription] = []
    /// The drain epoch of the queue that settled marks are made for (`SettledMark`): the first
    /// member's queue when a set first could mark. Set once.
    var settledEpoch: DrainEpoch?
    /// The settled marks' bits (`SettledMark.bit`) whose conditions on members were found to
    /// hold (`Registry.markSettled`) since members last changed; non-zero only while
    /// `Registry.settledMark` is, so that `clearSettled` tests one word.
    var settledChecked: UInt64 = 0
    var isDead = false
    /// Whether a path walk has read the owner's properties (see `readForPath`).
    var isReadByPaths = false
    var resolvedKeys = ResolvedKeys()

    /// The owner's computed states that have computed, by serial: what `syncSeen` brings up to
    /// date. Unowned: the owner's storage keeps them alive, and they are used only while it is.
    var computedStates: [ComputedLink] = []
    /// Whether the owner's class has computed properties (`*` then covers them); known from the
    /// first `*` edge.
    var hasSyntheticProperties: Bool?

    /// For each computed value (and `*`) with members: the version each member saw last. Apart
    /// from `properties`, which a setter scans: its entries stay small.
    var seenVersions: [(serial: UInt64, versions: SeenVersions)] = []

    /// Runs `body` on the seen versions of `serial`'s members, created on first use.
    mutating func withSeen<R>(of serial: UInt64, _ body: (inout SeenVersions) -> R) -> R {
        if let index = seenVersions.firstIndex(where: { $0.serial == serial }) {
            return body(&seenVersions[index].versions)
        }
        seenVersions.append((serial, SeenVersions()))
        return body(&seenVersions[seenVersions.count - 1].versions)
    }

    /// The computed state whose value serial is `serial`, retained, if it has computed.
    func computed(serial: UInt64) -> ComputedStateBase? {
        computedStates.first { $0.serial == serial }?.state
    }

    /// Index of the entry for `serial`, creating it if needed. Objects observe few properties,
    /// so a linear scan beats hashing.
    ///
    /// The first entry is checked inline (a token's attach, inlined where it is made, called
    /// the whole lookup there); the others, and a new entry, out of line.
    @inline(__always)
    mutating func index(of serial: UInt64) -> Int {
        if properties.firstSerial == serial { return 0 }
        return index(afterFirstOf: serial)
    }

    @inline(never)
    private mutating func index(afterFirstOf serial: UInt64) -> Int {
        if let index = properties.firstIndex(ofSerial: serial) { return index }
        return properties.append(PropertyObservers(serial: serial))
    }

    /// Whether the property at `index` counts as observed (it or `*` has members).
    func isObserved(propertyAt index: Int) -> Bool {
        if !properties[index].members.isEmpty { return true }
        let serial = properties[index].serial
        if serial == PathStep.wildcardSerial { return false }
        return properties.contains { $0.serial == PathStep.wildcardSerial && !$0.members.isEmpty }
    }
}

/// A registry's observed properties (`RegistryState.properties`), in the order they were first
/// observed: the first three inline, the others in a buffer allocated when a fourth property is
/// observed (the second and third then move into it). An object's first tokens then allocate
/// nothing for the list (a view model's three tokens on a model observe three properties: a
/// model torn down frees no list), and a set of an object with one observed property finds its
/// observers without reading a separate allocation.
///
/// The entries past the first (the "tail") are one contiguous run: the inline pair, or the
/// buffer once spilled. The scans pick its base address (a select, no call) and walk it in one
/// loop, so the setter's per-entry work keeps the two call sites it had with an array.
///
/// The buffer is managed by hand (a Swift array checked its uniqueness on every in-place scan):
/// the list has one owner, its registry's state, which frees it with `removeAll()` (the owner's
/// deinit, and the registry's own deinit). Copies (an iteration's, a debugging snapshot's) only
/// read, under the registry's lock, and never outlive it; nothing mutates a copy.
struct PropertyList: RandomAccessCollection {
    typealias Element = RegistryState.PropertyObservers

    // Invariants: `head == nil` implies `tailCount == 0`; `tailCount <= 2`: entries 1… are
    // `inlineTail.0`, `inlineTail.1` (the unused ones empty, serial `unusedSerial`) and `spill`
    // is nil; `tailCount > 2`: they are the first `tailCount` elements of `spill` (room for
    // `spillCapacity`), and `inlineTail` holds empty entries. Entries are only ever appended (an
    // entry left empty stays), so a list that spilled stays spilled until `removeAll()`.
    private var head: Element?
    private var inlineTail = (Element(serial: Self.unusedSerial), Element(serial: Self.unusedSerial))
    private var spill: UnsafeMutablePointer<Element>?
    private var spillCapacity = 0
    private var tailCount = 0
    /// Whether an entry past the first is `*`'s (entries are never removed). Without one, a scan
    /// for a serial or `*` stops at the serial's entry (`forEachInPlace(serialOrWildcard:_:)`).
    /// Kept for the tail only: an object's first property (the head) is then made as before.
    private var tailHasWildcard = false

    /// No property's serial (serials are small, or computed ones tagged below bit 63).
    private static var unusedSerial: UInt64 { .max }

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tailCount }

    /// A copy of the entry (which retains its members' table): for the cold paths. The hot ones
    /// reach entries in place, through `withEntry(at:_:)`, `forEachEntry(_:)` and
    /// `forEachInPlace(serialOrWildcard:_:)` (a `_modify` accessor was left out of line, with a
    /// coroutine frame allocated per use).
    subscript(position: Int) -> Element {
        entry(at: position)
    }

    /// Out of line: a copy of an inline entry, inlined into a token's attach, took a stack slot
    /// for the pair.
    @inline(never)
    private func entry(at position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "PropertyList index out of range")
        if position == 0 { return head! }
        if tailCount > 2 { return spill.unsafelyUnwrapped[position - 1] }
        return position == 1 ? inlineTail.0 : inlineTail.1
    }

    /// Runs `body` on the tail's entries, in place (the caller's `inout` access of the
    /// registry's state, under its lock, keeps the list at one address).
    ///
    /// The buffer's base is picked inside the inline pair's pointer scope, so the pair's address
    /// never outlives its `withUnsafeMutablePointer`, and one loop (one inlined call of the
    /// caller's body) serves both layouts. `body` must not append to the list.
    @inline(__always)
    private mutating func withTail<R>(_ body: (UnsafeMutableBufferPointer<Element>) -> R) -> R {
        let count = tailCount
        let spilled = spill
        return withUnsafeMutablePointer(to: &inlineTail) { pair in
            let base =
                count > 2
                ? spilled.unsafelyUnwrapped
                : UnsafeMutableRawPointer(pair).assumingMemoryBound(to: Element.self)
            return body(UnsafeMutableBufferPointer(start: base, count: count))
        }
    }

    /// Runs `body` on the entry at `index`, in place.
    @inline(__always)
    mutating func withEntry<R>(at index: Int, _ body: (inout Element) -> R) -> R {
        if index == 0 { return body(&head!) }
        return body(&tailEntry(at: index).pointee)
    }

    /// The entry at `index` (past the first), for the caller to reach in place while its
    /// `inout` access of the list lasts (`withEntry`). Out of line: a token's attach, which
    /// inlines `withEntry`, usually reaches the first entry; and a closure handed to an
    /// out-of-line `withTail` made the attach retain and release the entry's table (W3 +50).
    ///
    /// For the inline pair the pointer outlives its `withUnsafeMutablePointer`: the pair is a
    /// stored property of `self`, and `self` is the registry's state, reached in place through
    /// the registry object under its lock for the whole of the caller's access, so the address
    /// stays that of the pair until `withEntry` returns. Only `withEntry` uses it, at once.
    @inline(never)
    private mutating func tailEntry(at index: Int) -> UnsafeMutablePointer<Element> {
        precondition(index >= 1 && index <= tailCount, "PropertyList index out of range")
        if tailCount > 2 { return spill.unsafelyUnwrapped + (index - 1) }
        return withUnsafeMutablePointer(to: &inlineTail) {
            UnsafeMutableRawPointer($0).assumingMemoryBound(to: Element.self) + (index - 1)
        }
    }

    /// Calls `body` on each entry, borrowed, in order. Mutating (it reads the entries in place):
    /// a read-only access of the list copied it to the stack.
    @inline(__always)
    mutating func forEachEntry(_ body: (borrowing Element) -> Void) {
        guard head != nil else { return }
        body(head!)
        guard tailCount > 0 else { return }
        withTail { tail in
            for index in tail.indices { body(tail[index]) }
        }
    }

    /// Calls `body` on each entry, in place, in order.
    @inline(__always)
    mutating func forEachEntryInPlace(_ body: (inout Element) -> Void) {
        guard head != nil else { return }
        body(&head!)
        guard tailCount > 0 else { return }
        withTail { tail in
            for index in tail.indices { body(&tail[index]) }
        }
    }

    /// Appends `element` (moved in: a borrowed one was copied, its members' table retained);
    /// returns its index.
    @inline(__always)
    mutating func append(_ element: consuming Element) -> Int {
        guard head != nil else {
            head = element
            return 0
        }
        return appendToTail(element)
    }

    @inline(never)
    private mutating func appendToTail(_ element: consuming Element) -> Int {
        if element.serial == PathStep.wildcardSerial { tailHasWildcard = true }
        switch tailCount {
        case 0: inlineTail.0 = element
        case 1: inlineTail.1 = element
        case 2:
            // The fourth property: the tail moves into a buffer, and the pair is emptied (its
            // entries' tables move with them).
            let buffer = UnsafeMutablePointer<Element>.allocate(capacity: 4)
            buffer.initialize(to: Element(serial: Self.unusedSerial))
            swap(&buffer.pointee, &inlineTail.0)
            (buffer + 1).initialize(to: Element(serial: Self.unusedSerial))
            swap(&buffer[1], &inlineTail.1)
            (buffer + 2).initialize(to: element)
            spill = buffer
            spillCapacity = 4
        default:
            var buffer = spill.unsafelyUnwrapped
            if tailCount == spillCapacity {
                let grown = UnsafeMutablePointer<Element>.allocate(capacity: spillCapacity * 2)
                grown.moveInitialize(from: buffer, count: tailCount)
                buffer.deallocate()
                buffer = grown
                spill = grown
                spillCapacity *= 2
            }
            (buffer + tailCount).initialize(to: element)
        }
        tailCount += 1
        return tailCount
    }

    /// Empties the list, freeing the spilled buffer (the list's owner calls it before dropping
    /// the list: see the type's notes).
    mutating func removeAll() {
        freeSpill()
        // In place (a new list assigned destroyed and rebuilt every field through the value
        // witnesses): the entries in use go, the rest are empty already.
        if head != nil { head = nil }
        if tailCount > 0 { inlineTail.0 = Element(serial: Self.unusedSerial) }
        if tailCount > 1 { inlineTail.1 = Element(serial: Self.unusedSerial) }
        tailCount = 0
        tailHasWildcard = false
    }

    /// Frees the spilled buffer, if any, with its entries (the inline pair is empty then): what
    /// the registry's deinit does before its state, and the list in it, are destroyed.
    @inline(__always)
    mutating func freeSpill() {
        guard let spill else { return }
        spill.deinitialize(count: tailCount)
        spill.deallocate()
        self.spill = nil
        spillCapacity = 0
        tailCount = 0
    }

    /// The first entry's serial, nil while there is none.
    var firstSerial: UInt64? { head?.serial }

    /// The index of the entry for `serial`, reading serials in place (mutating, as
    /// `forEachEntry`).
    @inline(__always)
    mutating func firstIndex(ofSerial serial: UInt64) -> Int? {
        guard let first = head?.serial else { return nil }
        if first == serial { return 0 }
        guard tailCount > 0 else { return nil }
        return tailIndex(ofSerial: serial)
    }

    @inline(never)
    private mutating func tailIndex(ofSerial serial: UInt64) -> Int? {
        withTail { tail in
            for index in tail.indices where tail[index].serial == serial { return index + 1 }
            return nil
        }
    }

    /// Calls `body` on each entry for `serial` or for `*`, in place: a read-only copy of an entry
    /// (or of the list) would retain and release its table on every set.
    ///
    /// Each serial has one entry: while no entry past the first is `*`'s, the scan stops at
    /// `serial`'s (a set of the first observed property reads no other entry; a scan of all of
    /// them was ≈ 9 instructions per entry, on every set that takes the lock).
    @inline(__always)
    mutating func forEachInPlace(serialOrWildcard serial: UInt64, _ body: (inout Element) -> Void) {
        guard head != nil else { return }
        if head!.serial == serial || head!.serial == PathStep.wildcardSerial {
            body(&head!)
            // Read again after the body, not kept from before it: a value kept across the
            // body's loop over the entry's members took a callee-saved register there, and the
            // loop then saved and restored another value around each of its calls (W5 +4
            // instructions per callback). `body` changes neither field.
            if head!.serial == serial, !tailHasWildcard { return }
        }
        guard tailCount > 0 else { return }
        let stopsAtSerial = !tailHasWildcard
        withTail { tail in
            for index in tail.indices
            where tail[index].serial == serial || tail[index].serial == PathStep.wildcardSerial {
                body(&tail[index])
                if stopsAtSerial { return }
            }
        }
    }
}

/// A property of a deinitialized owner that tokens rooted there watched: its storage's serial,
/// and its entry in the owner's class table, which names it. Two integers, so that the list
/// costs one allocation to make and nothing per element to destroy.
struct NameAfterDeinit {
    let serial: UInt64
    let index: Int

    init(_ serial: UInt64, _ index: Int) {
        self.serial = serial
        self.index = index
    }
}

/// A computed state known to a registry (see `RegistryState.computedStates`).
struct ComputedLink {
    let serial: UInt64
    unowned(unsafe) let state: ComputedStateBase
}

/// The versions of a computed value (or, for `*`, a digest of its object's computed values)
/// that each member of a property entry saw last, by slot, and how many members hold each
/// version (so an earlier value goes from the computed state's history when its last holder
/// moves on). 0: no version seen yet.
struct SeenVersions {
    private var bySlot: [UInt64] = []
    private var holders: [(version: UInt64, count: Int)] = []

    /// Sets what the member at `slot` saw; returns what it saw before, and whether that version
    /// lost its last holder.
    mutating func set(slot: Int, to version: UInt64, counted: Bool) -> (old: UInt64, unheld: Bool) {
        if slot >= bySlot.count { bySlot.append(contentsOf: repeatElement(0, count: slot + 1 - bySlot.count)) }
        let old = bySlot[slot]
        guard old != version else { return (old, false) }
        bySlot[slot] = version
        guard counted else { return (old, false) }
        // The usual case, without the scan: this member held the one version held, alone, and
        // moves on to a new one (the entry is reused in place, as below).
        if version != 0, holders.count == 1, holders[0].version == old, holders[0].count == 1 {
            holders[0] = (version, 1)
            return (old, true)
        }
        // One scan for both (usually one holder: this member, which moves on).
        var oldIndex = -1
        var newIndex = -1
        for index in holders.indices {
            if holders[index].version == old {
                oldIndex = index
            } else if holders[index].version == version {
                newIndex = index
            }
        }
        if version != 0 {
            if newIndex >= 0 {
                holders[newIndex].count += 1
            } else if oldIndex >= 0, holders[oldIndex].count == 1 {
                // The old version's last holder moves to a version nobody holds: the entry is
                // reused in place (nothing appended, nothing removed).
                holders[oldIndex] = (version, 1)
                return (old, true)
            } else {
                holders.append((version, 1))
            }
        }
        // (`old` is never 0 in `holders`; `oldIndex` stays valid after an append.)
        guard oldIndex >= 0 else { return (old, false) }
        holders[oldIndex].count -= 1
        guard holders[oldIndex].count == 0 else { return (old, false) }
        holders.remove(at: oldIndex)
        return (old, true)
    }

    /// Forgets what the member at `slot` saw (it detached, or is new); returns a version that
    /// lost its last holder.
    mutating func clear(slot: Int) -> UInt64? {
        guard slot < bySlot.count else { return nil }
        let old = bySlot[slot]
        bySlot[slot] = 0
        return release(old) ? old : nil
    }

    private mutating func release(_ version: UInt64) -> Bool {
        guard version != 0, let index = holders.firstIndex(where: { $0.version == version }) else { return false }
        holders[index].count -= 1
        guard holders[index].count == 0 else { return false }
        holders.remove(at: index)
        return true
    }

    /// Whether some member saw `version` last.
    func isHeld(_ version: UInt64) -> Bool {
        holders.contains { $0.version == version }
    }
}

extension Optional {
    /// Appends to an optional array, creating it on first use.
    fileprivate mutating func append<Element>(_ element: Element, default empty: Wrapped) where Wrapped == [Element] {
        if self == nil { self = empty }
        self!.append(element)
    }
}
