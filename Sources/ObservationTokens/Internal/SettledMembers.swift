/// What a property with many members remembers so that a further set in the tick costs O(1):
/// its members are all pending already, and will be delivered after that set's store.
///
/// A subscription's pending flag is cleared only by its delivery, inside a drain of its queue,
/// and a queue's `drainEpoch` moves when a drain starts. So once a set has found every member
/// pending, all on one queue, with nothing more to be told until its delivery (no `.immediate`
/// mode, no old value to take, no path running through the property), an unchanged epoch
/// proves they still are. The check is a compare-and-swap that writes the epoch back: the
/// drain that delivers them starts with a read-modify-write of the same word, so the set's
/// store happens before their deliveries, as marking each of them pending would have made it.
///
/// A stamp is taken by a tick's second set (the first, like a property set once per tick, only
/// notes the epoch), and dropped whenever a member comes or goes. Members that can never settle
/// (a path running through the property, `.immediate` mode, several queues), once a further
/// set has found them, mark the property so until its members change. Sets of properties that
/// are not crowded never look (`Registry.crowdedBits`).
struct SettledMembers {
    /// The queue and drain epoch at which every member was found pending. Members keep their
    /// queue alive, and any change of members drops the stamp.
    private var stamp: (queue: Unmanaged<CoalescingQueue>, epoch: UInt64)?
    /// The first member's queue's drain epoch when the last set scanned the members.
    private var scannedAt: UInt64 = .max
    /// Some member can't settle (see the type's notes) until the members change.
    private var never = false
    /// Whether the property's bit is set in `Registry.crowdedBits`.
    private(set) var isCounted = false

    /// The members changed: forgets what was known of them. Only called for properties with
    /// many members, or counted as crowded (below that, nothing of this is read).
    mutating func membersChanged() {
        stamp = nil
        scannedAt = .max
        never = false
    }

    /// Worth a look before a set's scan: many members, which may settle.
    func isCrowded(memberCount: Int) -> Bool {
        memberCount >= Registry.settlingThreshold && !never
    }

    /// Brings `isCounted` in line with `isCrowded`: 1 when the property became crowded, -1 when
    /// it stopped being, 0 otherwise.
    mutating func recount(memberCount: Int) -> Int {
        let crowded = isCrowded(memberCount: memberCount)
        defer { isCounted = crowded }
        return crowded == isCounted ? 0 : crowded ? 1 : -1
    }

    /// Whether a set may skip `members`: true when they are all pending still, on a queue that
    /// has not started a drain since they were. A set that finds the epoch it noted at the
    /// tick's first scan (a further set) takes a stamp, reading every member once.
    mutating func allowsSkipping(_ members: WeakSet<Subscription>) -> Bool {
        if let stamp, Self.holds(stamp) { return true }
        stamp = nil
        guard let (first, isLeaf) = members.firstElement else { return false }
        // An edge of a path through the property: a set always has work for it.
        guard isLeaf else {
            never = true
            return false
        }
        let epoch = first._withUnsafeGuaranteedRef { $0.queue.drainEpoch.load(ordering: .sequentiallyConsistent) }
        defer { scannedAt = epoch }
        guard scannedAt == epoch else { return false }  // the tick's first set: scan as usual
        switch Self.pendingStamp(members) {
        case .settled(let found):
            guard Self.holds(found) else { return false }
            stamp = found
            return true
        case .notYet:
            return false
        case .never:
            never = true
            return false
        }
    }

    private static func holds(_ stamp: (queue: Unmanaged<CoalescingQueue>, epoch: UInt64)) -> Bool {
        stamp.queue._withUnsafeGuaranteedRef {
            $0.drainEpoch.compareExchange(expected: stamp.epoch, desired: stamp.epoch, ordering: .acquiringAndReleasing)
                .exchanged
        }
    }

    private enum Found {
        case settled((queue: Unmanaged<CoalescingQueue>, epoch: UInt64))
        case notYet
        case never
    }

    /// Reads every member: all pending, with nothing more to be told, on one queue that is not
    /// draining and did not start a drain meanwhile (the epoch is read before and after).
    private static func pendingStamp(_ members: WeakSet<Subscription>) -> Found {
        var queue: Unmanaged<CoalescingQueue>?
        var epoch: UInt64 = 1
        var allPending = true
        var never = false
        members.forEachUnretained { member, isLeaf in
            guard allPending else { return }
            member._withUnsafeGuaranteedRef { subscription in
                let memberQueue = Unmanaged.passUnretained(subscription.queue)
                if queue == nil {
                    queue = memberQueue
                    epoch = subscription.queue.drainEpoch.load(ordering: .sequentiallyConsistent)
                }
                if queue!.toOpaque() != memberQueue.toOpaque() || !(isLeaf || subscription.isPlain)
                    || subscription.isImmediate
                {
                    (allPending, never) = (false, true)
                } else if subscription.needsOldValue || !subscription.isPending {
                    allPending = false
                }
            }
        }
        if never { return .never }
        guard allPending, let queue else { return .notYet }
        guard epoch & 1 == 0,
            queue._withUnsafeGuaranteedRef({ $0.drainEpoch.load(ordering: .sequentiallyConsistent) }) == epoch
        else { return .notYet }
        return .settled((queue, epoch))
    }
}

extension Registry {
    /// After a change of the members of `property`, which has many or counted as crowded:
    /// forgets what was known of them, and counts it as crowded or not. Under the lock; out of
    /// line, so that attaching and detaching stay small where properties have few members.
    @inline(never)
    func membersChanged(_ property: inout RegistryState.PropertyObservers) {
        property.settling.membersChanged()
        let change = property.settling.recount(memberCount: property.members.count)
        if change != 0 { setCrowded(change > 0, serial: property.serial) }
    }

    /// Sets or clears a property's bit in `crowdedBits`. Under the lock.
    private func setCrowded(_ isCrowded: Bool, serial: UInt64) {
        if isCrowded {
            crowdedBits.bitwiseOr(Self.serialBit(serial), ordering: .relaxed)
        } else {
            crowdedBits.bitwiseAnd(~Self.serialBit(serial), ordering: .relaxed)
        }
    }

    /// Whether a set of `serial` may skip every property it would scan (see `SettledMembers`).
    @inline(never)
    func skipsFurtherSet(serial: UInt64) -> Bool {
        withLock { state in
            var skips = false
            for index in state.properties.indices
            where
                (state.properties[index].serial == serial || state.properties[index].serial == PathStep.wildcardSerial)
                && !state.properties[index].members.isEmpty
            {
                let count = state.properties[index].members.count
                guard state.properties[index].settling.isCrowded(memberCount: count),
                    state.properties[index].settling.allowsSkipping(state.properties[index].members)
                else {
                    // Members that turned out never to settle stop being counted.
                    let change = state.properties[index].settling.recount(memberCount: count)
                    if change != 0 { setCrowded(change > 0, serial: state.properties[index].serial) }
                    return false
                }
                skips = true
            }
            return skips
        }
    }
}
