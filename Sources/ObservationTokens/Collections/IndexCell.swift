/// One index watched by index-following tokens (`.element(at:)`), as a tiny observable
/// object of its own, like ``FollowCell``.
///
/// Its tokens attach their leaf edge here: the array's registry holds one entry for all of
/// them, and an insertion at the front of an array with a thousand watched indexes notifies a
/// thousand one-entry registries — O(tokens) — instead of scanning a thousand-entry registry a
/// thousand times.
final class IndexCell: ObservableModelBase, @unchecked Sendable {  // immutable after init
    let serial = makeCollectionSerial()
    let index: Int
    let arrayID: ObjectIdentifier
    /// Reads the element at `index` of the array (held weakly by the closure).
    private let read: (Int) -> Any?

    init(index: Int, arrayID: ObjectIdentifier, read: @escaping (Int) -> Any?) {
        self.index = index
        self.arrayID = arrayID
        self.read = read
        super.init()
    }

    /// The element at the index now (nil beyond the end); the tokens' leaf.
    var element: Any? {
        if isCapturingAccesses { recordCollectionAccess(serial: serial, valueType: Any?.self) }
        return read(index)
    }

    /// Names the first step's key path.
    var cellSelf: IndexCell { self }

    /// The two path steps of an index-following token: from the array to this cell (an edge
    /// shared by all index-following tokens, on `indexersSerial`, that never fires), then to the
    /// element at the index.
    ///
    /// With `reading` false the element step reports its access without reading the array, so
    /// the token can be made while another thread mutates it; `.endpointChanges` needs the
    /// values, and reads.
    func steps(indexersSerial: UInt64, reading: Bool) -> [PathStep] {
        let toCell = TypedKey(keyPath: \IndexCell.cellSelf) { [self] object, _ in
            guard ObjectIdentifier(object) == arrayID else { return nil }
            object.recordCollectionAccess(serial: indexersSerial, valueType: IndexCell.self)
            return self
        }
        let toElement =
            reading
            ? TypedKey(keyPath: \IndexCell.element) { cell, _ in (cell as? IndexCell)?.element ?? nil }
            : .synthetic(\IndexCell.element, serial: serial, valueType: Any?.self)
        return [.key(toCell), .key(toElement)]
    }
}

/// An array whose watched indexes have cells (``ObservedArray``), as string paths see it.
protocol IndexCellProviding: ObservableModelBase {
    /// The serial of the edge from the array to its cells (it never fires).
    var indexersSerial: UInt64 { get }
    func indexCell(_ index: Int) -> IndexCell
}

extension IndexCell {
    /// The two steps of a string path's index component (`items.#4`): to the cell of index 4 of
    /// whatever array the path reaches when it is walked (after `items` is replaced, the new
    /// array's), then to the element there. The token's leaf is on the cell, so an insertion at
    /// the front of an array watched at many indexes costs O(watched indexes), as with
    /// `.element(at:)`.
    static func pathSteps(index: Int) -> [PathStep] {
        let toCell = TypedKey(keyPath: \IndexCell.cellSelf) { object, _ in
            guard let array = object as? any IndexCellProviding else { return nil }
            object.recordCollectionAccess(serial: array.indexersSerial, valueType: IndexCell.self)
            return array.indexCell(index)
        }
        // Beyond the end the element is nil, and the step still resolves (boxed as `Any`): the
        // token keeps its edge on the cell and fires when the array grows to the index.
        let toElement = TypedKey(keyPath: \IndexCell.element) { cell, _ in
            guard let cell = cell as? IndexCell else { return nil }
            return cell.element as Any
        }
        return [.key(toCell), .key(toElement)]
    }
}

extension PathStep {
    /// How a description names a collection cell's step: `#4` for an index cell (`#?` when
    /// no array is there to ask), `(followed object)` for an object-following cell, the key
    /// for a key cell (`?` when no collection is there), the name of a component checked at
    /// run time, and the empty string (nothing) for the step from a cell to its element. Nil
    /// for other keys.
    static func collectionLabel(_ key: TypedKey, on object: ObservableModelBase?) -> String? {
        let keyPath = key.keyPath
        if keyPath == \IndexCell.element || keyPath == \FollowCell.element { return "" }
        if let name = RuntimeComponentLabel.name(of: key) { return name }
        // A key cell: the step to the cell names the key; the step to its value, nothing.
        if type(of: keyPath).valueType is any AnyKeyCell.Type {
            guard let cell = object.flatMap({ key.read($0) }) as? any AnyKeyCell else { return "?" }
            return cell.keyLabel
        }
        if type(of: keyPath).rootType is any AnyKeyCell.Type { return "" }
        if keyPath == \FollowCell.cellSelf { return "(followed object)" }
        guard keyPath == \IndexCell.cellSelf else { return nil }
        guard let cell = object.flatMap({ key.read($0) }) as? IndexCell else { return "#?" }
        return "#\(cell.index)"
    }
}
