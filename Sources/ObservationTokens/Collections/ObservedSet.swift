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
/// gives a member a key such as `"&3"`: `"tags.&3"`. Keys are numbered, not hashed, so two
/// members never share one; ``member(forKey:)`` looks a member up by its key.
///
/// > Note: Like `@Observed` values, the contents are not synchronized: don't mutate a set on
/// > one thread while another reads or mutates it. A copy (``snapshot`` or
/// > `ObservedSet(other)`) starts with no observers.
///
/// - Complexity: A mutation without tokens costs what the `Set` mutation costs plus one relaxed
///   atomic load; with tokens, O(*k*) more in the members it adds or removes.
public final class ObservedSet<Element: Hashable>: ObservableModel {
    @usableFromInline
    var storage: Set<Element>
    let observation = KeyedObservation<Element>()
    /// Members' string keys, handed out by `key(for:)`.
    private let memberKeys = Locked<MemberKeyTable<Element>>(state: MemberKeyTable())

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
    /// ``observe(member:options:queue:fileID:line:_:)``.
    public subscript(contains member: Element) -> Bool {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.serial(forKey: member), valueType: Bool.self)
        }
        return storage.contains(member)
    }

    // MARK: Member keys

    /// A key for `member` to use in string paths (`"tags.&3"`): the same key every time for
    /// equal members, never the key of another member. The member need not be in the set.
    ///
    /// ```swift
    /// let key = tags.key(for: "linux")              // "&1"
    /// let token = try owner.observe(path: "tags.\(key)") { _ in … }
    /// tags.member(forKey: key)                      // "linux" while it is a member
    /// ```
    ///
    /// - Parameter member: Any value of the element type.
    /// - Returns: A key of the form `&` followed by a number.
    /// - Complexity: O(1). The set remembers every member it gave a key to.
    public func key(for member: Element) -> String {
        // The member is hashed and compared outside the lock (user code); the table is only
        // added to, so a copy is searched and an extended copy installed if no one came first.
        while true {
            let (numbers, version) = memberKeys.withLock { ($0.numbers, $0.version) }
            if let number = numbers[member] { return "&\(number)" }
            var extended = numbers
            let number = numbers.count + 1
            extended[member] = number
            let installed = memberKeys.withLock { table -> Bool in
                guard table.version == version else { return false }
                table.numbers = extended
                table.members[number] = member
                table.version += 1
                return true
            }
            if installed { return "&\(number)" }
        }
    }

    /// The member that `key` (from ``key(for:)``) stands for, if it is in the set now.
    ///
    /// - Parameter key: A key returned by ``key(for:)``.
    /// - Returns: The member, or nil if it is not in the set or the key is unknown.
    public func member(forKey key: String) -> Element? {
        guard let member = keyedMember(key) else { return nil }
        return storage.contains(member) ? member : nil
    }

    private func keyedMember(_ key: String) -> Element? {
        guard key.first == "&", let number = Int(key.dropFirst()) else { return nil }
        return memberKeys.withLock { $0.members[number] }
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

/// Numbers handed out as member keys, and the members they stand for.
struct MemberKeyTable<Element: Hashable> {
    var numbers: [Element: Int] = [:]
    var members: [Int: Element] = [:]
    /// Counts installs of a new `numbers` table (see `ObservedSet.key(for:)`).
    var version = 0
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

extension ObservedSet {
    /// Observes one member: fires when it is really added or removed.
    ///
    /// ```swift
    /// let token = tags.observe(member: "urgent") { tags in
    ///     print(tags.contains("urgent"))
    /// }
    /// ```
    ///
    /// Equivalent to `observe(\.[contains: member])`.
    ///
    /// - Parameters:
    ///   - member: Any value; it need not be a member now.
    ///   - options: `.initial`, `.immediate`, `.endpointChanges`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the set.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1).
    public func observe(
        member: Element,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedSet) -> Void
    ) -> ObservationToken {
        // The token's leaf is on a cell of its own (see `KeyCell`); unless `.endpointChanges`
        // asks for values, nothing reads the set.
        let cell = observation.cell(forKey: member, ownerID: ObjectIdentifier(self)) { [weak self] in
            self?.storage.contains(member)
        }
        let steps = cell.steps(keyersSerial: observation.keyersSerial, reading: options.contains(.endpointChanges))
        return _observeSynthetic(
            _ModelSubscription(
                root: self, target: .paths([ObservedPath(steps: steps)]), options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .member, options: options), callback: callback))
    }

    /// Observes any mutation (`*`) and reports the members added and removed since the last
    /// delivery.
    ///
    /// ```swift
    /// let token = tags.observeMutations { tags, changes in
    ///     print("added", changes.inserted, "removed", changes.removed)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the set and the changes since the previous delivery.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1) to create; O(*k*) per mutation in the members it adds or removes.
    public func observeMutations(
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedSet, SetChanges<Element>) -> Void
    ) -> ObservationToken {
        _observeSynthetic(
            .synthetic(\ObservedSet.snapshot, serial: observation.contentsSerial, valueType: Set<Element>.self),
            subscription: ChangeListSubscription(
                root: self, log: observation.addLog(), holder: observation,
                options: options.subtracting(.endpointChanges), queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .mutations, options: options),
                callback: callback))
    }
}

extension ObservedSet: ObservedCollectionPaths {
    /// `count`, or a member's key (`&3`).
    func resolve(component: String) -> (serial: UInt64, value: Any)? {
        if component == "count" { return (observation.countSerial, storage.count) }
        guard let member = keyedMember(component) else { return nil }
        return (observation.serial(forKey: member), storage.contains(member))
    }

    var elementModels: [ObservableModel] {
        storage.compactMap { PathStep.model(in: $0) }
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
