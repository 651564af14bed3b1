/// The observation bookkeeping of an ``ObservedDictionary`` (keys) or ``ObservedSet``
/// (members), under its lock: a serial per observed key, and the change-list tokens' logs.
///
/// Keys are the user's: their `hash(into:)` and `==` are user code, which never runs under the
/// lock. The key tables are only ever added to, so readers copy a table under the lock (a
/// retain) and look keys up outside it; a writer adds to a copy outside the lock and installs
/// it under the lock if no other writer came first (`version`), else tries again.
struct KeyedObservationState<Key: Hashable> {
    /// Serials of observed keys, created on first use (also before the key exists) and kept.
    var keySerials: [Key: UInt64] = [:]
    var logs: [ChangeLogBox<KeyedChangeLog<Key>>] = []
    /// Keys watched by `observe(key:)` / `observe(member:)`, created on first use and kept.
    var keyCells: [Key: KeyCell] = [:]
    /// Counts installs of new key tables.
    var version = 0
}

/// One key whose value (or membership) really changed in a mutation.
struct KeyChange<Key: Hashable> {
    let key: Key
    /// The value before (`Value?` for dictionaries, `Bool` membership for sets), for change tokens.
    let oldValue: Any
    let wasPresent: Bool
    let isPresent: Bool
}

/// Locked ``KeyedObservationState``, and how a keyed collection tells its tokens.
final class KeyedObservation<Key: Hashable>: Locked<KeyedObservationState<Key>>, ChangeLogHolder, @unchecked Sendable
{  // see Locked
    let countSerial = makeCollectionSerial()
    /// Fired by every mutation: `*`, change lists, `snapshot`.
    let contentsSerial = makeCollectionSerial()
    /// The edge all key tokens share on the collection (their leaves are on `KeyCell`s).
    let keyersSerial = makeCollectionSerial()

    init() { super.init(state: KeyedObservationState()) }

    /// The cell for `key`, made with `read` the first time.
    func cell(forKey key: Key, ownerID: ObjectIdentifier, read: @escaping () -> Any?) -> KeyCell {
        lookUpOrAdd(key, in: \.keyCells) { KeyCell(ownerID: ownerID, read: read) }
    }

    /// Looks `key` up in one of the key tables, adding `make()` if it is missing; hashes and
    /// compares keys outside the lock (see `KeyedObservationState`).
    private func lookUpOrAdd<Value>(
        _ key: Key, in table: WritableKeyPath<KeyedObservationState<Key>, [Key: Value]>, make: () -> Value
    ) -> Value {
        var made: Value?
        while true {
            let (current, version) = withLock { state in (state[keyPath: table], state.version) }
            if let existing = current[key] { return existing }
            let value = made ?? make()
            made = value
            var extended = current
            extended[key] = value
            let installed = withLock { state -> Bool in
                guard state.version == version else { return false }
                state[keyPath: table] = extended
                state.version += 1
                return true
            }
            // `current` (the table replaced) is released here, outside the lock: its keys'
            // deinits are user code.
            if installed { return value }
        }
    }

    /// Tells the tokens of `owner` about `changes` (keys that really changed, each once).
    /// Called after the mutation, with no lock held.
    func tell(
        _ owner: ObservableModelBase, changes: [KeyChange<Key>], countBefore: Int, countAfter: Int,
        oldContents: () -> Any
    ) {
        guard !changes.isEmpty else { return }
        // The tables are copied under the lock and searched outside it: keys are hashed and
        // compared with no lock held.
        let (keySerials, keyCells, logs) = withLock { state in (state.keySerials, state.keyCells, state.logs) }
        var serials: [(serial: UInt64, oldValue: Any, cell: KeyCell?)] = []
        if !keySerials.isEmpty {
            for change in changes {
                if let serial = keySerials[change.key] { serials.append((serial, change.oldValue, nil)) }
            }
        }
        if !keyCells.isEmpty {
            for change in changes {
                if let cell = keyCells[change.key] { serials.append((cell.serial, change.oldValue, cell)) }
            }
        }
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
        for (serial, oldValue, cell) in serials {
            (cell ?? owner).collectionDidChange(serial: serial) { oldValue }
        }
    }

    func serial(forKey key: Key) -> UInt64 {
        lookUpOrAdd(key, in: \.keySerials) { makeCollectionSerial() }
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
