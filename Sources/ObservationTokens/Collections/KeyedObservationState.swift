import Synchronization

/// The observation bookkeeping of an ``ObservedDictionary`` (keys) or ``ObservedSet``
/// (members), under its lock: the cells of watched keys, and the change-list tokens' logs.
///
/// Keys are the user's: their `hash(into:)` and `==` are user code, which never runs under the
/// lock. Readers copy the key table under the lock (a retain) and look keys up outside it; a
/// writer changes a copy outside the lock and installs it under the lock if no other writer
/// came first (`version`), else tries again.
///
/// A cell is in the table while a token observes it. It leaves when its last token does
/// (`cellObservationChanged`), and the table is swept of cells no token ever attached to
/// (made by a path walk that didn't attach, such as a description) when it has doubled. A
/// cell that a token attaches to after it left (the token found it just before) puts itself
/// back when its first token arrives, so leaving is safe at any moment.
struct KeyedObservationState<Key: Hashable> {
    var logs: [ChangeLogBox<KeyedChangeLog<Key>>] = []
    /// The cells of watched keys (`observe(key:)`, `observe(member:)`, string paths).
    var cells: [Key: KeyCell<Key>] = [:]
    /// Observed cells whose key has another cell in `cells` (a cell that came back while a new
    /// one had been made for its key): notified too, until their last token leaves. Rare.
    var strays: [KeyCell<Key>] = []
    /// Counts installs of a new `cells` table.
    var version = 0
    /// The table size at which adding a cell sweeps out cells with no token.
    var sweepAt = 16
}

/// One key whose value (or membership) really changed in a mutation.
struct KeyChange<Key: Hashable> {
    let key: Key
    /// The value before (`Value?` for dictionaries, `Bool` membership for sets), for change tokens.
    let oldValue: Any
    let wasPresent: Bool
    let isPresent: Bool
}

/// The serials that typed key paths (`\.[key]`, `\.[contains: member]`) and tracked reads of a
/// key observe on the collection itself: a function of the key's hash, kept in no table, so the
/// collection holds nothing for them and nothing needs removing when their tokens end. The top
/// bit keeps them apart from counted serials (numbered from 1; see `makeCollectionSerial`).
enum KeySerial {
    static let bit: UInt64 = 1 << 63

    static func of(hash: Int) -> UInt64 {
        bit | (UInt64(bitPattern: Int64(hash)) & ~bit)
    }

    /// Whether `serial` is a key serial: a key path that resolved to one is not cached (the
    /// cache would keep its key alive).
    @inline(__always)
    static func contains(_ serial: UInt64) -> Bool { serial & bit != 0 }
}

/// Locked ``KeyedObservationState``, and how a keyed collection tells its tokens.
final class KeyedObservation<Key: Hashable>: Locked<KeyedObservationState<Key>>, ChangeLogHolder, @unchecked Sendable
{  // see Locked
    let countSerial = makeCollectionSerial()
    /// Fired by every mutation: `*`, change lists, `snapshot`.
    let contentsSerial = makeCollectionSerial()
    /// The edge all key tokens share on the collection (their leaves are on `KeyCell`s).
    let keyersSerial = makeCollectionSerial()
    /// Whether a typed key path or tracked read has resolved a key serial on this collection:
    /// until then a mutation notifies none (which saves hashing the changed keys). Never goes
    /// back to false.
    let keySerialsWereObserved = Atomic<Bool>(false)

    init() { super.init(state: KeyedObservationState()) }

    /// The serial of `key` on the collection itself (see `KeySerial`). Hashes the key: call it
    /// with no lock of the library held.
    func keySerial(for key: Key) -> UInt64 {
        if !keySerialsWereObserved.load(ordering: .relaxed) { keySerialsWereObserved.store(true, ordering: .releasing) }
        return KeySerial.of(hash: key.hashValue)
    }

    /// The cell for `key`, made with `read` if there is none.
    func cell(forKey key: Key, ownerID: ObjectIdentifier, read: @escaping () -> Any?) -> KeyCell<Key> {
        var made: KeyCell<Key>?
        while true {
            let (current, version) = withLock { state in (state.cells, state.version) }
            if let existing = current[key] { return existing }
            let cell = made ?? KeyCell(key: key, ownerID: ownerID, observation: self, read: read)
            made = cell
            var extended = current
            extended[key] = cell
            let installed = withLock { state -> (done: Bool, sweep: Bool) in
                guard state.version == version else { return (false, false) }
                state.cells = extended
                state.version += 1
                return (true, state.cells.count >= state.sweepAt)
            }
            // `current` (the table replaced) is released here, outside the lock: its keys'
            // deinits are user code.
            if installed.done {
                if installed.sweep { sweep() }
                return cell
            }
        }
    }

    /// Removes the cells no token is on, and sets the next sweep at twice what is left.
    private func sweep() {
        while true {
            let (current, version) = withLock { state in (state.cells, state.version) }
            var kept = current
            var removed: [KeyCell<Key>] = []
            for (key, cell) in current where !cell.isObserved {
                kept.removeValue(forKey: key)
                removed.append(cell)
            }
            let installed = withLock { state -> Bool in
                guard state.version == version else { return false }
                // A cell a token attached to meanwhile stays (its hook may have run already).
                guard removed.allSatisfy({ !$0.isObserved }) else { return true }
                state.cells = kept
                state.version += 1
                state.sweepAt = max(16, 2 * kept.count)
                return true
            }
            if installed { return }
        }
    }

    /// A cell's first token arrived (`isObserved`) or its last left. Runs with no lock held
    /// (see `ObservationStateObserving`); decides under the lock from the cell's state then, so
    /// hooks that run late or out of order do no harm.
    func cellObservationChanged(_ cell: KeyCell<Key>, isObserved: Bool) {
        while true {
            let (current, version, isStray) = withLock { state in
                (state.cells, state.version, state.strays.contains { $0 === cell })
            }
            if isStray {
                guard !isObserved else { return }
                let removed = withLock { state -> KeyCell<Key>? in
                    guard !cell.isObserved, let index = state.strays.firstIndex(where: { $0 === cell }) else {
                        return nil
                    }
                    return state.strays.remove(at: index)
                }
                withExtendedLifetime(removed) {}  // released outside the lock
                return
            }
            let existing = current[cell.key]
            var changed = current
            if isObserved {
                if existing === cell { return }
                if existing != nil {
                    // Another cell was made for the key while this one was out of the table.
                    withLock { state in
                        if cell.isObserved, !state.strays.contains(where: { $0 === cell }) { state.strays.append(cell) }
                    }
                    return
                }
                // Back in use after it left (its token found it just before): put it back.
                changed[cell.key] = cell
            } else {
                guard existing === cell else { return }
                changed.removeValue(forKey: cell.key)
            }
            let installed = withLock { state -> Bool in
                guard state.version == version else { return false }
                // The cell's state decides, now, under the lock its hooks take.
                guard cell.isObserved == isObserved else { return true }
                state.cells = changed
                state.version += 1
                return true
            }
            if installed { return }
        }
    }

    /// Cells in the key table, strays included (for tests).
    var cellCount: Int { withLock { $0.cells.count + $0.strays.count } }

    /// Tells the tokens of `owner` about `changes` (keys that really changed, each once).
    /// Called after the mutation, with no lock held.
    func tell(
        _ owner: ObservableModelBase, changes: [KeyChange<Key>], countBefore: Int, countAfter: Int,
        oldContents: () -> Any
    ) {
        guard !changes.isEmpty else { return }
        // The tables are copied under the lock and searched outside it: keys are hashed and
        // compared with no lock held.
        let (cells, strays, logs) = withLock { state in (state.cells, state.strays, state.logs) }
        var notified: [(cell: KeyCell<Key>, oldValue: Any)] = []
        if !cells.isEmpty || !strays.isEmpty {
            for change in changes {
                if let cell = cells[change.key] { notified.append((cell, change.oldValue)) }
                for stray in strays where stray.key == change.key { notified.append((stray, change.oldValue)) }
            }
        }
        let keySerials =
            keySerialsWereObserved.load(ordering: .acquiring)
            ? changes.map { (serial: KeySerial.of(hash: $0.key.hashValue), oldValue: $0.oldValue) } : []
        for log in logs {
            let needsCompacting = log.withLock { log in
                var full = false
                for change in changes {
                    full = log.record(change.key, wasPresent: change.wasPresent, isPresent: change.isPresent) || full
                }
                return full
            }
            if needsCompacting {
                // Taken out, coalesced with no lock held, put back in front. A delivery that
                // takes the log meanwhile gets these one tick later; none is lost.
                let taken = log.withLock { $0.take() }
                let compacted = taken.compacted()
                log.withLock { $0.restore(compacted) }
            }
        }
        owner.collectionDidChange(serial: contentsSerial, oldValue: oldContents)
        if countBefore != countAfter { owner.collectionDidChange(serial: countSerial) { countBefore } }
        for (serial, oldValue) in keySerials { owner.collectionDidChange(serial: serial) { oldValue } }
        for (cell, oldValue) in notified { cell.collectionDidChange(serial: cell.serial) { oldValue } }
    }

    func addLog() -> ChangeLogBox<KeyedChangeLog<Key>> {
        let log = ChangeLogBox<KeyedChangeLog<Key>>()
        withLock { $0.logs.append(log) }
        return log
    }

    func removeLog(_ log: AnyObject) {
        let removed = withLock { state in state.logs.firstIndex { $0 === log }.map { state.logs.remove(at: $0) } }
        withExtendedLifetime(removed) {}  // released outside the lock
    }
}

/// One token's record of the keys (or members) changed since its last delivery, in order, for
/// each whether it was present before and is now. Appended to under the log's lock without
/// hashing; coalesced per key (hashing, user code) when the token's delivery takes it.
///
/// Records of a key that changes many times before a delivery would pile up, so once they pass
/// `compactAt` the writer compacts them outside the lock (`KeyedObservation.tell`): it takes
/// them out, coalesces them, and puts the result back in front of any records added meanwhile.
struct KeyedChangeLog<Key: Hashable>: CollectionChangeLog {
    private var records: [KeyedChangeRecords<Key>.Record] = []
    private(set) var compactAt = 1_024

    init() {}

    /// Appends a record; true when the log should be compacted.
    mutating func record(_ key: Key, wasPresent: Bool, isPresent: Bool) -> Bool {
        records.append(.init(key: key, wasPresent: wasPresent, isPresent: isPresent))
        return records.count >= compactAt
    }

    mutating func take() -> KeyedChangeRecords<Key> {
        defer { records = [] }
        return KeyedChangeRecords(records: records)
    }

    /// Puts compacted records back in front of those added since they were taken.
    mutating func restore(_ compacted: [KeyedChangeRecords<Key>.Record]) {
        records.insert(contentsOf: compacted, at: 0)
        compactAt = max(1_024, 2 * records.count)
    }
}

/// What a keyed change log hands over: its records, to coalesce outside the lock.
struct KeyedChangeRecords<Key: Hashable> {
    struct Record {
        let key: Key
        let wasPresent: Bool
        let isPresent: Bool
    }

    let records: [Record]

    /// One record per key, from whether it was present at its first record to whether it is at
    /// its last. Hashes keys: call with no lock held.
    func compacted() -> [Record] {
        var order: [Key] = []
        var touched: [Key: (wasPresent: Bool, isPresent: Bool)] = [:]
        for record in records {
            if let entry = touched[record.key] {
                touched[record.key] = (entry.wasPresent, record.isPresent)
            } else {
                touched[record.key] = (record.wasPresent, record.isPresent)
                order.append(record.key)
            }
        }
        return order.map { key in
            let entry = touched[key]!
            return Record(key: key, wasPresent: entry.wasPresent, isPresent: entry.isPresent)
        }
    }

    /// Per key, from whether it was present at the first record to whether it is at the last.
    func coalesced() -> DictionaryChanges<Key> {
        var touched: [Key: (wasPresent: Bool, isPresent: Bool)] = [:]
        for record in records {
            if let entry = touched[record.key] {
                touched[record.key] = (entry.wasPresent, record.isPresent)
            } else {
                touched[record.key] = (record.wasPresent, record.isPresent)
            }
        }
        var changes = DictionaryChanges<Key>()
        for (key, entry) in touched {
            switch (entry.wasPresent, entry.isPresent) {
            case (false, true): changes.inserted.insert(key)
            case (true, false): changes.removed.insert(key)
            case (true, true): changes.updated.insert(key)
            case (false, false): break
            }
        }
        return changes
    }
}
