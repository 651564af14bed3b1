import Synchronization

/// An array whose changes can be observed with tokens: its count, any mutation with a change
/// list, the element at an index, an element as it moves, and a property of every element.
///
/// It is a reference type (an ``ObservableModel``) that behaves like `Array`:
/// `RandomAccessCollection`, `MutableCollection`, `RangeReplaceableCollection`, array
/// literals, `Equatable` and `Hashable` when the elements are. Keep it in an `@Observed`
/// property, and paths run through it like through any model:
///
/// ```swift
/// final class TodoList: ObservableModel {
///     @Observed var items: ObservedArray<TodoItem> = []
/// }
///
/// let list = TodoList()
/// let countToken = list.items.observe(\.count) { items in print(items.count, "items") }
/// let firstToken = list.items.observe(.element(at: 0)) { items in print("first:", items.first?.title ?? "-") }
/// let rowsToken = list.items.observe(.mutations) { items, changes in
///     print("removed", changes.removed, "inserted", changes.inserted, "replaced", changes.replaced)
/// }
/// list.items.append(TodoItem(title: "Write docs"))   // all three fire once, after this tick
/// ```
///
/// What fires what (see `docs/Collections.md` for the full rules):
/// - `\.count`: only when the count changes.
/// - ``ObservationSource/mutations`` (`*`): any mutation that changes an
///   element; the callback gets the indexes removed, inserted and replaced since its last
///   delivery.
/// - ``ObservationSource/element(at:)`` (index-following, `#4`): when the
///   element at that index changes: an insertion or removal before or at it, a replacement
///   at it, the array growing to or shrinking past it.
/// - ``ObservationSource/object(at:)`` (object-following, `4`): the object
///   that is there now, wherever it moves; fires once when it leaves, then the token ends.
/// - `.each(\.x)` (`*.x`): a property of every element.
///
/// Assigning an element that is identical to the one there (`===` for objects, `==` for
/// `Equatable` values) changes nothing and fires nothing, as for properties.
///
/// > Note: Like `@Observed` values, the elements are not synchronized: don't mutate an array on
/// > one thread while another reads or mutates it. Token bookkeeping is thread-safe. A copy
/// > (``snapshot`` or `ObservedArray(other)`) starts with no observers.
///
/// - Complexity: A mutation of an array without tokens costs what the same `Array` mutation
///   costs, plus one relaxed atomic load. With tokens, it adds O(*t*) in the tokens on the
///   array (not in its length), except removing a followed object, which checks in O(*n*)
///   whether another occurrence remains.
public final class ObservedArray<Element>: ObservableModelBase, ModelObserving {
    /// The elements. Not synchronized, like `@Observed` values (see the note above), so the
    /// runtime's exclusivity check is left out.
    @usableFromInline @exclusivity(unchecked)
    var storage: [Element]
    let observation = ArrayObservation()
    var countSerial: UInt64 { observation.countSerial }
    /// Fired by every mutation: `*`, change lists, ``snapshot``.
    var contentsSerial: UInt64 { observation.contentsSerial }
    /// The edge all object-following tokens share on the array (their leaves are on
    /// `FollowCell`s); never fired.
    var followersSerial: UInt64 { observation.followersSerial }
    /// Whether elements are objects that object-following tokens may follow (checked once).
    private let followsObjects = Element.self is AnyObject.Type

    /// Creates an empty array.
    public override init() {
        storage = []
        super.init()
    }

    /// Creates an array with the elements of a sequence. The new array has no observers.
    ///
    /// - Parameter elements: The elements, in order.
    public init(_ elements: some Sequence<Element>) {
        storage = Array(elements)
        super.init()
    }

    /// The elements as a plain `Array`: a value that no longer changes and carries no
    /// observers. Observing `\.snapshot` fires on every mutation.
    public var snapshot: [Element] {
        if isCapturingAccesses { recordCollectionAccess(serial: contentsSerial, valueType: [Element].self) }
        return storage
    }

    /// The number of elements. Observing `\.count` fires only when it changes.
    public var count: Int {
        if isCapturingAccesses {
            observation.countWasObserved.store(true, ordering: .releasing)
            recordCollectionAccess(serial: countSerial, valueType: Int.self)
        }
        return storage.count
    }

    /// The element at `index`, or nil when the array is not that long. Unlike the plain
    /// subscript it never traps, so `\.[ifPresent: 7]` can be observed before the array grows
    /// to 8 elements: that is what ``ObservationSource/element(at:)`` does.
    ///
    /// - Parameter index: Any index, also negative or beyond the end.
    public subscript(ifPresent index: Int) -> Element? {
        if isCapturingAccesses { recordIndexAccess(index, valueType: Element?.self) }
        return storage.indices.contains(index) ? storage[index] : nil
    }

    func recordIndexAccess(_ index: Int, valueType: Any.Type) {
        let serial = observation.withLock { $0.serial(forIndex: index) }
        recordCollectionAccess(serial: serial, valueType: valueType)
    }

    @inline(__always)
    private var hasTokens: Bool { _edgeCount.load(ordering: .relaxed) != 0 }

    // MARK: Mutations

    /// Replaces the elements in `subrange` with `newElements`; every other mutation goes
    /// through here or through its in-place twin.
    ///
    /// - Complexity: O(*n* + *m*) like `Array`, plus O(*t*) in the tokens when observed.
    public func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == Element {
        guard hasTokens else {
            storage.replaceSubrange(subrange, with: newElements)
            return
        }
        let countBefore = storage.count
        let removed = Array(storage[subrange])
        storage.replaceSubrange(subrange, with: newElements)
        didReplace(subrange, removed: removed, countBefore: countBefore)
    }

    /// Appends one element.
    ///
    /// - Complexity: Amortized O(1), plus O(*t*) in the tokens when observed (in the tokens
    ///   on the array, whatever its length).
    @inlinable
    public func append(_ newElement: Element) {
        // Inlinable, so the store is specialized for the element type in the caller's module.
        storage.append(newElement)
        if _edgeCount.load(ordering: .relaxed) != 0 { _didAppend() }
    }

    /// The observed half of `append(_:)`: one element was appended. Nothing here depends on the
    /// element type, so it goes straight to the non-generic notification.
    @usableFromInline
    final func _didAppend() {
        let countAfter = storage.count
        let countBefore = countAfter - 1
        observation.tell(
            self, range: countBefore..<countBefore, insertedCount: 1, countBefore: countBefore,
            countAfter: countAfter, changedRuns: nil, departed: [],
            oldElement: { index in (index < countBefore ? self.storage[index] : nil) as Any },
            oldContents: { Array(self.storage.dropLast()) })
    }

    /// Appends the elements of a sequence: one change, so each affected token fires once.
    public func append<S: Sequence>(contentsOf newElements: S) where S.Element == Element {
        let countBefore = storage.count
        storage.append(contentsOf: newElements)
        guard hasTokens, storage.count != countBefore else { return }
        didReplace(countBefore..<countBefore, removed: [], countBefore: countBefore)
    }

    /// Removes every element: one change.
    public func removeAll(keepingCapacity keepCapacity: Bool = false) {
        guard hasTokens else {
            storage.removeAll(keepingCapacity: keepCapacity)
            return
        }
        let removed = storage
        storage.removeAll(keepingCapacity: keepCapacity)
        didReplace(0..<removed.count, removed: removed, countBefore: removed.count)
    }

    // The class's own versions of `RangeReplaceableCollection`'s and `MutableCollection`'s
    // mutating methods, so they can be called on a `let` reference; each is one change.

    /// Inserts `newElement` at index `i`.
    public func insert(_ newElement: Element, at i: Int) {
        replaceSubrange(i..<i, with: CollectionOfOne(newElement))
    }

    /// Inserts the elements of `newElements` at index `i`: one change.
    public func insert<C: Collection>(contentsOf newElements: C, at i: Int) where C.Element == Element {
        replaceSubrange(i..<i, with: newElements)
    }

    /// Removes and returns the element at index `i`.
    @discardableResult
    public func remove(at i: Int) -> Element {
        let element = storage[i]
        replaceSubrange(i..<i + 1, with: EmptyCollection())
        return element
    }

    /// Removes the elements in `bounds`: one change.
    public func removeSubrange(_ bounds: Range<Int>) {
        replaceSubrange(bounds, with: EmptyCollection())
    }

    /// Removes the elements in `bounds` (`removeSubrange(2...)`): one change.
    public func removeSubrange(_ bounds: some RangeExpression<Int>) {
        removeSubrange(bounds.relative(to: storage))
    }

    /// Removes and returns the first element; the array must not be empty.
    @discardableResult
    public func removeFirst() -> Element { remove(at: 0) }

    /// Removes the first `k` elements: one change.
    public func removeFirst(_ k: Int) { removeSubrange(0..<k) }

    /// Removes and returns the last element; the array must not be empty.
    @discardableResult
    public func removeLast() -> Element { remove(at: storage.count - 1) }

    /// Removes the last `k` elements: one change.
    public func removeLast(_ k: Int) { removeSubrange(storage.count - k..<storage.count) }

    /// Removes and returns the last element, or nil when empty.
    public func popLast() -> Element? { storage.isEmpty ? nil : removeLast() }

    /// Removes the elements that satisfy `shouldBeRemoved`.
    ///
    /// Each run of adjacent removed elements is one change (last run first), so change lists
    /// name exactly the removed indexes; queued tokens still fire once per tick, `.immediate`
    /// ones once per run.
    ///
    /// - Complexity: O(*n*) without tokens; O(*n* × *runs*) with tokens.
    public func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        guard hasTokens else {
            try storage.removeAll(where: shouldBeRemoved)
            return
        }
        var runs: [Range<Int>] = []
        for index in storage.indices where try shouldBeRemoved(storage[index]) {
            if let last = runs.last, last.upperBound == index {
                runs[runs.count - 1] = last.lowerBound..<index + 1
            } else {
                runs.append(index..<index + 1)
            }
        }
        for run in runs.reversed() { removeSubrange(run) }
    }

    /// Sorts the array in place: one change, reported as replacements.
    public func sort(by areInIncreasingOrder: (Element, Element) throws -> Bool) rethrows {
        var sorted = storage
        try sorted.sort(by: areInIncreasingOrder)
        replaceInPlace(0..<sorted.count, with: sorted)
    }

    /// Reverses the array in place: one change, reported as replacements.
    public func reverse() {
        replaceInPlace(0..<storage.count, with: storage.reversed())
    }

    /// Reserves room for `minimumCapacity` elements; not a change.
    public func reserveCapacity(_ minimumCapacity: Int) {
        storage.reserveCapacity(minimumCapacity)
    }

    /// Moves the element at `source` so that it ends up at `destination`: a reordering in
    /// place. Object-following tokens follow it without firing; index-following tokens on the
    /// indexes between the two fire; change lists report those indexes as replaced.
    ///
    /// - Parameters:
    ///   - source: The element's index now.
    ///   - destination: Its index after the move.
    /// - Complexity: O(|*source* − *destination*|).
    public func move(from source: Int, to destination: Int) {
        guard source != destination else { return }
        let range = Swift.min(source, destination)..<Swift.max(source, destination) + 1
        var reordered = Array(storage[range])
        let element = reordered.remove(at: source - range.lowerBound)
        reordered.insert(element, at: destination - range.lowerBound)
        replaceInPlace(range, with: reordered)
    }

    /// Overwrites `range` with the same number of elements: elements replaced, none removed.
    func replaceInPlace(_ range: Range<Int>, with newElements: [Element]) {
        precondition(range.count == newElements.count, "replaceInPlace needs as many elements as the range")
        guard hasTokens else {
            storage.replaceSubrange(range, with: newElements)
            return
        }
        let removed = Array(storage[range])
        storage.replaceSubrange(range, with: newElements)
        didReplace(range, removed: removed, countBefore: storage.count)
    }

    // MARK: Telling the tokens

    /// After `storage[range]` (in the array before the change, which had `countBefore`
    /// elements) was replaced, by as many new elements as the count difference says: tells the
    /// tokens on the count, the contents, the affected indexes and departed followed objects.
    private func didReplace(_ fullRange: Range<Int>, removed fullRemoved: [Element], countBefore: Int) {
        let countAfter = storage.count
        var range = fullRange
        var removed = fullRemoved
        if countAfter - countBefore != 0 {
            // Identical elements at either end of the replaced range didn't change (a
            // `removeAll(where:)` replaces everything but removes only some): leave them out.
            let newCount = countAfter - countBefore + range.count
            var prefix = 0
            while prefix < range.count, prefix < newCount,
                _valuesAreIdentical(removed[prefix], storage[range.lowerBound + prefix])
            {
                prefix += 1
            }
            var suffix = 0
            while suffix < range.count - prefix, suffix < newCount - prefix,
                _valuesAreIdentical(
                    removed[range.count - 1 - suffix], storage[range.lowerBound + newCount - 1 - suffix])
            {
                suffix += 1
            }
            if prefix + suffix > 0 {
                range = range.lowerBound + prefix..<range.upperBound - suffix
                removed = Array(removed[prefix..<removed.count - suffix])
            }
        }
        let insertedCount = countAfter - countBefore + range.count
        // The indexes whose element changed.
        let inPlace = insertedCount == range.count
        // In place, only elements that really changed count; otherwise every index from the
        // range on (its elements shifted). The shifted case allocates nothing.
        var changedRuns: [Range<Int>] = []
        if inPlace {
            var start: Int?
            for offset in 0..<range.count {
                let index = range.lowerBound + offset
                let same = _valuesAreIdentical(removed[offset], storage[index])
                if !same, start == nil { start = index }
                if same, let first = start {
                    changedRuns.append(first..<index)
                    start = nil
                }
            }
            if let first = start { changedRuns.append(first..<range.upperBound) }
            if changedRuns.isEmpty { return }
        }
        var candidates: [FollowCell] = []
        if followsObjects, !fullRemoved.isEmpty {
            candidates = observation.withLock { state in
                guard !state.followed.isEmpty else { return [] }
                return fullRemoved.compactMap { state.followed[ObjectIdentifier($0 as AnyObject)] }
            }
        }
        let departed = departedRecords(candidates)
        // The value each changed thing had before, for change tokens (computed only if asked).
        let lower = range.lowerBound
        func oldElement(at index: Int) -> Element? {
            guard index >= 0, index < countBefore else { return nil }
            if index < lower { return storage[index] }
            if index < range.upperBound { return removed[index - lower] }
            return storage[index - range.count + insertedCount]
        }
        observation.tell(
            self, range: range, insertedCount: insertedCount, countBefore: countBefore, countAfter: countAfter,
            changedRuns: inPlace ? changedRuns : nil, departed: departed,
            oldElement: { oldElement(at: $0) as Any },
            oldContents: { Array(self.storage[..<lower]) + removed + Array(self.storage[(lower + insertedCount)...]) })
    }

    /// The followed records (of removed elements) whose element is no longer in the array;
    /// marks them left and forgets them.
    private func departedRecords(_ candidates: [FollowCell]) -> [FollowCell] {
        guard !candidates.isEmpty else { return [] }
        var departed: [FollowCell]
        if candidates.count == 1 {
            let id = candidates[0].objectID
            departed = storage.contains { ObjectIdentifier($0 as AnyObject) == id } ? [] : candidates
        } else {
            let present = Set(storage.lazy.map { ObjectIdentifier($0 as AnyObject) })
            var seen = Set<ObjectIdentifier>()
            departed = candidates.filter { !present.contains($0.objectID) && seen.insert($0.objectID).inserted }
        }
        guard !departed.isEmpty else { return [] }
        observation.withLock { state in
            for record in departed where state.followed[record.objectID] === record {
                state.followed[record.objectID] = nil
            }
        }
        for record in departed { record.left.store(true, ordering: .releasing) }
        return departed
    }
}

// MARK: - Standard protocols

extension ObservedArray: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// Positions are `Int` offsets, as in `Array`.
    public typealias Index = Int
    /// The valid positions, `0..<count`.
    public typealias Indices = Range<Int>
    /// A slice is a plain `ArraySlice` (a value, with no observers).
    public typealias SubSequence = ArraySlice<Element>

    /// Always 0.
    public var startIndex: Int { 0 }

    /// The count; reading it counts as reading ``count`` for tracking.
    public var endIndex: Int { count }

    /// The element at `position`; setting it replaces that element (a change only if the new
    /// element is not identical to the old one).
    public subscript(position: Int) -> Element {
        get {
            if isCapturingAccesses { recordIndexAccess(position, valueType: Element.self) }
            return storage[position]
        }
        set {
            guard hasTokens else {
                storage[position] = newValue
                return
            }
            replaceInPlace(position..<position + 1, with: [newValue])
        }
    }

    /// The elements in `bounds`, as an `ArraySlice`; setting replaces them in one change.
    public subscript(bounds: Range<Int>) -> ArraySlice<Element> {
        get {
            if isCapturingAccesses { recordCollectionAccess(serial: contentsSerial, valueType: [Element].self) }
            return storage[bounds]
        }
        set {
            if newValue.count == bounds.count {
                replaceInPlace(bounds, with: Array(newValue))
            } else {
                replaceSubrange(bounds, with: newValue)
            }
        }
    }

    /// The elements in a range expression (`items[2...]`); setting replaces them in one change.
    public subscript<R: RangeExpression>(range: R) -> ArraySlice<Element> where R.Bound == Int {
        get { self[range.relative(to: storage)] }
        set { self[range.relative(to: storage)] = newValue }
    }

    /// `i + 1`.
    public func index(after i: Int) -> Int { i + 1 }
    /// `i - 1`.
    public func index(before i: Int) -> Int { i - 1 }

    /// Swaps two elements in one change: object-following tokens don't fire.
    public func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        guard hasTokens else {
            storage.swapAt(i, j)
            return
        }
        let range = Swift.min(i, j)..<Swift.max(i, j) + 1
        var reordered = Array(storage[range])
        reordered.swapAt(i - range.lowerBound, j - range.lowerBound)
        replaceInPlace(range, with: reordered)
    }

    /// Lets in-place algorithms (`sort()`, `reverse()`, `shuffle()`…) work on a contiguous
    /// copy and apply the result as one change, in place.
    public func withContiguousMutableStorageIfAvailable<R>(
        _ body: (inout UnsafeMutableBufferPointer<Element>) throws -> R
    ) rethrows -> R? {
        guard hasTokens else { return try storage.withUnsafeMutableBufferPointer { try body(&$0) } }
        var copy = storage
        let result = try copy.withUnsafeMutableBufferPointer { try body(&$0) }
        replaceInPlace(0..<copy.count, with: copy)
        return result
    }

    /// Lets algorithms read the elements in place; reading counts as reading every element
    /// for tracking.
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R? {
        if isCapturingAccesses { recordCollectionAccess(serial: contentsSerial, valueType: [Element].self) }
        return try storage.withUnsafeBufferPointer(body)
    }
}

extension ObservedArray: ExpressibleByArrayLiteral {
    /// Creates an array from a literal: `@Observed var items: ObservedArray<Item> = []`.
    public convenience init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension ObservedArray: Equatable where Element: Equatable {
    /// Compares the elements; observers and identity don't count.
    ///
    /// > Note: Setting an `@Observed` property to another array compares by identity (`===`),
    /// > as for every class, so a distinct array with equal elements still fires.
    public static func == (lhs: ObservedArray, rhs: ObservedArray) -> Bool {
        lhs.storage == rhs.storage
    }
}

extension ObservedArray: Hashable where Element: Hashable {
    /// Hashes the elements. Don't mutate an array while it is a key of a `Set` or `Dictionary`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

extension ObservedArray where Element: Comparable {
    /// Sorts the array in place: one change, reported as replacements.
    public func sort() { sort(by: <) }
}

extension ObservedArray: CustomStringConvertible {
    /// The elements, printed like an `Array`.
    public var description: String { storage.description }
}
