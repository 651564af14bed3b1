import Synchronization

/// One segment of an ``ObservedPath``.
enum PathStep: Sendable {
    /// A typed key path segment, applied to objects of its root type (build it with
    /// `PathStep.key(_:)`).
    ///
    /// Boxed: a step is copied on every read of a walk, and a box costs one retain to copy where
    /// the key's three references cost three; the box is immutable, so a walk reads the key's
    /// closures in place.
    case typed(TypedKeyBox)
    /// A property named in a string key path, looked up by reflection.
    case name(String)
    /// `*`: every `@Observed` property of the object.
    case wildcard

    /// A typed key path segment.
    static func key(_ key: TypedKey) -> PathStep {
        .typed(TypedKeyBox(key))
    }

    /// Serial used for `*` edges; real storages are numbered from 1.
    static let wildcardSerial: UInt64 = 0

    /// The storage serial and value this step reads on `object`, or nil when `object` has no
    /// such observable property.
    func resolve(on object: ObservableModelBase) -> (serial: UInt64, value: Any)? {
        switch self {
        case .typed(let box):
            let key = box.key
            // Known from an earlier registration on this object: a plain read, no capture.
            if let serial = object.existingRegistry?.cachedSerial(for: key.keyPath) {
                return key.read(object).map { (serial, $0) }
            }
            if let serial = Self.serialFromClass(of: key, on: object) { return key.read(object).map { (serial, $0) } }
            // The key path must read exactly one @Observed storage, of this object, with the
            // key path's own value type: `\.zip` qualifies, `\.zip.count` and `\.a.b` don't.
            let (value, recording) = AccessCapture.capture { key.read(object) }
            guard let value, let serial = Self.singleAccess(recording, on: object, valueType: key.valueType) else {
                return nil
            }
            // A collection's key serial is not cached: the key path holds its key, which the
            // cache would keep alive for the collection's life (see `KeySerial`).
            if !KeySerial.contains(serial) {
                object.registry.remember(key.keyPath, serial: serial)
                PropertyTable(object).learn(key.keyPath, serial: serial, on: object)
            }
            return (serial, value)
        case .name(let name):
            // Collections name their count, indexes, keys and members (Collections/).
            if let collection = object as? any ObservedCollectionPaths { return collection.resolve(component: name) }
            // The class's table: reads this property's serial and value, no other property.
            guard let entry = PropertyTable(object).entry(named: name) else { return Self.synthetic(name, on: object) }
            return (entry.serial(in: object), entry.value(in: object))
        case .wildcard:
            return nil
        }
    }

    /// `resolve(on:)` for a path walk: the value is read under `object`'s registry lock and
    /// store bit, which marks the object as read by paths (its setters take the bit from then
    /// on), so a walk may read properties that other threads write.
    func readForWalk(on object: ObservableModelBase) -> (serial: UInt64, value: Any)? {
        var version = 0
        return readForWalk(on: object, version: &version)
    }

    /// `readForWalk(on:)`, also setting `version` to the object's store version at the read.
    func readForWalk(on object: ObservableModelBase, version: inout Int) -> (serial: UInt64, value: Any)? {
        switch self {
        case .typed(let box):
            return Self.readForWalk(box.key, on: object, version: &version) { box.key.read($0) }
        case .name(let name):
            // A synthetic property is read outside the registry lock (reading it may compute
            // it, which runs user code), and never counts as unwritten: its value changes
            // without a store on its object.
            if let read = Self.synthetic(name, on: object) {
                version = -1
                return read
            }
            let read = object.registry.readForPathVersioned { _ in resolve(on: object) }
            version = read?.version ?? 0
            return read?.value ?? nil
        case .wildcard:
            return nil
        }
    }

    /// `readForWalk(on:version:)` for a middle step: the model the value holds (nil for none),
    /// read through typed code for typed keys, without an `Any` box or a dynamic cast.
    func readModelForWalk(on object: ObservableModelBase, registry: Registry, version: inout Int) -> (
        serial: UInt64, next: ObservableModelBase?
    )? {
        guard case .typed(let box) = self else {
            return readForWalk(on: object, version: &version).map { ($0.serial, Self.model(in: $0.value)) }
        }
        return Self.readModelForWalk(box, on: object, registry: registry, version: &version)
    }

    /// `readModelForWalk(on:registry:version:)` for a typed step's key.
    static func readModelForWalk(
        _ box: TypedKeyBox, on object: ObservableModelBase, registry: Registry, version: inout Int
    )
        -> (serial: UInt64, next: ObservableModelBase?)?
    {
        if box.readsSyntheticProperty(of: object) {
            return Self.readSyntheticForWalk(box.key, on: object, version: &version) { box.key.readModel($0) }.map {
                ($0.serial, $0.value)
            }
        }
        // The usual case, a typed model step already resolved on this object: one lock round
        // trip that passes the reader and the key path along, copying neither the key nor its
        // closures (each copy retains three references).
        if let read = registry.readCachedModel(box, on: object) {
            guard let next = read.next else { return nil }
            version = read.version
            return (read.serial, next)
        }
        return Self.readForWalk(box.key, on: object, version: &version) { box.key.readModel($0) }.map {
            ($0.serial, $0.value)
        }
    }

    /// `readModelForWalk` for a retarget's first read: the property `serial` of `object`, whose
    /// set on this thread started the retarget (`Subscription.retargetAlone`), read without the
    /// registry's lock and the store bit. Returns what the key's `modelReader` read (nil: `object`
    /// is not of the key's type; `.some(nil)`: no model there) and the version; nil, reading
    /// nothing, where the usual route must read (a synthetic or computed property, a key
    /// without a model reader, an object no path has read yet).
    ///
    /// Why no lock is needed: each property has one writing thread at a time (docs/Reliability.md,
    /// "Threads and paths"), and this is the thread that has just written `serial`, inside its
    /// setter, which has given its store bit back and runs no user code before the retarget; a
    /// store of the same property by another thread now would race with that setter's own
    /// store. Other threads only read the property (walks, under the bit), which a read here
    /// doesn't race with. (The manual triggers, `propertyDidChange(_:)`, read the property
    /// without the bit on the calling thread too.) The edge the read goes with is checked under
    /// the extras' lock before anything moves (`Subscription.moveEdges(in:path:past:on:serial:to:hooks:)`):
    /// it names `serial` on `object`, so the key reads that property. The version is loaded
    /// before the read, so that a walk that keeps its keys (`WalkMemo`) reads again after any
    /// store of `object` after it (a version with the store bit set matches no later one); a
    /// retarget alone (`ObservedPath.readPast`) doesn't: no other thread stores this property.
    static func readChangedModel(_ box: TypedKeyBox, on object: ObservableModelBase, serial: UInt64) -> (
        next: ObservableModelBase??, version: Int
    )? {
        guard serial != wildcardSerial, !Registry.isComputed(serial), box.key.modelReader != nil,
            object._edgeCount.load(ordering: .relaxed) & ObservableModelBase._readByPaths != 0,
            !box.readsSyntheticProperty(of: object)
        else { return nil }
        let version = object.storeVersion
        // Called in place, not bound first (nor through `unsafelyUnwrapped`, a getter that
        // hands out a copy): a copy of the closure retains its context.
        let next = box.key.modelReader!(object, box.key.keyPath)
        return (next, version)
    }

    /// A typed key's read for a walk, under `object`'s registry lock and store bit: the serial
    /// from the object's cache, the class's table, or (the first time) an access capture.
    private static func readForWalk<T>(
        _ key: TypedKey, on object: ObservableModelBase, version: inout Int, _ read: (ObservableModelBase) -> T?
    ) -> (serial: UInt64, value: T)? {
        let registry = object.registry
        // A computed property is read outside the lock (reading it may compute it, which runs
        // user code), and never counts as unwritten: its value changes without a store on its
        // object. A key path not resolved here yet is resolved first, outside the lock too, as
        // any first resolution of a key path on an object is (see the Threading guarantee).
        var known = registry.cachedSerial(for: key.keyPath)
        if known == nil, PropertyTable(object).entry(forKeyPath: key.keyPath) == nil {
            let (value, recording) = AccessCapture.capture { read(object) }
            guard let value, let serial = singleAccess(recording, on: object, valueType: key.valueType) else {
                return nil
            }
            registry.remember(key.keyPath, serial: serial)
            PropertyTable(object).learn(key.keyPath, serial: serial, on: object)
            if Registry.isComputed(serial) {
                version = -1
                return (serial, value)
            }
            known = serial
        }
        if let serial = known, Registry.isComputed(serial) {
            version = -1
            return read(object).map { (serial, $0) }
        }
        var isNew = false
        let result =
            registry.readForPathVersioned { knownSerial -> (serial: UInt64, value: T)? in
                if let serial = knownSerial(key.keyPath) { return read(object).map { (serial, $0) } }
                // Known for the class: the storage's immutable serial, read at its offset.
                if let entry = PropertyTable(object).entry(forKeyPath: key.keyPath) {
                    isNew = true
                    return read(object).map { (entry.serial(in: object), $0) }
                }
                // Unknown: resolved through access capture, still under the lock.
                let (value, recording) = AccessCapture.capture { read(object) }
                guard let value, let serial = singleAccess(recording, on: object, valueType: key.valueType)
                else { return nil }
                isNew = true
                return (serial, value)
            }
        guard let result, let read = result.value else { return nil }
        version = result.version
        if isNew, !KeySerial.contains(read.serial) {
            registry.remember(key.keyPath, serial: read.serial)
            PropertyTable(object).learn(key.keyPath, serial: read.serial, on: object)
        }
        return read
    }

    /// A typed key's read of a synthetic property (`@Computed`, `@Lazy`, `@Hybrid`) in the middle
    /// of a walk: with no lock held and without the store bit, like a named synthetic step
    /// (reading it may compute it, which runs user code; its value is cached under a lock of its
    /// own). (A leaf's value, read for an endpoint, still takes `readForWalk(on:version:)`.)
    /// Its value changes without a store on its object, so it never counts as unwritten
    /// (`version` -1): a walk through it is always read again after attaching (see
    /// `WalkMemo.revalidate()`). An invalidation that the read again does not see found the
    /// attached edge, and recomputes and tells it at the end of its tick.
    private static func readSyntheticForWalk<T>(
        _ key: TypedKey, on object: ObservableModelBase, version: inout Int, _ read: (ObservableModelBase) -> T?
    ) -> (serial: UInt64, value: T)? {
        guard let serial = key.resolveSerial(on: object), let value = read(object) else { return nil }
        version = -1
        return (serial, value)
    }

    /// The serial of the one `@Observed` storage of `object`, with the key path's own value
    /// type, that a capture saw: `\.zip` qualifies, `\.zip.count` and `\.a.b` don't.
    static func singleAccess(_ recording: AccessCapture.Recording, on object: ObservableModelBase, valueType: Any.Type)
        -> UInt64?
    {
        guard recording.count == 1, let access = recording.first, access.object == ObjectIdentifier(object),
            access.valueType == valueType
        else { return nil }
        return access.serial
    }

    /// The storage serial alone, for a leaf whose value isn't needed: after the first
    /// registration of a key path on an object, this touches no key path machinery at all.
    func resolveSerial(on object: ObservableModelBase) -> UInt64? {
        switch self {
        case .typed(let box):
            return box.key.resolveSerial(on: object)
        case .name(let name):
            if object is any ObservedCollectionPaths { return resolve(on: object)?.serial }
            if let serial = PropertyTable(object).entry(named: name)?.serial(in: object) { return serial }
            return Self.synthetic(name, on: object)?.serial
        case .wildcard:
            return nil
        }
    }

    /// The synthetic property (`@Computed`, `@Lazy`, `@Hybrid`) of `object` named `name`: its
    /// serial and its value, cached or computed now. Computing it also wires its dependencies,
    /// so a token made on it is told of their changes (observing evaluates at registration).
    private static func synthetic(_ name: String, on object: ObservableModelBase) -> (serial: UInt64, value: Any)? {
        guard let entry = PropertyTable(object).syntheticEntry(named: name) else { return nil }
        let state = entry.state(in: object)
        return (state.serial, state.value(of: object))
    }

    /// Reads every `@Computed` and `@Hybrid` property of `object` that has no valid value (with
    /// tracked or declared dependencies), so that a `*` edge made on it hears of their
    /// dependencies' changes (observing evaluates at registration). `@Lazy` ones stay unloaded
    /// until read: they have no dependencies.
    static func evaluateSyntheticProperties(of object: ObservableModelBase) {
        for entry in PropertyTable(object).synthetic {
            let state = entry.state(in: object)
            if state.hasDependencies, !state.isValid { _ = state.value(of: object) }
        }
    }

    /// The serial of the storage `key` reads on `object`, if the key path was resolved on
    /// another object of the same class: reads that storage's immutable serial, not its value,
    /// and remembers it on the object.
    fileprivate static func serialFromClass(of key: TypedKey, on object: ObservableModelBase) -> UInt64? {
        guard let entry = PropertyTable(object).entry(forKeyPath: key.keyPath) else { return nil }
        let serial = entry.serial(in: object)
        object.registry.remember(key.keyPath, serial: serial)
        return serial
    }

    /// The model object inside `value`, looking through `Optional`.
    static func model(in value: Any) -> ObservableModelBase? {
        value as? ObservableModelBase
    }

    /// The class instance inside `value`, looking through `Optional`; nil for other values.
    static func reference(in value: Any) -> AnyObject? {
        if let optional = value as? any _OptionalReference { return optional._reference }
        return type(of: value) is AnyObject.Type ? value as AnyObject : nil
    }
}

/// A type-erased typed key path segment.
///
/// Built by inlinable code in the caller's module, so `read` is specialized for the concrete
/// key path and applies it as a direct property access instead of through the key path
/// runtime (about a hundred times fewer instructions).
///
/// `@unchecked Sendable`: key path objects are immutable, and `read` only applies one.
@usableFromInline
struct TypedKey: @unchecked Sendable {
    @usableFromInline
    let keyPath: AnyKeyPath
    /// Applies `keyPath` (passed back in, so the closure captures nothing and, specialized,
    /// needs no allocation) to an object of its root type; nil for any other object.
    @usableFromInline
    let reader: (ObservableModelBase, AnyKeyPath) -> Any?
    /// `reader` for the middle of a path, where only the model the value holds matters: nil for
    /// an object of another type, `.some(nil)` for a value that holds no model. Specialized in
    /// the caller's module like `reader`, it reads the property without boxing it into `Any` and
    /// casts nothing at run time (a path walk's read of `owner: Item?`: ≈ 2,500 instructions
    /// through `Any`, a few dozen this way). Nil for keys built from a custom reader.
    @usableFromInline
    let modelReader: ((ObservableModelBase, AnyKeyPath) -> ObservableModelBase??)?

    var valueType: Any.Type { type(of: keyPath).valueType }

    func read(_ object: ObservableModelBase) -> Any? {
        reader(object, keyPath)
    }

    /// `PathStep.resolveSerial(on:)` for this key, without building a step (a boxed value).
    func resolveSerial(on object: ObservableModelBase) -> UInt64? {
        // The registry borrowed: a retarget resolves its new leaf here on every set that moves it.
        if let serial = object.withExistingRegistry({ $0.cachedSerial(for: keyPath) }) { return serial }
        if let serial = PathStep.serialFromClass(of: self, on: object) { return serial }
        return PathStep.key(self).resolve(on: object)?.serial
    }

    /// The model the value holds, for a walk through the middle of a path (see `modelReader`).
    func readModel(_ object: ObservableModelBase) -> ObservableModelBase?? {
        if let modelReader { return modelReader(object, keyPath) }
        return read(object).map(PathStep.model(in:))
    }

    /// A key whose `reader` applies `keyPath` some other way (see `KeyPathChain.Segment`).
    init(
        keyPath: AnyKeyPath, reader: @escaping (ObservableModelBase, AnyKeyPath) -> Any?,
        modelReader: ((ObservableModelBase, AnyKeyPath) -> ObservableModelBase??)? = nil
    ) {
        self.keyPath = keyPath
        self.reader = reader
        self.modelReader = modelReader
    }

    /// A key whose key path is asked of the closure that applies it (see `_KeyPathAccess`);
    /// never inlined (nor specialized for the closure), so that the closure stays the key
    /// path's only user where it is built.
    @usableFromInline @inline(never)
    init(keyPathOf keyPath: () -> AnyKeyPath, reader: @escaping (ObservableModelBase, AnyKeyPath) -> Any?) {
        self.keyPath = keyPath()
        self.reader = reader
        modelReader = nil
    }

    @inlinable @inline(__always)
    init<Root: ObservableModelBase, Value>(_ keyPath: KeyPath<Root, Value>) {
        self.keyPath = keyPath
        reader = Self.reader(Root.self, Value.self)
        modelReader = nil
    }

    /// A reader that applies the key path it is handed, a `KeyPath<Root, Value>`; it captures
    /// nothing, so it needs no context.
    @inlinable @inline(__always)
    static func reader<Root: ObservableModelBase, Value>(
        _ root: Root.Type, _ value: Value.Type
    ) -> (ObservableModelBase, AnyKeyPath) -> Any? {
        // A class check on the metadata, cheaper than `as?` (a generic dynamic cast).
        { object, keyPath in
            guard object is Root else { return nil }
            return unsafeDowncast(object, to: Root.self)[
                keyPath: unsafeDowncast(keyPath, to: KeyPath<Root, Value>.self)]
        }
    }

    @inlinable @inline(__always)
    init<Root: ObservableModelBase>(partial keyPath: PartialKeyPath<Root>) {
        self.keyPath = keyPath
        reader = { object, keyPath in
            guard object is Root else { return nil }
            return unsafeDowncast(object, to: Root.self)[
                keyPath: unsafeDowncast(keyPath, to: PartialKeyPath<Root>.self)]
        }
        modelReader = nil
    }
}

/// A `TypedKey` not made yet: the closure that makes the key path, and the reader. Built by the
/// inlinable single-key-path entry points (`_KeyPathAccess.source`), so that a token on a key
/// path already resolved is attached without asking the runtime for the key path object (a
/// call that hands it out retained, ≈ 100 instructions with the key's making and releasing).
///
/// `@unchecked Sendable`: the closure only makes an (immutable) key path, and `reader` only
/// applies one.
@usableFromInline
struct _KeySource: @unchecked Sendable {
    /// The closure that makes the key path, alone in a struct (see `site`).
    @usableFromInline
    struct Maker {
        @usableFromInline
        let make: () -> AnyKeyPath

        @inlinable @inline(__always)
        init(_ make: @escaping () -> AnyKeyPath) {
            self.make = make
        }
    }

    @usableFromInline
    let maker: Maker
    @usableFromInline
    let reader: (ObservableModelBase, AnyKeyPath) -> Any?

    @inlinable @inline(__always)
    init(keyPathOf: @escaping () -> AnyKeyPath, reader: @escaping (ObservableModelBase, AnyKeyPath) -> Any?) {
        maker = Maker(keyPathOf)
        self.reader = reader
    }

    /// The key, with its key path made now.
    @usableFromInline
    var key: TypedKey { TypedKey(keyPathOf: maker.make, reader: reader) }

    /// The place that makes the key path, when it is a place of its own, else 0: the address of
    /// the maker's code when the closure has no context.
    ///
    /// Why that identifies the key path: a closure without a context is a plain function of
    /// no arguments, so what it returns depends on its code alone; the key path it makes is
    /// the same one (for a literal, the same object) on every call. Where the key path is a
    /// literal the optimizer moves it into the closure (see `_KeyPathAccess`), which then
    /// captures nothing; a key path that is a value at the call site (a variable, a parameter),
    /// or code not optimized, leaves a context, and the key is made as before. Code addresses
    /// are never reused while the program runs (Swift images are not unloaded), so an address
    /// remembered as a site names the same key path for good, and an address of code is never
    /// a key path object's (whose identities the same caches keep).
    var site: UInt {
        // A closure is two words: its code's address and its context (a reference, nil when it
        // captures nothing). Read through `Maker`, whose one field it is: the closure itself,
        // handed to generic code, would be wrapped in a thunk with a context of its own. The
        // check on the layout folds away.
        let word = MemoryLayout<UInt>.size
        guard MemoryLayout<Maker>.size == 2 * word else { return 0 }
        return withUnsafeBytes(of: maker) { closure in
            closure.load(fromByteOffset: word, as: UInt.self) == 0 ? closure.load(as: UInt.self) : 0
        }
    }
}

/// A `TypedKey` in a box of its own, for `PathStep.typed`: copying the step retains the box
/// alone, and the key inside is read in place.
final class TypedKeyBox: Sendable {
    let key: TypedKey

    /// What the key reads, learned the first time it is read as a walk's middle step: 0 not
    /// known yet, 1 an `@Observed` storage (or nothing), 2 a synthetic property.
    private let kind = Atomic<UInt8>(0)

    /// The class of the last object the key resolved on through the class's table, and where
    /// that class keeps the resolved storage's immutable serial: the class's metadata address
    /// shifted 16 bits left, or'ed with the serial's byte offset in the object; 0 if none.
    /// One word, so racing threads can only replace one right answer with another.
    private let lastSerialOffset = Atomic<UInt>(0)

    init(_ key: TypedKey) {
        self.key = key
    }

    /// `key.resolveSerial(on:)`, for a retarget's leaf: an object of the class the key last
    /// resolved on gives its serial with one load (the serial is immutable), without the
    /// registry's lock (the attach that follows takes it).
    @inline(__always)
    func resolveSerial(on object: ObservableModelBase) -> UInt64? {
        let id = UInt(bitPattern: ObjectIdentifier(type(of: object)))
        let last = lastSerialOffset.load(ordering: .relaxed)
        if last != 0, last >> 16 == id {
            return UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
                .load(fromByteOffset: Int(last & 0xFFFF), as: UInt64.self)
        }
        return resolveSerialAndKeep(on: object, id: id)
    }

    @inline(never)
    private func resolveSerialAndKeep(on object: ObservableModelBase, id: UInt) -> UInt64? {
        guard let serial = key.resolveSerial(on: object) else { return nil }
        // Kept for an `@Observed` storage of the class's table (not a synthetic property nor a
        // collection's index), when the class and the offset fit the word.
        if UInt.bitWidth == 64, id >> 48 == 0, let entry = PropertyTable(object).entry(forKeyPath: key.keyPath),
            (0..<(1 << 16)).contains(entry.serialOffset), entry.serial(in: object) == serial
        {
            lastSerialOffset.store(id << 16 | UInt(entry.serialOffset), ordering: .relaxed)
        }
        return serial
    }

    /// Whether the key reads a synthetic property (`@Computed`, `@Lazy`, `@Hybrid`), which a
    /// walk reads with no lock held (see `PathStep.readSyntheticForWalk`). One relaxed load once
    /// known.
    @inline(__always)
    func readsSyntheticProperty(of object: ObservableModelBase) -> Bool {
        let known = kind.load(ordering: .relaxed)
        if known != 0 { return known == 2 }
        return learnKind(on: object)
    }

    /// Finds out what the key reads, from the storage it resolves to on `object`. A class
    /// without synthetic properties needs no resolution. Otherwise the key is resolved as a
    /// token's first key path is (`TypedKey.resolveSerial(on:)`: the object's cache, the class's
    /// table, or once per class a read through the key path, with no lock held).
    @inline(never)
    private func learnKind(on object: ObservableModelBase) -> Bool {
        let table = PropertyTable(object)
        guard !table.synthetic.isEmpty else {
            kind.store(1, ordering: .relaxed)
            return false
        }
        // Not resolvable here: decided on an object that resolves it.
        guard let serial = key.resolveSerial(on: object) else { return false }
        let isSynthetic = table.synthetic.contains { $0.state(in: object).serial == serial }
        kind.store(isSynthetic ? 2 : 1, ordering: .relaxed)
        return isSynthetic
    }
}

/// What a path's middle value can hold, decided once per chain segment from its type, so that a
/// walk reads the model with a reinterpretation instead of a dynamic cast per read.
@usableFromInline
enum _ModelValueKind {
    /// A model class (`Item`): one strong reference, laid out as `ObservableModel`.
    case model
    /// An optional model class (`Item?`): laid out as `ObservableModel?`.
    case optionalModel
    /// Anything else: read through `Any` (`PathStep.model(in:)`).
    case other

    /// The kind of `Value`. Only single-reference layouts qualify (a chain's middle values are
    /// classes, but the leaf's type is anything, and the check costs nothing at run time).
    @usableFromInline
    static func of<Value>(_ type: Value.Type) -> _ModelValueKind {
        guard MemoryLayout<Value>.size == MemoryLayout<ObservableModelBase?>.size else { return .other }
        if type is ObservableModelBase.Type { return .model }
        if type is any _OptionalModel.Type { return .optionalModel }
        return .other
    }
}

/// `Optional<Model>` for a model class (see `_ModelValueKind.optionalModel`).
@usableFromInline
protocol _OptionalModel {}

extension Optional: _OptionalModel where Wrapped: ObservableModelBase {}
