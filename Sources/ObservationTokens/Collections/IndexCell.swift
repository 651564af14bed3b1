/// One index watched by index-following tokens (`observeElement(at:)`), as a tiny observable
/// object of its own, like ``FollowCell``.
///
/// Its tokens attach their leaf edge here: the array's registry holds one entry for all of
/// them, and an insertion at the front of an array with a thousand watched indexes notifies a
/// thousand one-entry registries — O(tokens) — instead of scanning a thousand-entry registry a
/// thousand times.
final class IndexCell: ObservableModel, @unchecked Sendable {  // immutable after init
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
