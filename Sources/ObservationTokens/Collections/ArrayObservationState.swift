/// The observation bookkeeping of one ``ObservedArray``, under its lock: serials for the
/// indexes and followed elements that tokens watch, and the change logs of change-list tokens.
///
/// Only mutations of an array that has tokens look at it; an unobserved array never does.
struct ArrayObservationState {
    /// Index-following tokens' serials, one per observed index, created on first use and
    /// kept (a later token on the same index reuses it).
    var indexSerials: [Int: UInt64] = [:]
    /// Elements followed by object-following tokens; a record leaves when its element does.
    var followed: [ObjectIdentifier: FollowCell] = [:]
    var logs: [WeakChangeLog<ArrayChangeLog>] = []

    mutating func serial(forIndex index: Int) -> UInt64 {
        if let serial = indexSerials[index] { return serial }
        let serial = makeCollectionSerial()
        indexSerials[index] = serial
        return serial
    }

    mutating func cell(following object: AnyObject, arrayID: ObjectIdentifier) -> FollowCell {
        if let cell = followed[ObjectIdentifier(object)] { return cell }
        let cell = FollowCell(object: object, arrayID: arrayID)
        followed[ObjectIdentifier(object)] = cell
        return cell
    }
}

/// Locked ``ArrayObservationState``.
final class ArrayObservation: Locked<ArrayObservationState>, @unchecked Sendable {  // see Locked
    init() { super.init(state: ArrayObservationState()) }
}
