import Synchronization

/// One element followed by object-following tokens (`items.4`), as a tiny observable object of
/// its own.
///
/// Its tokens attach their leaf edge here, not on the array: the array's registry then holds
/// one entry for all followers together, so a thousand followed elements don't make every
/// append scan a thousand registry entries. When the element leaves, the array marks the cell
/// left and notifies it, which fires exactly the tokens that follow that element.
final class FollowCell: ObservableModelBase, @unchecked Sendable {  // immutable, or atomic, or weak
    let serial = makeCollectionSerial()
    let objectID: ObjectIdentifier
    let arrayID: ObjectIdentifier
    let left = Atomic<Bool>(false)
    /// Set when the array deinitializes: `arrayID` may then name another array at its address.
    let arrayIsGone = Atomic<Bool>(false)
    private weak var object: AnyObject?
    /// Made for an index that held no object (`departed(arrayID:)`).
    private let isDeparted: Bool

    init(object: AnyObject, arrayID: ObjectIdentifier, isDeparted: Bool = false) {
        self.object = object
        self.isDeparted = isDeparted
        objectID = ObjectIdentifier(object)
        self.arrayID = arrayID
        super.init()
    }

    /// A cell for an index that held no object: its object has left already, so the path
    /// through it is unreachable and its token's first delivery is its last.
    static func departed(arrayID: ObjectIdentifier) -> FollowCell {
        let cell = FollowCell(object: DepartedElement(), arrayID: arrayID, isDeparted: true)
        cell.left.store(true, ordering: .releasing)
        return cell
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
    ///
    /// When the path reaches another array (the property holding the array was replaced), the
    /// first step looks for the followed object there and goes on through that array's cell
    /// for it; where the object is not an element, the rest of the path is unreachable.
    func steps(followersSerial: UInt64) -> [PathStep] {
        let toCell = TypedKey(keyPath: \FollowCell.cellSelf) { [self] object, _ in
            if ObjectIdentifier(object) == arrayID, !arrayIsGone.load(ordering: .acquiring) {
                // A cell made departed still resolves (to its element, nil), so that its token
                // starts, delivers once and ends.
                guard isDeparted || !left.load(ordering: .acquiring) else { return nil }
                object.recordCollectionAccess(serial: followersSerial, valueType: FollowCell.self)
                return self
            }
            guard let array = object as? any FollowCellProviding, let followed = followedObject,
                let cell = array.followCell(for: followed)
            else { return nil }
            object.recordCollectionAccess(serial: array.followersSerial, valueType: FollowCell.self)
            return cell
        }
        return [
            .key(toCell), .key(TypedKey(keyPath: \FollowCell.element) { cell, _ in (cell as? FollowCell)?.element }),
        ]
    }

    /// Ends every token that follows the element, right after the delivery its departure
    /// queued: object-following tokens fire once, then end — string-path ones too.
    ///
    /// Tells the departure, then ends them. An `.immediate` token has been called already. A
    /// queued one ends by a notice queued behind its delivery; in the rare case that its
    /// delivery was deferred to the next tick (it had fired in the drain that made the element
    /// leave), the notice finds it still pending and leaves it alone rather than lose that
    /// callback — it then stays valid, with the rest of its path unreachable.
    func departAndEndFollowers() {
        // Collected first: telling a path token that runs on past the element re-walks its
        // path, which detaches it from this cell.
        let followers = existingRegistry?.withLock { state -> [Subscription] in
            var followers: [Subscription] = []
            for index in state.properties.indices where state.properties[index].serial == serial {
                // Retained under the registry lock, as the registry itself does: a member can't
                // finish deinitializing while it is still in the set.
                state.properties[index].members.forEachUnretained { member, _ in
                    followers.append(member.takeUnretainedValue())
                }
            }
            return followers
        }
        collectionDidChange(serial: serial) { () }
        for follower in followers ?? [] {
            if follower.isImmediate {
                follower.end()
            } else {
                follower.queue.enqueueNotice {
                    if !follower.isStillPending() { follower.end() }
                }
            }
        }
    }

    /// Names the first step's key path (its value type is what the step reports).
    var cellSelf: FollowCell { self }
}

/// An array whose elements object-following path components can follow (``ObservedArray``).
protocol FollowCellProviding: ObservableModelBase {
    /// The serial of the edge from the array to its follow cells (it never fires).
    var followersSerial: UInt64 { get }
    func followCell(for object: AnyObject) -> FollowCell?
}

/// What a departed cell was made for (nothing: it is released at once).
private final class DepartedElement {}
