@_spi(Reflection) import Swift
import Synchronization

/// The `@Observed` properties of a class, found once per class from its type metadata.
///
/// Names come from the declarations themselves: the compiler stores `@Observed var zipCode`
/// as `_zipCode`, and the class's field records name it so. Nothing is spelled twice, so
/// nothing can drift out of sync.
///
/// The table is built from the class alone (`_forEachField` reads the names, offsets and
/// types of the stored properties, superclass ones first, without an instance) and cached per
/// class. It reads no value: on an object, it reads only the immutable `serial` of an
/// `@Observed` storage, at its offset, and a value only for the one property a caller asks for
/// (a string-path step). Unobserved properties, plain ones guarded by the user's own lock, and
/// the values of other `@Observed` properties are never touched, whatever thread is writing
/// them.
struct PropertyTable: Sendable {
    struct Entry: @unchecked Sendable {  // metatypes are immutable
        let name: String
        /// Where the storage starts in the object.
        let offset: Int
        /// Where the storage's immutable `serial` is in the object.
        let serialOffset: Int
        let storageType: any ObservedLayout.Type
        /// Whether the value can be a model object (a `*` in a path's middle reads only these).
        let mayHoldModel: Bool

        var valueType: Any.Type { storageType.valueType }

        /// The storage's serial in `object` (an instance of the table's class or a subclass).
        /// Reads the immutable serial alone, never the value.
        func serial(in object: ObservableModelBase) -> UInt64 {
            PropertyTable.address(of: object).load(fromByteOffset: serialOffset, as: UInt64.self)
        }

        /// The property's current value in `object`: a copy, as its getter would make.
        func value(in object: ObservableModelBase) -> Any {
            storageType.value(at: PropertyTable.address(of: object) + offset)
        }
    }

    /// A synthetic property (`@Computed`, `@Lazy`, `@Hybrid`): its serial and value live in
    /// its state object, which the storage references.
    struct SyntheticEntry: @unchecked Sendable {  // metatypes are immutable
        let name: String
        let offset: Int
        let storageType: any SyntheticLayout.Type

        var valueType: Any.Type { storageType.valueType }

        func state(in object: ObservableModelBase) -> any SyntheticStateProtocol {
            storageType.state(at: PropertyTable.address(of: object) + offset)
        }
    }

    /// Everything in one object: tables are copied often, and a copy is then one retain.
    private let contents: Contents

    var typeName: String { contents.typeName }
    /// Superclass properties first, in declaration order.
    var entries: [Entry] { contents.entries }
    /// The synthetic properties, superclass ones first, in declaration order.
    var synthetic: [SyntheticEntry] { contents.synthetic }
    /// The `@Observed` and synthetic property names, in declaration order.
    var observableNames: [String] { contents.observableNames }
    /// Typed key paths resolved on objects of this class, and the entry each one reads.
    private var keyPaths: KeyPathEntries { contents.keyPaths }

    /// One per class, built once and never removed (a class's properties never change).
    final class Contents: Sendable {
        let id: ObjectIdentifier
        /// The class, for `typeName`.
        private let type: ClassBox
        /// The class's name, made when first asked: describing a type costs as much as the rest of
        /// the table the first time in a process, and only string paths' errors name it.
        private let name = Locked<String?>(state: nil)
        let entries: [Entry]
        let synthetic: [SyntheticEntry]
        let observableNames: [String]
        let keyPaths = KeyPathEntries()

        var typeName: String {
            if let known = name.withLock({ $0 }) { return known }
            let made = String(describing: type.type)  // racing threads make the same name
            name.withLock { $0 = made }
            return made
        }

        init(building type: ObservableModelBase.Type) {
            id = ObjectIdentifier(type)
            self.type = ClassBox(type: type)
            var entries: [Entry] = []
            var synthetic: [SyntheticEntry] = []
            // `classType` (raw value 1): `_EachFieldOptions.classType` is a mutable static, which
            // Swift 6 rejects. Fields of superclasses come first.
            let baseEnd = PropertyTable.baseFieldsEnd
            _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
                // Only structs can be storages; `ObservableModelBase`'s own fields (atomics) never
                // are. Skipped before the casts: each `as? any …Type` of a type not asked about
                // before scans every protocol conformance of the process: ≈ 420,000 instructions
                // for the base class's three fields and an `Int` (a class's first token paid them).
                guard offset >= baseEnd, PropertyTable.kind(of: fieldType) == PropertyTable.structKind else {
                    return true
                }
                let label = String(cString: name)
                // `@Observed` first, the usual storage (no type is both).
                if let storageType = fieldType as? any ObservedLayout.Type {
                    guard label.hasPrefix("_") else { return true }
                    entries.append(
                        Entry(
                            name: String(label.dropFirst()), offset: offset,
                            serialOffset: offset + storageType.serialOffset, storageType: storageType,
                            mayHoldModel: PropertyTable.modelType(in: storageType.valueType) != nil
                                || PropertyTable.mayHoldModel(storageType.valueType)))
                    return true
                }
                if let storageType = fieldType as? any SyntheticLayout.Type {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    synthetic.append(SyntheticEntry(name: name, offset: offset, storageType: storageType))
                }
                return true
            }
            self.entries = entries
            self.synthetic = synthetic
            // Names in declaration order (offsets grow with it, superclass fields first).
            var ordered = entries.map { ($0.offset, $0.name) } + synthetic.map { ($0.offset, $0.name) }
            ordered.sort { $0.0 < $1.0 }
            observableNames = ordered.map(\.1)
        }
    }

    /// A model class, held by a table (a metatype is immutable).
    private struct ClassBox: @unchecked Sendable {
        let type: ObservableModelBase.Type
    }

    /// The tables built, by class: an open-addressed hash table, not a dictionary. A
    /// dictionary keyed by `ObjectIdentifier` is built by the runtime from its mangled name,
    /// which looks up the key's `Hashable` conformance by scanning every conformance of the
    /// process; with the lock's own type named by it, the process's first table paid
    /// ≈ 170,000 instructions for them. An array of optional references needs no conformance.
    struct Tables {
        /// A power of two long (or empty), at most half full; nil: an empty slot.
        private var slots: [Contents?] = []
        private(set) var count = 0

        /// The slot to start probing at for `id`: the class object's address, whose low bits
        /// are all alike (alignment), mixed so that classes spread over the slots.
        private static func start(_ id: ObjectIdentifier, mask: Int) -> Int {
            Int(truncatingIfNeeded: (UInt(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        }

        subscript(id: ObjectIdentifier) -> Contents? {
            guard !slots.isEmpty else { return nil }
            let mask = slots.count - 1
            var index = Self.start(id, mask: mask)
            // Never full (at most half), so an empty slot ends every probe.
            while let contents = slots[index] {
                if contents.id == id { return contents }
                index = (index + 1) & mask
            }
            return nil
        }

        /// Adds `contents`, whose class is not in the table yet.
        mutating func insert(_ contents: Contents) {
            if (count + 1) * 2 > slots.count {
                let old = slots
                slots = Array(repeating: nil, count: max(8, old.count * 2))
                count = 0
                for case let kept? in old { insert(kept) }
            }
            let mask = slots.count - 1
            var index = Self.start(contents.id, mask: mask)
            while slots[index] != nil { index = (index + 1) & mask }
            slots[index] = contents
            count += 1
        }
    }

    private static let cache = Locked<Tables>(state: Tables())

    /// The contents of the class asked for last, unretained (the cache keeps them alive for
    /// good), or 0. Apps look up one class many times in a row (a first token on each of many
    /// objects of a class); one load and a compare then replace a lock and a hash lookup.
    private static let last = Atomic<UInt>(0)

    private init(contents: Contents) {
        self.contents = contents
    }

    /// The table of `object`'s dynamic class.
    init(_ object: ObservableModelBase) {
        self = Self.of(type(of: object))
    }

    /// The table of `type`, built on first use and cached.
    ///
    /// - Complexity: O(1) after the first call for a class; O(*f*) in its stored properties
    ///   the first time.
    static func of(_ type: ObservableModelBase.Type) -> PropertyTable {
        let id = ObjectIdentifier(type)
        let bits = last.load(ordering: .acquiring)
        if bits != 0 {
            let known = Unmanaged<Contents>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)._withUnsafeGuaranteedRef {
                $0.id == id ? PropertyTable(contents: $0) : nil
            }
            if let known { return known }
        }
        let contents: Contents
        if let known = cache.withLock({ $0[id] }) {
            contents = known
        } else {
            // Built outside the lock; a table built twice by racing threads keeps the first.
            let built = Contents(building: type)
            contents = cache.withLock { cache in
                if let existing = cache[id] { return existing }
                cache.insert(built)
                return built
            }
        }
        last.store(UInt(bitPattern: Unmanaged.passUnretained(contents).toOpaque()), ordering: .releasing)
        return PropertyTable(contents: contents)
    }

    /// Runs `body` on the contents of `type`'s table; the class asked for last is borrowed (no
    /// reference counting).
    @inline(__always)
    private static func withContents<R>(of type: ObservableModelBase.Type, _ body: (Contents) -> R) -> R {
        let bits = last.load(ordering: .acquiring)
        if bits != 0 {
            let known = Unmanaged<Contents>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
            if known._withUnsafeGuaranteedRef({ $0.id == ObjectIdentifier(type) }) {
                return known._withUnsafeGuaranteedRef(body)
            }
        }
        return body(of(type).contents)
    }

    /// The serial, in `object`, of the storage a typed key path read on another object of its
    /// class, if it was resolved before: `entry(forKeyPath:)` without copying the table or its
    /// entries (an object's first token asks this).
    ///
    /// A non-zero `site` (see `_KeySource.site`) is remembered as making `keyPath`.
    static func knownSerial(of keyPath: AnyKeyPath, site: UInt = 0, in object: ObservableModelBase) -> UInt64? {
        withContents(of: type(of: object)) { contents in
            guard let index = contents.keyPaths.index(of: keyPath) else { return nil }
            if site != 0 { contents.keyPaths.remember(site: site, index: index) }
            return contents.entries.withUnsafeBufferPointer { $0[index].serial(in: object) }
        }
    }

    /// `knownSerial(of:in:)` for the key path made at `site` (see `_KeySource.site`), without
    /// the key path: known once a key path made there was resolved on an object of the class.
    static func knownSerial(ofSite site: UInt, in object: ObservableModelBase) -> UInt64? {
        withContents(of: type(of: object)) { contents in
            guard let index = contents.keyPaths.index(ofSite: site) else { return nil }
            return contents.entries.withUnsafeBufferPointer { $0[index].serial(in: object) }
        }
    }

    func syntheticEntry(named name: String) -> SyntheticEntry? {
        synthetic.first { $0.name == name }
    }

    /// The serial of the `@Observed` or synthetic property `name` of `object`; reads no value.
    func serial(ofProperty name: String, in object: ObservableModelBase) -> UInt64? {
        if let entry = entry(named: name) { return entry.serial(in: object) }
        return syntheticEntry(named: name)?.state(in: object).serial
    }

    @inline(__always)
    fileprivate static func address(of object: ObservableModelBase) -> UnsafeRawPointer {
        UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    func entry(named name: String) -> Entry? {
        entries.first { $0.name == name }
    }

    /// The entry a typed key path read on another object of this class, if it was resolved
    /// before: for a new object, only that storage's immutable serial needs reading.
    func entry(forKeyPath keyPath: AnyKeyPath) -> Entry? {
        keyPaths.index(of: keyPath).map { entries[$0] }
    }

    /// Records that `keyPath`, applied to `object` (of this class), read the storage with
    /// `serial` (found by access capture).
    func learn(_ keyPath: AnyKeyPath, serial: UInt64, on object: ObservableModelBase) {
        guard let index = entries.firstIndex(where: { $0.serial(in: object) == serial }) else { return }
        keyPaths.remember(keyPath, index: index)
    }

    /// The name of the property of `object` whose storage has `serial`.
    ///
    /// - Complexity: O(*p*) reads of immutable serials.
    func name(ofSerial serial: UInt64, in object: ObservableModelBase) -> String? {
        index(ofSerial: serial, in: object).map { entries[$0].name }
    }

    /// The index in `entries` of the property of `object` whose storage has `serial`.
    ///
    /// - Complexity: O(*p*) reads of immutable serials.
    func index(ofSerial serial: UInt64, in object: ObservableModelBase) -> Int? {
        entries.firstIndex { $0.serial(in: object) == serial }
    }
}

/// A class's resolved typed key paths, by key path identity. Key path objects are retained, so
/// an identity can't be reused while remembered. Bounded per property, like the per-object
/// cache: key paths built at run time are new objects each time and push out only key paths
/// to the same property. Also the call sites (`_KeySource.site`) whose key paths were resolved
/// here: code addresses, never reused, as many as the program has such places.
final class KeyPathEntries: Locked<KeyPathEntries.State>, @unchecked Sendable {  // see Locked
    struct State {
        var keyPaths: [(keyPath: AnyKeyPath, index: Int)] = []
        var sites: [(site: UInt, index: Int)] = []
    }

    static let limitPerProperty = 16

    init() {
        super.init(state: State())
    }

    func index(of keyPath: AnyKeyPath) -> Int? {
        withLock { state in state.keyPaths.first { $0.keyPath === keyPath }?.index }
    }

    /// The entry index of the key path made at `site`, if known.
    func index(ofSite site: UInt) -> Int? {
        withLock { state in
            state.sites.withUnsafeBufferPointer { sites in
                for known in sites where known.site == site { return known.index }
                return nil
            }
        }
    }

    func remember(_ keyPath: AnyKeyPath, index: Int) {
        withLock { state in
            guard !state.keyPaths.contains(where: { $0.keyPath === keyPath }) else { return }
            let same = state.keyPaths.indices.filter { state.keyPaths[$0].index == index }
            if same.count >= Self.limitPerProperty { state.keyPaths.remove(at: same[0]) }
            state.keyPaths.append((keyPath, index))
        }
    }

    func remember(site: UInt, index: Int) {
        withLock { state in
            guard !state.sites.contains(where: { $0.site == site }) else { return }
            state.sites.append((site, index))
        }
    }
}

/// What the table needs to know of an `@Observed` storage type: where its serial is, and how
/// to copy its value out of an object.
protocol ObservedLayout {
    static var valueType: Any.Type { get }
    /// The offset of `serial` inside the storage.
    static var serialOffset: Int { get }
    /// A copy of the value of the storage at `address`.
    static func value(at address: UnsafeRawPointer) -> Any
}

extension Observed: ObservedLayout {
    static var valueType: Any.Type { Value.self }

    static var serialOffset: Int {
        // `serial` is a stored property of the struct: the offset always exists.
        MemoryLayout<Self>.offset(of: \Self.serial)!
    }

    static func value(at address: UnsafeRawPointer) -> Any {
        address.assumingMemoryBound(to: Self.self).pointee.value
    }
}

extension ObservableModelBase {
    /// The names of this object's observable properties — `@Observed` and synthetic
    /// (`@Computed`, `@Lazy`, `@Hybrid`) — superclass properties first, in declaration order.
    /// Each can be named in a string key path.
    ///
    /// Read from the class once and cached: reads no property of the object.
    ///
    /// - Complexity: O(1); the array is built once per class.
    public var observablePropertyNames: [String] {
        PropertyTable(self).observableNames
    }
}

extension PropertyTable {
    /// The names and value types of a class's `@Observed` properties, so string paths can be
    /// checked through nil links.
    struct Schema: Sendable {
        struct Property: @unchecked Sendable {  // Any.Type is an immutable metatype
            let name: String
            let valueType: Any.Type
        }

        let typeName: String
        let properties: [Property]

        init(_ table: PropertyTable, type: ObservableModelBase.Type) {
            typeName = table.typeName
            properties =
                table.entries.map { Property(name: $0.name, valueType: $0.valueType) }
                + table.synthetic.map { Property(name: $0.name, valueType: $0.valueType) }
        }

        /// Every class has one: it is read from the class, not from an instance.
        static func cached(for type: ObservableModelBase.Type) -> Schema? {
            Schema(PropertyTable.of(type), type: type)
        }
    }

    /// `type` without any `Optional` around it.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        if let optional = optionalType(type) { return unwrapped(optional.wrappedType) }
        return type
    }

    /// The `ObservableModel` subclass a value of `type` holds, looking through `Optional`.
    static func modelType(in type: Any.Type) -> ObservableModelBase.Type? {
        if let model = type as? ObservableModelBase.Type { return model }
        if let optional = optionalType(type) { return modelType(in: optional.wrappedType) }
        return nil
    }

    /// Whether a value of `type` might still be a model at run time (existentials).
    static func mayHoldModel(_ type: Any.Type) -> Bool {
        if let optional = optionalType(type) { return mayHoldModel(optional.wrappedType) }
        // Swift has no API to ask whether a metatype is an existential (`Any`, `AnyObject`, a
        // protocol).
        return kind(of: type) == 0x303  // `MetadataKind.Existential`
    }

    /// `type` as an `Optional`, whose wrapped type can be asked; nil for any other type.
    /// The cast runs only for an `Optional`'s metadata: a cast of a type not asked about
    /// before scans every protocol conformance of the process, and fails for all others.
    private static func optionalType(_ type: Any.Type) -> (any _OptionalType.Type)? {
        guard kind(of: type) == optionalKind else { return nil }
        return type as? any _OptionalType.Type
    }

    /// The kind of `type`'s metadata: its first word, part of the stable ABI on every
    /// platform (`MetadataKind`; never signed, unlike the pointers after it).
    static func kind(of type: Any.Type) -> UInt {
        unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self)
    }

    /// `MetadataKind.Struct`: `Observed`, `Computed`, `Lazy` and `Hybrid` are structs.
    static var structKind: UInt { 0x200 }
    /// `MetadataKind.Optional`.
    static var optionalKind: UInt { 0x202 }

    /// Where the fields of `ObservableModelBase` itself end: the fields of a model class from
    /// there on are its own (or its model superclasses'), which come after the base's.
    static let baseFieldsEnd: Int = {
        var end = 0
        _ = _forEachField(of: ObservableModelBase.self, options: _EachFieldOptions(rawValue: 1)) { _, offset, _, _ in
            end = max(end, offset + 1)
            return true
        }
        return end
    }()
}

/// Lets reflection see the wrapped type of an `Optional` metatype.
protocol _OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
