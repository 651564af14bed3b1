/// A dictionary whose changes can be observed with tokens: its count, any mutation with a
/// change list, and single keys — also keys that have no value yet.
///
/// It is a reference type (an ``ObservableModel``) that behaves like `Dictionary`: key
/// subscripts (with `default:`), ``keys``, ``values``, ``updateValue(_:forKey:)``,
/// ``removeValue(forKey:)``, `merge`, dictionary literals, `Collection` of key-value pairs,
/// `Equatable` and `Hashable` when the values are.
///
/// ```swift
/// final class Preferences: ObservableModel {
///     @Observed var settings: ObservedDictionary<String, String> = [:]
/// }
///
/// let preferences = Preferences()
/// let token = preferences.settings.observe(key: "theme") { settings in
///     print("theme is", settings["theme"] ?? "default")
/// }
/// preferences.settings["theme"] = "dark"   // fires: added
/// preferences.settings["theme"] = "dark"   // nothing: same value
/// preferences.settings["font"] = "Mono"    // nothing: another key
/// preferences.settings["theme"] = nil      // fires: removed
/// ```
///
/// A key fires when its value is added, changed (`==` for `Equatable` values, `===` for
/// objects; other values on every assignment) or removed — removing a key that has no value
/// fires nothing. In string paths a component names a key: `"settings.theme"`; `count` and
/// `*` mean the count and any mutation.
///
/// > Note: Like `@Observed` values, the contents are not synchronized: don't mutate a
/// > dictionary on one thread while another reads or mutates it. A copy (``snapshot`` or
/// > `ObservedDictionary(other)`) starts with no observers.
///
/// - Complexity: A mutation without tokens costs what the `Dictionary` mutation costs plus one
///   relaxed atomic load; with tokens, O(*k*) more in the keys it changes.
public final class ObservedDictionary<Key: Hashable, Value>: ObservableModelBase, ModelObserving {
    @usableFromInline
    var storage: [Key: Value]
    let observation = KeyedObservation<Key>()

    /// Creates an empty dictionary.
    public override init() {
        storage = [:]
        super.init()
    }

    /// Creates a dictionary with the contents of `dictionary`. The new one has no observers.
    ///
    /// - Parameter dictionary: The initial keys and values.
    public init(_ dictionary: [Key: Value]) {
        storage = dictionary
        super.init()
    }

    /// Creates a dictionary with the contents of another observed dictionary, like
    /// `ObservedArray(other)` and `ObservedSet(other)`. The copy has no observers; the original
    /// keeps its own.
    ///
    /// ```swift
    /// let backup = ObservedDictionary(preferences.settings)
    /// preferences.settings["theme"] = "dark"   // backup["theme"] is unchanged
    /// ```
    ///
    /// - Parameter other: The dictionary to copy. For tracking, reading it counts as reading its
    ///   ``snapshot`` (any mutation).
    /// - Complexity: O(1): the contents are shared until one of the two is mutated.
    public convenience init(_ other: ObservedDictionary<Key, Value>) {
        self.init(other.snapshot)
    }

    @inline(__always)
    private var hasTokens: Bool { _edgeCount.load(ordering: .relaxed) != 0 }

    /// The contents as a plain `Dictionary`, with no observers. Observing `\.snapshot` fires on
    /// every mutation.
    public var snapshot: [Key: Value] {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.contentsSerial, valueType: [Key: Value].self)
        }
        return storage
    }

    /// The number of keys. Observing `\.count` fires only when it changes.
    public var count: Int {
        if isCapturingAccesses { recordCollectionAccess(serial: observation.countSerial, valueType: Int.self) }
        return storage.count
    }

    /// The keys, as `Dictionary`'s keys view (a value: it doesn't change later).
    public var keys: Dictionary<Key, Value>.Keys { snapshot.keys }

    /// The values, as `Dictionary`'s values view (a value: it doesn't change later).
    public var values: Dictionary<Key, Value>.Values { snapshot.values }

    /// The value for `key`, or nil. Setting nil removes the key. `\.[key]` can be observed:
    /// see ``ObservationSource/key(_:)``.
    public subscript(key: Key) -> Value? {
        get {
            if isCapturingAccesses { recordKeyAccess(key, valueType: Value?.self) }
            return storage[key]
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// The value for `key`, or `defaultValue`; setting stores a value for `key`.
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        set { updateValue(newValue, forKey: key) }
    }

    func recordKeyAccess(_ key: Key, valueType: Any.Type) {
        recordCollectionAccess(serial: observation.keySerial(for: key), valueType: valueType)
    }

    // MARK: Mutations

    /// Stores `value` for `key`, returning the value it replaced.
    ///
    /// - Returns: The previous value, or nil if the key was added.
    @discardableResult
    public func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let old = storage.updateValue(value, forKey: key)
        if hasTokens, old.map({ !_valuesAreIdentical($0, value) }) ?? true {
            tell(
                [KeyChange(key: key, oldValue: old as Any, wasPresent: old != nil, isPresent: true)],
                countBefore: old == nil ? storage.count - 1 : storage.count)
        }
        return old
    }

    /// Removes `key` and returns its value; fires only if it had one.
    ///
    /// - Returns: The removed value, or nil if the key had none.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        let old = storage.removeValue(forKey: key)
        if hasTokens, old != nil {
            tell(
                [KeyChange(key: key, oldValue: old as Any, wasPresent: true, isPresent: false)],
                countBefore: storage.count + 1)
        }
        return old
    }

    /// Removes every key: one change.
    public func removeAll(keepingCapacity keepCapacity: Bool = false) {
        let old = storage
        storage.removeAll(keepingCapacity: keepCapacity)
        guard hasTokens else { return }
        tell(
            old.map { KeyChange(key: $0.key, oldValue: Optional($0.value) as Any, wasPresent: true, isPresent: false) },
            countBefore: old.count, oldContents: old)
    }

    /// Merges key-value pairs in: one change, each affected token fires once.
    ///
    /// - Parameters:
    ///   - other: The pairs to merge.
    ///   - combine: Picks the value for a key present in both.
    public func merge<S: Sequence>(_ other: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (Key, Value) {
        guard hasTokens else {
            try storage.merge(other, uniquingKeysWith: combine)
            return
        }
        let before = storage
        try storage.merge(other, uniquingKeysWith: combine)
        var changes: [KeyChange<Key>] = []
        var seen = Set<Key>()
        for (key, _) in other where seen.insert(key).inserted {
            let old = before[key]
            let new = storage[key]!
            if let old, _valuesAreIdentical(old, new) { continue }
            changes.append(KeyChange(key: key, oldValue: old as Any, wasPresent: old != nil, isPresent: true))
        }
        tell(changes, countBefore: before.count, oldContents: before)
    }

    /// Merges a dictionary in: one change.
    public func merge(_ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: combine)
    }

    private func tell(_ changes: [KeyChange<Key>], countBefore: Int, oldContents: [Key: Value]? = nil) {
        observation.tell(self, changes: changes, countBefore: countBefore, countAfter: storage.count) {
            if let oldContents { return oldContents }
            // One key changed: put its old value back.
            var old = self.storage
            for change in changes { old[change.key] = change.oldValue as? Value }
            return old
        }
    }
}

// MARK: - Observing

extension ObservedDictionary: KeyCellProviding {
    var keyersSerial: UInt64 { observation.keyersSerial }

    /// The cell of `key`'s tokens, made if there is none; it leaves the key table with its
    /// last token (see `KeyedObservation`).
    func keyCell(for key: Key) -> KeyCell<Key> {
        let dictionary = WeakReference(self)
        return observation.cell(forKey: key, ownerID: ObjectIdentifier(self)) {
            dictionary.load(as: ObservedDictionary.self)?.storage[key] ?? nil
        }
    }

    /// Cells in the key table: one per key that tokens observe now (for tests).
    var keyCellCount: Int { observation.cellCount }
}

extension ObservedDictionary: ObservedCollectionPaths {
    /// `count`, or a key, for a component met at run time (past a value whose type only run
    /// time knows): keys are made from the component, as when parsing.
    func resolve(component: String) -> (serial: UInt64, value: Any)? {
        if component == "count" { return (observation.countSerial, storage.count) }
        guard let key = Self.key(fromComponent: component) else { return nil }
        return (observation.keySerial(for: key), storage[key] as Any)
    }

    var elementModels: [ObservableModelBase] {
        var seen = Set<ObjectIdentifier>()
        return storage.values.compactMap { value in
            guard let model = PathStep.model(in: value), seen.insert(ObjectIdentifier(model)).inserted else {
                return nil
            }
            return model
        }
    }

    /// The key a path component names: the text itself for `String` keys, or the key made from
    /// it for keys that can be made from text (`Int`, `Double`, `Bool`, … any
    /// `LosslessStringConvertible`); nil when the key type can't be made from it.
    static func key(fromComponent component: String) -> Key? {
        if let key = component as? Key { return key }
        if let convertible = Key.self as? any LosslessStringConvertible.Type {
            return convertible.init(component) as? Key
        }
        return nil
    }

    /// `count`, `*` (every value), or a key: `settings.theme`, `scores.1`. A key's steps run
    /// through its cell on whatever dictionary the path reaches when it is walked.
    static func pathComponent(
        _ component: String, on dictionary: ObservedDictionary?, path: String, position: Int, parse: PathParse
    ) throws(KeyPathError) -> (steps: [PathStep], next: PathLevel) {
        switch component {
        case "*": return ([.wildcard], .element(Value.self))
        case "count": return ([.name(component)], .value(Int.self))
        default:
            guard let key = key(fromComponent: component) else {
                throw .invalidKey(component, keyType: String(describing: Key.self), path: path, position: position)
            }
            return (keyPathSteps(for: key), .element(Value.self))
        }
    }
}

// MARK: - Standard protocols

extension ObservedDictionary: Collection {
    /// Positions are `Dictionary`'s; they are invalidated by mutations, as there.
    public typealias Index = Dictionary<Key, Value>.Index
    /// A key-value pair, as in `Dictionary`.
    public typealias Element = (key: Key, value: Value)

    /// The first position.
    public var startIndex: Index { storage.startIndex }
    /// The position past the last pair.
    public var endIndex: Index { storage.endIndex }
    /// The position after `i`.
    public func index(after i: Index) -> Index { storage.index(after: i) }

    /// The key-value pair at `position` (reading it depends on every mutation, for tracking).
    public subscript(position: Index) -> (key: Key, value: Value) {
        if isCapturingAccesses {
            recordCollectionAccess(serial: observation.contentsSerial, valueType: [Key: Value].self)
        }
        return storage[position]
    }

    /// The index of `key`, if it has a value.
    public func index(forKey key: Key) -> Index? { storage.index(forKey: key) }
}

extension ObservedDictionary: ExpressibleByDictionaryLiteral {
    /// Creates a dictionary from a literal: `@Observed var settings: ObservedDictionary<String, String> = [:]`.
    public convenience init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ObservedDictionary: Equatable where Value: Equatable {
    /// Compares the contents; observers and identity don't count.
    public static func == (lhs: ObservedDictionary, rhs: ObservedDictionary) -> Bool {
        lhs.storage == rhs.storage
    }
}

extension ObservedDictionary: Hashable where Value: Hashable {
    /// Hashes the contents. Don't mutate a dictionary while it is a key of a `Set` or `Dictionary`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage)
    }
}

extension ObservedDictionary: CustomStringConvertible {
    /// The contents, printed like a `Dictionary`.
    public var description: String { storage.description }
}
