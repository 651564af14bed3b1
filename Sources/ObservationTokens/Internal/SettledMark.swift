import Synchronization

/// A coalescing queue's drain epoch, in an object of its own: registries keep it (retained)
/// for the lock-free check of a further set (`Registry.skipsSettledSet`), which must never touch
/// a queue that may be gone. Holds nothing but the word, so keeping it keeps nothing else alive.
///
/// Even while no drain runs; a drain adds 1 when it starts and 1 when it ends (with
/// read-modify-writes, sequentially consistent). A subscription's pending flag is cleared only
/// by its delivery, inside a drain of its queue, so an unchanged even epoch proves that the
/// subscriptions found pending at that epoch still are.
final class DrainEpoch: Sendable {
    let value = Atomic<UInt64>(0)
}

/// What lets a further set of a property whose tokens are all pending skip the registry: its
/// lock, its scan and every token. One word per registry (`Registry.settledMark`), read with one
/// atomic load before the lock:
///
/// - bits 0–15: the settled properties, one bit each (`bit(_:)`, serials 16 apart share one);
/// - bits 16–63: the drain epoch (halved: it is even) of the registry's queue
///   (`Registry.settledEpoch`, the first queue a mark was made for) at which every member of
///   those properties, and of `*`, was found pending with nothing more to be told until its
///   delivery.
///
/// A set's scan under the lock places the bit when every member of the property and of `*` was
/// pending already (the tick's second set, then), with nothing more to be told until its
/// delivery (no `.immediate` mode, no old value to take, no path running through the
/// property), all on that queue, with the epoch read before and
/// after the scan equal and even (no drain began or ran meanwhile), and no other observed
/// property sharing the bit. Any change of members (attach, detach) clears the whole word;
/// a drain's start moves the epoch, which makes the word stale without touching it.
///
/// A further set stores, compares, loads the word and, if its property's bit is set, skips
/// everything when a compare-and-swap of the epoch from the word's to the same value succeeds.
/// Why that is enough, under threads:
///
/// - The marked members stay pending until a drain of their queue delivers them, and that drain
///   starts with a read-modify-write of the epoch. A compare-and-swap that finds the word's epoch
///   comes before that start in the epoch's modification order, so it synchronizes with it (it
///   releases; the drain's read-modify-write acquires, and later ones continue the release
///   sequence): every delivery of that drain, or of a later one, reads the value the set
///   stored.
/// - Once a drain has begun delivering the members (it may have cleared a flag already), the
///   epoch is not the word's any more: the compare-and-swap fails and the set takes the lock and
///   marks each member again, as it would without the word. A plain load of the epoch would not
///   do: the set's store of the value could still be in its CPU's store buffer while a drain
///   starts and delivers the old value (store→load reordering); the read-modify-write is the
///   fence, and what gives the thread sanitizer the happens-before edge.
/// - A set that loaded the word before an attach cleared it runs concurrently with that attach,
///   and may be ordered before it (as a set that took the lock first would be). The clear and
///   the set's load are sequentially consistent, so a set that the program orders after the
///   attach (through its own sequentially consistent atomics, say) sees the cleared word.
/// - The epoch object is retained by the registry, so a mark never reaches a queue that is gone.
enum SettledMark {
    /// A serial's bit in the word: one of 16 (`*`, serial 0, has bit 0).
    @inline(__always)
    static func bit(_ serial: UInt64) -> UInt64 {
        1 << (serial & 15)
    }

    static var propertyMask: UInt64 { 0xFFFF }

    /// The word for `epoch` (even) with `bits`.
    static func word(epoch: UInt64, bits: UInt64) -> UInt64 {
        (epoch << 15) | bits
    }

    /// The epoch a word was marked at.
    @inline(__always)
    static func epoch(of word: UInt64) -> UInt64 {
        (word >> 16) << 1
    }
}

extension Registry {
    /// Whether a set of `serial` may skip everything: its property is marked settled (see
    /// `SettledMark`) and the compare-and-swap of its queue's epoch finds the marked one.
    /// Lock-free; one load when the property is not marked.
    @inline(__always)
    func skipsSettledSet(serial: UInt64) -> Bool {
        // Sequentially consistent (a plain load on x86-64), like the clear below: a set ordered
        // after an attach by the program's own sequentially consistent synchronization sees the
        // word the attach cleared.
        let mark = settledMark.load(ordering: .sequentiallyConsistent)
        guard mark & SettledMark.bit(serial) != 0 else { return false }
        return Self.epochHolds(mark, in: settledEpochBits.load(ordering: .acquiring))
    }

    /// The compare-and-swap of a further set (see `SettledMark`).
    @inline(__always)
    static func epochHolds(_ mark: UInt64, in epochBits: UInt) -> Bool {
        let epoch = SettledMark.epoch(of: mark)
        guard let pointer = UnsafeRawPointer(bitPattern: epochBits) else { return false }  // set before any mark
        return Unmanaged<DrainEpoch>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
            $0.value.compareExchange(expected: epoch, desired: epoch, ordering: .acquiringAndReleasing).exchanged
        }
    }

    /// After a scan of `serial`'s members (and `*`'s) that found them all pending with nothing
    /// more to tell, begun at `epochBefore`: marks the property settled if the conditions in
    /// `SettledMark` hold. Under the lock; out of line (once per tick and property).
    @inline(never)
    func markSettled(serial: UInt64, epochBefore: UInt64, _ state: inout RegistryState) {
        // The state keeps the epoch object: borrowed through its bits (a copy of the reference
        // retained and released it, a quarter of this function's cost).
        let epochBits = settledEpochBits.load(ordering: .relaxed)
        guard let epochPointer = UnsafeRawPointer(bitPattern: epochBits) else {
            firstMark(serial: serial, &state)
            return
        }
        guard epochBefore & 1 == 0 else { return }
        let bit = SettledMark.bit(serial)
        // What depends on the members only (one queue, no other observed property on the bit)
        // is checked once per property between changes of members, which clear
        // `settledChecked`; then a mark per tick is a load and a store.
        if state.settledChecked & bit == 0 {
            guard Self.marksSettle(serial: serial, bit: bit, epochBits: epochBits, &state) else { return }
        }
        let epochNow = Unmanaged<DrainEpoch>.fromOpaque(epochPointer)._withUnsafeGuaranteedRef {
            $0.value.load(ordering: .sequentiallyConsistent)
        }
        guard epochNow == epochBefore else { return }
        let current = settledMark.load(ordering: .relaxed)
        let bits = SettledMark.epoch(of: current) == epochBefore ? current & SettledMark.propertyMask : 0
        settledMark.store(SettledMark.word(epoch: epochBefore, bits: bits | bit), ordering: .releasing)
        // Only with a mark stored: the word is non-zero while any bit is checked, so
        // `clearSettled` clears both behind its one load.
        state.settledChecked |= bit
    }

    /// A registry's first mark (no epoch object yet): takes the queue of the first member of
    /// `serial` (or `*`) that a queue delivers (not a computed value's dependencies, which are
    /// never queued), the one every later mark is made for, and marks `serial` if the members
    /// still settle. Under the lock; once per registry, out of line.
    ///
    /// The set's scan that found every member pending read no epoch before it (there was
    /// none), so this reads the epoch now and checks the members again after it, as that scan
    /// found them (pending with nothing more to be told, or a stale dependency of a computed
    /// value of the owner): a scan begun at this epoch, and the mark is made only if the epoch
    /// has not moved since, so it holds for the same reasons as one made by the set's own scan
    /// (see `SettledMark`). The epoch object is stored before that check, as before any scan
    /// that can mark: a computation that clears a stale dependency the check counted sees it
    /// (`breakSettledMarks`). The same pass checks what `marksSettle` does (one queue, no other
    /// observed property on the mark's bit). (Without the check, the registry's first settled
    /// set only found the queue, and the next one, through the lock, marked.)
    @inline(never)
    private func firstMark(serial: UInt64, _ state: inout RegistryState) {
        // Borrowed under the lock: the member keeps its queue, and the queue its epoch object.
        var found: Unmanaged<DrainEpoch>?
        state.properties.forEachInPlace(serialOrWildcard: serial) { property in
            guard found == nil else { return }
            property.members.forEachInPlace { member, _ in
                if found == nil, member._withUnsafeGuaranteedRef({ $0.comparesComputedValues }) {
                    found = member._withUnsafeGuaranteedRef { .passUnretained($0.queue.drainEpoch) }
                }
            }
        }
        guard let found else { return }
        let epochBits = UInt(bitPattern: found.toOpaque())
        let epoch = found._withUnsafeGuaranteedRef { $0.value.load(ordering: .sequentiallyConsistent) }
        state.settledEpoch = found.takeUnretainedValue()  // kept (retained) from now on
        settledEpochBits.store(epochBits, ordering: .releasing)
        guard epoch & 1 == 0 else { return }
        let bit = SettledMark.bit(serial)
        var settles = true
        state.properties.forEachEntryInPlace { property in
            guard settles, !property.members.isEmpty else { return }
            guard property.serial == serial || property.serial == PathStep.wildcardSerial else {
                if SettledMark.bit(property.serial) == bit { settles = false }  // shares the bit
                return
            }
            property.members.forEachInPlace { member, isLeaf in
                guard settles else { return }
                // `propertyDidChange`'s routes `.settled` and `.staleHere`, marking nothing; and
                // on this queue.
                settles = member._withUnsafeGuaranteedRef { subscription -> Bool in
                    if !subscription.comparesComputedValues {
                        return isLeaf && subscription.isStillStale() && subscription.rootRegistry === self
                    }
                    guard UInt(bitPattern: ObjectIdentifier(subscription.queue.drainEpoch)) == epochBits else {
                        return false
                    }
                    if subscription.isPlain { return subscription.isStillPending() }
                    return isLeaf && !subscription.isImmediate && subscription.isStillPending()
                        && !subscription.needsOldValue
                }
            }
        }
        guard settles, found._withUnsafeGuaranteedRef({ $0.value.load(ordering: .sequentiallyConsistent) }) == epoch
        else { return }
        settledMark.store(SettledMark.word(epoch: epoch, bits: bit), ordering: .releasing)
        state.settledChecked |= bit
    }

    /// Whether the members of `serial` and `*` are all on the queue of `epochBits` (computed
    /// values' dependencies aside), and no other observed property shares the mark's `bit`.
    /// Under the lock. (`inout`: the property list is read in place, see `PropertyList.forEachEntry`.)
    private static func marksSettle(
        serial: UInt64, bit: UInt64, epochBits: UInt, _ state: inout RegistryState
    ) -> Bool {
        var onOneQueue = true
        var sharesBit = false
        // Borrowed in place (a copy of an entry retains its members' table).
        state.properties.forEachEntry { property in
            guard !sharesBit, !property.members.isEmpty else { return }
            if property.serial == serial || property.serial == PathStep.wildcardSerial {
                property.members.forEachUnretained { member, _ in
                    // A computed value's dependency here is stale (or the scan would not
                    // settle) and has no queue: its computation breaks the mark.
                    if onOneQueue,
                        member._withUnsafeGuaranteedRef({
                            $0.comparesComputedValues
                                && UInt(bitPattern: ObjectIdentifier($0.queue.drainEpoch)) != epochBits
                        })
                    {
                        onOneQueue = false
                    }
                }
            } else if SettledMark.bit(property.serial) == bit {
                sharesBit = true  // another observed property shares the bit
            }
        }
        return onOneQueue && !sharesBit
    }

    /// A computed value of this registry's owner whose dependencies were stale starts
    /// computing (or is made valid): a set may have marked a property settled while they were
    /// (a stale dependency has nothing to invalidate, `Registry.Route.staleHere`), and the set
    /// after this must invalidate again. Called after the stale bit is cleared and before the
    /// computation reads anything; lock-free: two loads inside a drain (an odd epoch), one
    /// read-modify-write outside one.
    ///
    /// Why that is enough (threads):
    /// - A mark counts a stale dependency only if the scan's read-modify-write of its flags
    ///   (`isStillStale`) saw the bit, so before the clear (`clearStale`, a read-modify-write of
    ///   the same word, made under the state's lock, which also ordered the bit's setting): the
    ///   clear synchronizes with the scan, and this load of `settledEpochBits` sees the epoch
    ///   object, which is stored before any scan that can mark.
    /// - Even epoch: the add moves it past the marks' epoch. A further set's compare-and-swap
    ///   either comes before the add in the epoch's modification order (it succeeded and
    ///   skipped; the add reads from it, so the computation, which reads after the add, sees the
    ///   set's store) or after it (it fails; the set takes the lock, and its read-modify-write of
    ///   the flags, ordered after the clear through the add, finds the bit clear: it
    ///   invalidates).
    /// - Odd epoch: a drain runs; every mark was made at an even epoch before its start, so no
    ///   compare-and-swap succeeds on it any more, and one that succeeded before the start is in
    ///   the release sequence the drain's read-modify-write continues: this acquiring load
    ///   (which reads that or a later value) sees the set's store. A mark made after the drain
    ///   needs the bit set again, by an invalidation after this computation began.
    /// - The add only ever moves the epoch by two, keeping its parity, so drains are not
    ///   confused; a spurious move costs marks of other registries on the queue one more scan.
    func breakSettledMarks() {
        let epochBits = settledEpochBits.load(ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: epochBits) else { return }  // never marked
        Unmanaged<DrainEpoch>.fromOpaque(pointer)._withUnsafeGuaranteedRef { epoch in
            if epoch.value.load(ordering: .sequentiallyConsistent) & 1 == 0 {
                epoch.value.wrappingAdd(2, ordering: .sequentiallyConsistent)
            }
        }
    }

    /// Members changed: no property is settled any more. Under the lock. Sequentially consistent
    /// (see `skipsSettledSet`); stored only when a mark is there.
    @inline(__always)
    func clearSettled(_ state: inout RegistryState) {
        guard settledMark.load(ordering: .relaxed) != 0 else { return }
        state.settledChecked = 0
        settledMark.store(0, ordering: .sequentiallyConsistent)
    }
}
