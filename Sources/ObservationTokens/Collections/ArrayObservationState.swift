import Synchronization

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
    var logs: [ChangeLogBox<ArrayChangeLog>] = []
    /// Indexes watched by `.element(at:)`, created on first use and kept.
    var indexCells: [Int: IndexCell] = [:]

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

/// Locked ``ArrayObservationState``, the array's synthetic serials, and how a change is told
/// to the tokens.
///
/// Not generic, so the work of a mutation runs as compiled code, without the type metadata
/// lookups that unspecialized generic code (the array's methods, called from another module)
/// makes at every step.
final class ArrayObservation: Locked<ArrayObservationState>, ChangeLogHolder, @unchecked Sendable {  // see Locked
    let countSerial = makeCollectionSerial()
    let contentsSerial = makeCollectionSerial()
    let followersSerial = makeCollectionSerial()
    let indexersSerial = makeCollectionSerial()
    /// Whether a token or tracking closure has ever resolved `count` on this array: until then
    /// a mutation doesn't notify the count (which saves a registry lookup per append). It
    /// never goes back to false, so it can't miss a token that resolved it earlier.
    let countWasObserved = Atomic<Bool>(false)

    init() { super.init(state: ArrayObservationState()) }

    deinit {
        // The array is gone: its address may be reused by another array, which its cells
        // must not take for it (`FollowCell.steps`).
        for cell in state.followed.values { cell.arrayIsGone.store(true, ordering: .releasing) }
    }

    func addLog() -> ChangeLogBox<ArrayChangeLog> {
        let log = ChangeLogBox<ArrayChangeLog>()
        withLock { $0.logs.append(log) }
        return log
    }

    func removeLog(_ log: AnyObject) {
        let removed = withLock { state in state.logs.firstIndex { $0 === log }.map { state.logs.remove(at: $0) } }
        withExtendedLifetime(removed) {}  // released outside the lock
    }

    /// Tells the tokens on `owner` that `range` (in the array before, which had `countBefore`
    /// elements) was replaced by `insertedCount` elements. `changedRuns`: for a change in
    /// place, the indexes whose element really changed; nil when later elements shifted.
    func tell(
        _ owner: ObservableModelBase, range: Range<Int>, insertedCount: Int, countBefore: Int, countAfter: Int,
        changedRuns: [Range<Int>]?, departed: [FollowCell], oldElement: (Int) -> Any, oldContents: () -> Any
    ) {
        let shifted = range.lowerBound..<Swift.max(countBefore, countAfter)
        func isAffected(_ index: Int) -> Bool {
            changedRuns.map { $0.contains { $0.contains(index) } } ?? shifted.contains(index)
        }
        // Optional arrays: the common case (no watched index) creates and releases nothing.
        let (indexSerials, cells) = withLock { state -> ([(index: Int, serial: UInt64)]?, [IndexCell]?) in
            var indexSerials: [(index: Int, serial: UInt64)]?
            if !state.indexSerials.isEmpty {
                indexSerials = state.indexSerials.filter { isAffected($0.key) }.map { ($0.key, $0.value) }
            }
            var cells: [IndexCell]?
            if !state.indexCells.isEmpty {
                cells = state.indexCells.filter { isAffected($0.key) }.map(\.value)
            }
            // Change logs are written under this lock (theirs nests inside; deliveries take only
            // theirs), so a mutation allocates nothing for them.
            if !state.logs.isEmpty {
                for box in state.logs {
                    box.withLock { log in
                        if let changedRuns {
                            for run in changedRuns {
                                log.record(replacing: run, with: run.count, countBefore: countBefore)
                            }
                        } else {
                            log.record(replacing: range, with: insertedCount, countBefore: countBefore)
                        }
                    }
                }
            }
            return (indexSerials, cells)
        }
        owner.collectionDidChange(serial: contentsSerial, oldValue: oldContents)
        if countBefore != countAfter, countWasObserved.load(ordering: .acquiring) {
            owner.collectionDidChange(serial: countSerial) { countBefore }
        }
        if let indexSerials {
            for (index, serial) in indexSerials { owner.collectionDidChange(serial: serial) { oldElement(index) } }
        }
        if let cells {
            // The old value's closure captures the index, not the cell (one retain fewer each).
            for cell in cells {
                let index = cell.index
                cell.collectionDidChange(serial: cell.serial) { oldElement(index) }
            }
        }
        for cell in departed { cell.departAndEndFollowers() }
    }
}
