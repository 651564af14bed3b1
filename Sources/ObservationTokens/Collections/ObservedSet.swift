/// A set whose changes can be observed with tokens: its count, any mutation with a change
/// list, and single members.
///
/// It is a reference type (an ``ObservableModel``) that behaves like `Set`: `SetAlgebra`
/// (`insert`, `remove`, `update(with:)`, `formUnion`, `subtract`, …), `Collection`, array
/// literals, `Equatable` and `Hashable`.
///
/// ```swift
/// let tags: ObservedSet<String> = ["swift"]
/// let token = tags.observe(member: "linux") { tags in
///     print(tags.contains("linux") ? "on Linux" : "not on Linux")
/// }
/// tags.insert("linux")   // fires: added
/// tags.insert("linux")   // nothing: already a member
/// tags.remove("macos")   // nothing: not a member
/// ```
///
/// A member fires only when it is really added or removed. For string paths, ``key(for:)``
/// gives a member a key such as `"&3"`: `"tags.&3"`. A key names the same member in every set
/// of the element type, and two members never share one; ``member(forKey:)`` looks a member up
/// by its key.
///
/// > Note: Like `@Observed` values, the contents are not synchronized: don't mutate a set on
/// > one thread while another reads or mutates it. A copy (``snapshot`` or
/// > `ObservedSet(other)`) starts with no observers.
///
/// - Complexity: A mutation without tokens costs what the `Set` mutation costs plus one relaxed
///   atomic load; with tokens, O(*k*) more in the members it adds or removes.
public final class ObservedSet<Element: Hashable>: ObservableModelBase, ModelObserving {
    @usableFromInline
    var storage: Set<Element>
    let observation = KeyedObservation<Element>()

    /// Creates an empty set.
    public override init() {
        storage = []
        super.init()
    }

    /// Creates a set with the elements of a sequence. The new set has no observers.
    ///
    /// - Parameter elements: The members.
    public init(_ elements: some Sequence<Element>) {
        storage = Set(elements)
        super.init()
    }

    @inline(__always)
    private var hasTokens: Bool { _edgeCount.load(ordering: .relaxed) != 0 }

    /// The members as a plain `Set`, with no observers. Observing `\.snapshot` fires on every
    /// mutation.
    public var snapshot: Set<Element> {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.contentsSerial, valueType: Set<Element>.self)
        }
        return storage
    }

    /// The number of members. Observing `\.count` fires only when it changes.
    public var count: Int {
        if isCapturingAccesses { recordCollectionAccess(serial: observation.countSerial, valueType: Int.self) }
        return storage.count
    }

    /// Whether `member` is in the set; `\.[contains: member]` can be observed: see
    /// ``ObservationSource/member(_:)``.
    public subscript(contains member: Element) -> Bool {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.keySerial(for: member), valueType: Bool.self)
        }
        return storage.contains(member)
    }

    // MARK: Member keys

    /// A key for `member` to use in string paths (`"tags.&3"`): the same key every time for
    /// equal members, in every set of this element type, and never the key of another member.
    /// The member need not be in the set.
    ///
    /// ```swift
    /// let key = tags.key(for: "linux")              // "&1"
    /// let token = try owner.observe(.path("tags.\(key)")) { _ in … }
    /// tags.member(forKey: key)                      // "linux" while it is a member
    /// ```
    ///
    /// A string path binds the member when it is made: `"tags.&1"` watches `"linux"` in
    /// whatever set `tags` holds, also after it is replaced by another set.
    ///
    /// - Parameter member: Any value of the element type.
    /// - Returns: A key of the form `&` followed by a number.
    /// - Complexity: O(1). Keys are handed out in order from one table per element type for the
    ///   whole process, which remembers every member it gave a key to (not the members of sets,
    ///   nor the members tokens observe): name members in paths, not streams of values.
    public func key(for member: Element) -> String {
        "&\(MemberKeys.table(for: Element.self).number(for: member))"
    }

    /// The member that `key` (from ``key(for:)``, on any set of this element type) stands for,
    /// if it is in this set now.
    ///
    /// - Parameter key: A key returned by ``key(for:)``.
    /// - Returns: The member, or nil if it is not in the set or the key is unknown.
    public func member(forKey key: String) -> Element? {
        guard let member = Self.keyedMember(key) else { return nil }
        return storage.contains(member) ? member : nil
    }

    /// The member `key` stands for, in or out of any set; nil for an unknown key.
    static func keyedMember(_ key: String) -> Element? {
        guard key.first == "&", let number = Int(key.dropFirst()) else { return nil }
        return MemberKeys.table(for: Element.self).member(number: number)
    }

    // MARK: Mutations

    private func tell(_ changes: [KeyChange<Element>], countBefore: Int, oldContents: Set<Element>? = nil) {
        observation.tell(self, changes: changes, countBefore: countBefore, countAfter: storage.count) {
            if let oldContents { return oldContents }
            var old = self.storage
            for change in changes {
                if change.wasPresent { old.insert(change.key) } else { old.remove(change.key) }
            }
            return old
        }
    }

    /// Applies a bulk operation and tells the tokens about the members it really added or
    /// removed: one change.
    private func bulk(_ operation: (inout Set<Element>) -> Void) {
        guard hasTokens else {
            operation(&storage)
            return
        }
        let before = storage
        operation(&storage)
        var changes: [KeyChange<Element>] = []
        for member in before where !storage.contains(member) {
            changes.append(KeyChange(key: member, oldValue: true, wasPresent: true, isPresent: false))
        }
        for member in storage where !before.contains(member) {
            changes.append(KeyChange(key: member, oldValue: false, wasPresent: false, isPresent: true))
        }
        tell(changes, countBefore: before.count, oldContents: before)
    }

    /// Removes every member: one change.
    public func removeAll(keepingCapacity keepCapacity: Bool = false) {
        bulk { $0.removeAll(keepingCapacity: keepCapacity) }
    }
}

/// The member keys of one element type: numbers handed out in order, and the members they
/// stand for. One table per element type for the whole process (see `MemberKeys`), so a key
/// names the same member in every set.
///
/// `@unchecked Sendable`: see Locked.
final class MemberKeyTable<Element: Hashable>: Locked<MemberKeyTableState<Element>>, @unchecked Sendable {
    init() { super.init(state: MemberKeyTableState()) }

    /// The number of `member`, handed out now if it has none. The member is hashed and compared
    /// outside the lock (user code); the table is only added to, so a copy is searched and an
    /// extended copy installed if no one came first.
    func number(for member: Element) -> Int {
        while true {
            let (numbers, version) = withLock { ($0.numbers, $0.version) }
            if let number = numbers[member] { return number }
            var extended = numbers
            let number = numbers.count + 1
            extended[member] = number
            let installed = withLock { table -> Bool in
                guard table.version == version else { return false }
                table.numbers = extended
                table.members[number] = member
                table.version += 1
                return true
            }
            if installed { return number }
        }
    }

    func member(number: Int) -> Element? {
        withLock { $0.members[number] }
    }
}

/// A `MemberKeyTable`'s state.
struct MemberKeyTableState<Element: Hashable> {
    var numbers: [Element: Int] = [:]
    var members: [Int: Element] = [:]
    /// Counts installs of a new `numbers` table.
    var version = 0
}

/// The member key tables, one per element type.
enum MemberKeys {
    private static let tables = Locked<[ObjectIdentifier: AnyObject]>(state: [:])

    static func table<Element: Hashable>(for type: Element.Type) -> MemberKeyTable<Element> {
        let table = tables.withLock { tables in
            if let table = tables[ObjectIdentifier(type)] { return table }
            let table = MemberKeyTable<Element>()
            tables[ObjectIdentifier(type)] = table
            return table
        }
        return unsafeDowncast(table, to: MemberKeyTable<Element>.self)
    }
}

// MARK: - SetAlgebra

extension ObservedSet: SetAlgebra {
    /// Whether the set is empty; reading it counts as reading ``count`` for tracking.
    public var isEmpty: Bool { count == 0 }

    /// Whether `member` is in the set; for tracking, a read of that member.
    public func contains(_ member: Element) -> Bool {
        self[contains: member]
    }

    /// Adds `newMember` if it is not a member yet; fires only then.
    @discardableResult
    public func insert(_ newMember: Element) -> (inserted: Bool, memberAfterInsert: Element) {
        let result = storage.insert(newMember)
        if hasTokens, result.inserted {
            tell(
                [KeyChange(key: newMember, oldValue: false, wasPresent: false, isPresent: true)],
                countBefore: storage.count - 1)
        }
        return result
    }

    /// Removes `member` if it is a member; fires only then.
    @discardableResult
    public func remove(_ member: Element) -> Element? {
        let removed = storage.remove(member)
        if hasTokens, removed != nil {
            tell(
                [KeyChange(key: member, oldValue: true, wasPresent: true, isPresent: false)],
                countBefore: storage.count + 1)
        }
        return removed
    }

    /// Inserts `newMember`, replacing an equal member. Replacing an equal member is not a
    /// membership change and fires nothing.
    @discardableResult
    public func update(with newMember: Element) -> Element? {
        let countBefore = storage.count
        let old = storage.update(with: newMember)
        if hasTokens, old == nil {
            tell(
                [KeyChange(key: newMember, oldValue: false, wasPresent: false, isPresent: true)],
                countBefore: countBefore)
        }
        return old
    }

    /// A new set (with no observers) with the members of both.
    public func union(_ other: ObservedSet) -> ObservedSet { ObservedSet(storage.union(other.storage)) }
    /// A new set (with no observers) with the members in both.
    public func intersection(_ other: ObservedSet) -> ObservedSet { ObservedSet(storage.intersection(other.storage)) }
    /// A new set (with no observers) with the members in exactly one of the two.
    public func symmetricDifference(_ other: ObservedSet) -> ObservedSet {
        ObservedSet(storage.symmetricDifference(other.storage))
    }

    /// Adds the members of `other`: one change.
    public func formUnion(_ other: ObservedSet) { formUnion(other.storage) }
    /// Keeps only members also in `other`: one change.
    public func formIntersection(_ other: ObservedSet) { formIntersection(other.storage) }
    /// Keeps members in exactly one of the two: one change.
    public func formSymmetricDifference(_ other: ObservedSet) { formSymmetricDifference(other.storage) }
    /// Removes the members of `other`: one change.
    public func subtract(_ other: ObservedSet) { subtract(other.storage) }

    /// Adds the members of a sequence: one change.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element { bulk { $0.formUnion(other) } }
    /// Keeps only members also in `other`: one change.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        bulk { $0.formIntersection(other) }
    }
    /// Keeps members in exactly one of the two: one change.
    public func formSymmetricDifference<S: Sequence>(_ other: S) where S.Element == Element {
        let other = Set(other)
        bulk { $0.formSymmetricDifference(other) }
    }
    /// Removes the members of a sequence: one change.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element { bulk { $0.subtract(other) } }

    /// Compares the members; observers and identity don't count.
    public static func == (lhs: ObservedSet, rhs: ObservedSet) -> Bool { lhs.storage == rhs.storage }
}

extension ObservedSet: Hashable {
    /// Hashes the members. Don't mutate a set while it is a key of a `Set` or `Dictionary`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

// MARK: - Observing

extension ObservedSet: KeyCellProviding {
    var keyersSerial: UInt64 { observation.keyersSerial }

    /// The cell of `member`'s tokens, made if there is none; it leaves the key table with its
    /// last token (see `KeyedObservation`).
    func keyCell(for member: Element) -> KeyCell<Element> {
        let set = WeakReference(self)
        return observation.cell(forKey: member, ownerID: ObjectIdentifier(self)) {
            set.load(as: ObservedSet.self)?.storage.contains(member)
        }
    }

    /// Cells in the key table: one per member that tokens observe now (for tests).
    var keyCellCount: Int { observation.cellCount }
}

extension ObservedSet: ObservedCollectionPaths {
    /// `count`, or a member's key (`&3`), for a component met at run time (past a value whose
    /// type only run time knows).
    func resolve(component: String) -> (serial: UInt64, value: Any)? {
        if component == "count" { return (observation.countSerial, storage.count) }
        guard let member = Self.keyedMember(component) else { return nil }
        return (observation.keySerial(for: member), storage.contains(member))
    }

    var elementModels: [ObservableModelBase] {
        storage.compactMap { PathStep.model(in: $0) }
    }

    /// `count`, `*` (every member), or a member's key (`&3`), which is bound to its member
    /// here: the steps run through the member's cell on whatever set the path reaches when it
    /// is walked, so the path follows its member into a replacing set.
    static func pathComponent(
        _ component: String, on set: ObservedSet?, path: String, position: Int, parse: PathParse
    ) throws(KeyPathError) -> (steps: [PathStep], next: PathLevel) {
        switch component {
        case "*": return ([.wildcard], .element(Element.self))
        case "count": return ([.name(component)], .value(Int.self))
        default:
            guard component.first == "&" else {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            guard let member = keyedMember(component) else {
                throw .unknownMemberKey(
                    component, type: String(describing: ObservedSet.self), path: path, position: position)
            }
            return (keyPathSteps(for: member), .value(Bool.self))
        }
    }
}

// MARK: - Collection

extension ObservedSet: Collection {
    /// Positions are `Set`'s; they are invalidated by mutations, as there.
    public typealias Index = Set<Element>.Index

    /// The first position.
    public var startIndex: Index { storage.startIndex }
    /// The position past the last member.
    public var endIndex: Index { storage.endIndex }
    /// The position after `i`.
    public func index(after i: Index) -> Index { storage.index(after: i) }

    /// The member at `position` (reading it depends on every mutation, for tracking).
    public subscript(position: Index) -> Element {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.contentsSerial, valueType: Set<Element>.self)
        }
        return storage[position]
    }
}

extension ObservedSet: ExpressibleByArrayLiteral {
    /// Creates a set from a literal: `@Observed var tags: ObservedSet<String> = []`.
    public convenience init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension ObservedSet: CustomStringConvertible {
    /// The members, printed like a `Set`.
    public var description: String { storage.description }
}
