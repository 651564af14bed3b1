/// One key of an ``ObservedDictionary`` (or member of an ``ObservedSet``) watched by
/// `observe(key:)` / `observe(member:)` or a string path (`settings.theme`, `tags.&2`), as a
/// tiny observable object of its own, like ``IndexCell``: the collection's registry keeps one
/// entry for all of them, so a mutation notifies only the cells of the keys it changed, however
/// many keys are watched.
///
/// A cell lives in its collection's key table while tokens observe it, and no longer: it hears
/// its first observer arrive and its last one leave (`ObservationStateObserving`, through the
/// `@Observed` storage its tokens' leaf is on) and tells the table (see
/// `KeyedObservation.cellObservationChanged`). The table's entry, the cell and the key go with
/// the last token; a later token on the key makes a new cell.
final class KeyCell<Key: Hashable>: ObservableModelBase, ObservationStateObserving, @unchecked Sendable {
    // Immutable after init, apart from the storage below, which is never set.

    /// Never set: its storage's serial is what a change of the key notifies, and its name is
    /// what the observation-state hook reports.
    @Observed private var presence = 0
    let key: Key
    let ownerID: ObjectIdentifier
    /// Reads the key's value (or membership) in the collection, which it holds weakly.
    private let read: () -> Any?
    /// The collection's `KeyedObservation<Key>`, held without keeping it alive.
    private let observation: WeakReference

    init(key: Key, ownerID: ObjectIdentifier, observation: KeyedObservation<Key>, read: @escaping () -> Any?) {
        self.key = key
        self.ownerID = ownerID
        self.observation = WeakReference(observation)
        self.read = read
        super.init()
    }

    /// The serial a change of the key notifies on this cell: its tokens' leaf.
    var serial: UInt64 { _presence.serial }

    /// Whether a token's edge is on the cell now (an atomic load; changed under the cell's
    /// registry lock, before the observation-state hook runs).
    var isObserved: Bool { observedPropertyCount != 0 }

    /// The key's value now; the tokens' leaf.
    var value: Any? {
        if isCapturingAccesses { recordCollectionAccess(serial: serial, valueType: Any?.self) }
        return read()
    }

    /// Names the first step's key path.
    var cellSelf: KeyCell { self }

    /// Called with no lock held when the first token arrives or the last one leaves.
    func observationStateDidChange(forProperty property: String, isObserved: Bool) {
        observation.load(as: KeyedObservation<Key>.self)?.cellObservationChanged(self, isObserved: isObserved)
    }

    /// The path steps of a key token: from the collection to this cell (an edge shared by all
    /// key tokens, on `keyersSerial`, that never fires), then to the value. With `reading`
    /// false the value step doesn't read the collection (see `IndexCell`).
    func steps(keyersSerial: UInt64, reading: Bool) -> [PathStep] {
        let toCell = TypedKey(keyPath: \KeyCell.cellSelf) { [self] object, _ in
            guard ObjectIdentifier(object) == ownerID else { return nil }
            object.recordCollectionAccess(serial: keyersSerial, valueType: KeyCell.self)
            return self
        }
        return [.key(toCell), .key(Self.valueKey(reading: reading))]
    }

    /// The step from a cell to its value: a typed key that reports the access without reading
    /// the collection, or (`reading`) one that reads the value.
    static func valueKey(reading: Bool) -> TypedKey {
        reading
            ? TypedKey(keyPath: \KeyCell.value) { cell, _ in (cell as? KeyCell)?.value ?? nil }
            : TypedKey(keyPath: \KeyCell.value) { cell, _ in
                guard let cell = cell as? KeyCell else { return nil }
                cell.recordCollectionAccess(serial: cell.serial, valueType: Any?.self)
                return ()
            }
    }
}

/// A key cell of any key type, for descriptions.
protocol AnyKeyCell: ObservableModelBase {
    /// The key as a path names it.
    var keyLabel: String { get }
}

extension KeyCell: AnyKeyCell {
    /// Strings and integers as they are; other keys are user types whose description is user
    /// code, which descriptions never run.
    var keyLabel: String {
        switch key {
        case let string as String: string
        case let integer as any BinaryInteger: "\(integer)"
        default: "<key>"
        }
    }
}

/// A collection whose keys (or members) string paths can name through cells.
protocol KeyCellProviding: ObservableModelBase {
    associatedtype CellKey: Hashable
    /// The serial of the edge from the collection to its key cells (it never fires).
    var keyersSerial: UInt64 { get }
    /// The cell for `key`, made if there is none.
    func keyCell(for key: CellKey) -> KeyCell<CellKey>
}

extension KeyCellProviding {
    /// The two steps of a string path's key or member component (`settings.theme`,
    /// `tags.&2`): to the cell for `key` of whatever collection of this type the path reaches
    /// when it is walked (after the collection is replaced, the new one's), then to the value
    /// (a dictionary's value, or a set's membership). The token's leaf is on the cell.
    static func keyPathSteps(for key: CellKey) -> [PathStep] {
        let handedOut = HandedOutCells()
        let toCell = TypedKey(keyPath: \KeyCell<CellKey>.cellSelf) { object, _ in
            guard let collection = object as? Self else { return nil }
            object.recordCollectionAccess(serial: collection.keyersSerial, valueType: KeyCell<CellKey>.self)
            let cell = collection.keyCell(for: key)
            handedOut.keep(cell, of: collection)
            return cell
        }
        // The value is read (as `Any`, nil boxed) so a path can run on through a model value.
        let toValue = TypedKey(keyPath: \KeyCell<CellKey>.value) { cell, _ in
            guard let cell = cell as? KeyCell<CellKey> else { return nil }
            return cell.value as Any
        }
        return [.key(toCell), .key(toValue)]
    }
}

/// The cells a string path's key step handed out, the last one per collection: between the
/// walk that finds a cell and the attaching of the token's edge on it, nothing else may hold
/// the cell (the key table drops a cell no token is on yet), and a cell that died in that
/// window would take the edge with it. Once the edge is on it, the table holds it again (see
/// `KeyedObservation.cellObservationChanged`). Entries of collections that are gone are
/// dropped as new ones come.
final class HandedOutCells: Locked<[ObjectIdentifier: HandedOutCells.Entry]>, @unchecked Sendable {  // see Locked
    struct Entry {
        let collection: WeakReference
        let cell: AnyObject
    }

    init() { super.init(state: [:]) }

    func keep(_ cell: AnyObject, of collection: ObservableModelBase) {
        let entry = Entry(collection: WeakReference(collection), cell: cell)
        let (replaced, all) = withLock { cells in
            (cells.updateValue(entry, forKey: ObjectIdentifier(collection)), cells.count > 4 ? cells : nil)
        }
        withExtendedLifetime(replaced) {}  // released outside the lock (a cell holds a user key)
        guard let all else { return }
        // Loads (and their releases) outside the lock: a release may run a deinit.
        let gone = all.filter { $0.value.collection.load() == nil }
        guard !gone.isEmpty else { return }
        let removed = withLock { cells in
            gone.compactMap { id, old in
                cells[id].map { $0.cell === old.cell } == true ? cells.removeValue(forKey: id) : nil
            }
        }
        withExtendedLifetime(removed) {}
    }
}
