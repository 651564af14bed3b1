import Synchronization

/// One element followed by object-following tokens (`items.4`), as a tiny observable object of
/// its own.
///
/// Its tokens attach their leaf edge here, not on the array: the array's registry then holds
/// one entry for all followers together, so a thousand followed elements don't make every
/// append scan a thousand registry entries. When the element leaves, the array marks the cell
/// left and notifies it, which fires exactly the tokens that follow that element.
final class FollowCell: ObservableModel, @unchecked Sendable {  // immutable, or atomic, or weak
    let serial = makeCollectionSerial()
    let objectID: ObjectIdentifier
    let arrayID: ObjectIdentifier
    let left = Atomic<Bool>(false)
    private weak var object: AnyObject?

    init(object: AnyObject, arrayID: ObjectIdentifier) {
        self.object = object
        objectID = ObjectIdentifier(object)
        self.arrayID = arrayID
        super.init()
    }

    /// The followed element until it leaves; its tokens' leaf.
    var element: AnyObject? {
        if isCapturingAccesses { recordCollectionAccess(serial: serial, valueType: AnyObject?.self) }
        return left.load(ordering: .acquiring) ? nil : object
    }

    /// The element as the token knows it (also after it left), held weakly.
    var followedObject: AnyObject? { object }

    /// The two path steps of an object-following token: from the array to this cell (an edge
    /// shared by all followers, on `followersSerial`, that never fires), then to the element.
    func steps(followersSerial: UInt64) -> [PathStep] {
        let toCell = TypedKey(keyPath: \FollowCell.cellSelf) { [self] object, _ in
            guard ObjectIdentifier(object) == arrayID, !left.load(ordering: .acquiring) else { return nil }
            object.recordCollectionAccess(serial: followersSerial, valueType: FollowCell.self)
            return self
        }
        return [
            .key(toCell), .key(TypedKey(keyPath: \FollowCell.element) { cell, _ in (cell as? FollowCell)?.element }),
        ]
    }

    /// Names the first step's key path (its value type is what the step reports).
    var cellSelf: FollowCell { self }
}
