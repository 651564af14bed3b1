/// The observation bookkeeping of an ``ObservedDictionary`` (keys) or ``ObservedSet``
/// (members), under its lock: a serial per observed key, and the change-list tokens' logs.
struct KeyedObservationState<Key: Hashable> {
    /// Serials of observed keys, created on first use (also before the key exists) and kept.
    var keySerials: [Key: UInt64] = [:]
    var logs: [ChangeLogBox<KeyedChangeLog<Key>>] = []
    /// Keys watched by `observe(key:)` / `observe(member:)`, created on first use and kept.
    var keyCells: [Key: KeyCell] = [:]

    mutating func serial(forKey key: Key) -> UInt64 {
        if let serial = keySerials[key] { return serial }
        let serial = makeCollectionSerial()
        keySerials[key] = serial
        return serial
    }
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
        withLock { state in
            if let cell = state.keyCells[key] { return cell }
            let cell = KeyCell(ownerID: ownerID, read: read)
            state.keyCells[key] = cell
            return cell
        }
    }

    /// Tells the tokens of `owner` about `changes` (keys that really changed, each once).
    /// Called after the mutation, with no lock held.
    func tell(
        _ owner: ObservableModel, changes: [KeyChange<Key>], countBefore: Int, countAfter: Int,
        oldContents: () -> Any
    ) {
        guard !changes.isEmpty else { return }
        let (serials, logs) = withLock {
            state -> ([(serial: UInt64, oldValue: Any, cell: KeyCell?)], [ChangeLogBox<KeyedChangeLog<Key>>]) in
            var serials: [(serial: UInt64, oldValue: Any, cell: KeyCell?)] = []
            if !state.keySerials.isEmpty {
                for change in changes {
                    if let serial = state.keySerials[change.key] { serials.append((serial, change.oldValue, nil)) }
                }
            }
            if !state.keyCells.isEmpty {
                for change in changes {
                    if let cell = state.keyCells[change.key] { serials.append((cell.serial, change.oldValue, cell)) }
                }
            }
            return (serials, state.logs)
        }
        for log in logs {
            log.withLock { log in
                for change in changes {
                    log.record(change.key, wasPresent: change.wasPresent, isPresent: change.isPresent)
                }
            }
        }
        owner.collectionDidChange(serial: contentsSerial, oldValue: oldContents)
        if countBefore != countAfter { owner.collectionDidChange(serial: countSerial) { countBefore } }
        for (serial, oldValue, cell) in serials {
            (cell ?? owner).collectionDidChange(serial: serial) { oldValue }
        }
    }

    func serial(forKey key: Key) -> UInt64 {
        withLock { $0.serial(forKey: key) }
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

/// One token's record of the keys (or members) changed since its last delivery: for each,
/// whether it was present then and whether it is now.
struct KeyedChangeLog<Key: Hashable>: CollectionChangeLog {
    private var touched: [Key: (wasPresent: Bool, isPresent: Bool)] = [:]

    init() {}

    mutating func record(_ key: Key, wasPresent: Bool, isPresent: Bool) {
        if let entry = touched[key] {
            touched[key] = (entry.wasPresent, isPresent)
        } else {
            touched[key] = (wasPresent, isPresent)
        }
    }

    mutating func take() -> DictionaryChanges<Key> {
        defer { touched = [:] }
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
