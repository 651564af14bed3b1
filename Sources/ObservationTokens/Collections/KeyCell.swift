/// One key of an ``ObservedDictionary`` (or member of an ``ObservedSet``) watched by
/// `observe(key:)` / `observe(member:)`, as a tiny observable object of its own, like
/// ``IndexCell``: the collection's registry keeps one entry for all of them, so a mutation
/// notifies only the cells of the keys it changed, however many keys are watched.
final class KeyCell: ObservableModelBase, @unchecked Sendable {  // immutable after init
    let serial = makeCollectionSerial()
    let ownerID: ObjectIdentifier
    /// Reads the key's value (or membership) in the collection, held weakly by the closure.
    private let read: () -> Any?

    init(ownerID: ObjectIdentifier, read: @escaping () -> Any?) {
        self.ownerID = ownerID
        self.read = read
        super.init()
    }

    /// The key's value now; the tokens' leaf.
    var value: Any? {
        if isCapturingAccesses { recordCollectionAccess(serial: serial, valueType: Any?.self) }
        return read()
    }

    /// Names the first step's key path.
    var cellSelf: KeyCell { self }

    /// The path steps of a key token: from the collection to this cell (an edge shared by all
    /// key tokens, on `keyersSerial`, that never fires), then to the value. With `reading`
    /// false the value step doesn't read the collection (see `IndexCell`).
    func steps(keyersSerial: UInt64, reading: Bool) -> [PathStep] {
        let toCell = TypedKey(keyPath: \KeyCell.cellSelf) { [self] object, _ in
            guard ObjectIdentifier(object) == ownerID else { return nil }
            object.recordCollectionAccess(serial: keyersSerial, valueType: KeyCell.self)
            return self
        }
        let toValue =
            reading
            ? TypedKey(keyPath: \KeyCell.value) { cell, _ in (cell as? KeyCell)?.value ?? nil }
            : .synthetic(\KeyCell.value, serial: serial, valueType: Any?.self)
        return [.key(toCell), .key(toValue)]
    }
}
