/// What changed in an ``ObservedArray`` since a token's last delivery, in the shape a table
/// or collection view needs for an animated batch update.
///
/// Indexes follow UIKit's batch-update convention: ``removed`` and ``replaced`` are indexes
/// in the array as it was at the last delivery, ``inserted`` are indexes in the array as it is
/// now. Every change made between two deliveries is folded in: an element inserted and then
/// removed in the same tick appears nowhere; an element inserted and then replaced is just
/// inserted.
///
/// ```swift
/// let token = list.items.observe(.mutations) { items, changes in
///     tableView.performBatchUpdates {
///         tableView.deleteRows(at: changes.removed.indexPaths, with: .automatic)
///         tableView.insertRows(at: changes.inserted.indexPaths, with: .automatic)
///         tableView.reloadRows(at: changes.replaced.indexPaths, with: .automatic)
///     }
/// }
/// ```
public struct ArrayChanges: Hashable, Sendable, CustomStringConvertible {
    /// Indexes, before the update, of the elements that are gone.
    public var removed: [Int]
    /// Indexes, after the update, of the elements that are new.
    public var inserted: [Int]
    /// Indexes, before the update, of the elements that were replaced in place (assigned
    /// through the subscript, or reordered by a sort or a move) and are still there.
    public var replaced: [Int]

    /// Creates a change list; the library makes these, tests may too.
    public init(removed: [Int] = [], inserted: [Int] = [], replaced: [Int] = []) {
        self.removed = removed
        self.inserted = inserted
        self.replaced = replaced
    }

    /// Whether nothing changed (an `.initial` delivery, `fire()`, or changes that cancelled out).
    public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && replaced.isEmpty }

    /// The three lists, for logs and test failures.
    public var description: String {
        "ArrayChanges(removed: \(removed), inserted: \(inserted), replaced: \(replaced))"
    }
}

/// One token's record of the changes to an array since its last delivery.
///
/// The array as it is now is described as a list of runs over the array as it was at the last
/// delivery: runs of untouched old elements, of old elements replaced in place, and of new
/// elements. A change edits the runs it covers, so recording costs O(runs), not O(elements):
/// a thousand appends in one tick leave two runs.
struct ArrayChangeLog {
    enum Run: Equatable {
        case kept(Range<Int>)
        case replaced(Range<Int>)
        case inserted(Int)

        var length: Int {
            switch self {
            case .kept(let range), .replaced(let range): range.count
            case .inserted(let count): count
            }
        }

        /// The first `count` elements of the run, and the rest.
        func split(at count: Int) -> (Run, Run) {
            switch self {
            case .kept(let range):
                (.kept(range.lowerBound..<range.lowerBound + count), .kept(range.lowerBound + count..<range.upperBound))
            case .replaced(let range):
                (
                    .replaced(range.lowerBound..<range.lowerBound + count),
                    .replaced(range.lowerBound + count..<range.upperBound)
                )
            case .inserted(let total):
                (.inserted(count), .inserted(total - count))
            }
        }

        /// The run that `self` followed by `next` make, if they merge.
        func merged(with next: Run) -> Run? {
            switch (self, next) {
            case (.kept(let a), .kept(let b)) where a.upperBound == b.lowerBound: .kept(a.lowerBound..<b.upperBound)
            case (.replaced(let a), .replaced(let b)) where a.upperBound == b.lowerBound:
                .replaced(a.lowerBound..<b.upperBound)
            case (.inserted(let a), .inserted(let b)): .inserted(a + b)
            default: nil
            }
        }
    }

    /// nil: nothing changed since the last delivery.
    private var runs: [Run]?
    private var oldCount = 0

    /// Records that `range` (indexes in the array before this change, whose count was
    /// `count`) was replaced by `newCount` elements. In place (`newCount == range.count`), the
    /// elements count as replaced, not as removed and inserted.
    mutating func record(replacing range: Range<Int>, with newCount: Int, countBefore count: Int) {
        if runs == nil {
            oldCount = count
            runs = count == 0 ? [] : [.kept(0..<count)]
        }
        guard !range.isEmpty || newCount > 0 else { return }
        if range.isEmpty, range.lowerBound == count {
            // Appending, the most common change: grow or add the last run, in place.
            if let last = runs!.last, case .inserted(let inserted) = last {
                runs![runs!.count - 1] = .inserted(inserted + newCount)
            } else {
                runs!.append(.inserted(newCount))
            }
            return
        }
        var current = runs!
        // Cut the runs at the range's ends, so it covers whole runs `first..<last`.
        let first = Self.cut(&current, at: range.lowerBound)
        let last = Self.cut(&current, at: range.upperBound)
        var replacement: [Run] = []
        if newCount == range.count {
            for run in current[first..<last] {
                if case .kept(let old) = run { replacement.append(.replaced(old)) } else { replacement.append(run) }
            }
        } else if newCount > 0 {
            replacement.append(.inserted(newCount))
        }
        current.replaceSubrange(first..<last, with: replacement)
        runs = Self.merged(current)
    }

    /// Splits the run containing `position` (an index in the current array) so that a run
    /// starts there; returns that run's index.
    private static func cut(_ runs: inout [Run], at position: Int) -> Int {
        var start = 0
        for index in runs.indices {
            let length = runs[index].length
            if position == start { return index }
            if position < start + length {
                let (head, tail) = runs[index].split(at: position - start)
                runs[index] = head
                runs.insert(tail, at: index + 1)
                return index + 1
            }
            start += length
        }
        return runs.count
    }

    private static func merged(_ runs: [Run]) -> [Run] {
        var result: [Run] = []
        result.reserveCapacity(runs.count)
        for run in runs where run.length > 0 {
            if let last = result.last, let merged = last.merged(with: run) {
                result[result.count - 1] = merged
            } else {
                result.append(run)
            }
        }
        return result
    }

    /// The changes since the last delivery, forgetting them.
    mutating func take() -> ArrayChanges {
        guard let runs else { return ArrayChanges() }
        defer { self.runs = nil }
        var changes = ArrayChanges()
        // Runs never change order (moves are recorded as replacements in place), so the old
        // indexes they cover increase along the list, and the gaps between them were removed.
        var nextOld = 0
        var position = 0
        for run in runs {
            switch run {
            case .kept(let old), .replaced(let old):
                changes.removed.append(contentsOf: nextOld..<old.lowerBound)
                nextOld = old.upperBound
                if case .replaced = run { changes.replaced.append(contentsOf: old) }
            case .inserted(let count):
                changes.inserted.append(contentsOf: position..<position + count)
            }
            position += run.length
        }
        changes.removed.append(contentsOf: nextOld..<oldCount)
        return changes
    }
}
