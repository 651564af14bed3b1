/// The `@Observed` properties of an object, found by reflection.
///
/// Names come from the declarations themselves: the compiler stores `@Observed var zipCode`
/// as `_zipCode`, and `Mirror` reports that label. Nothing is spelled twice, so nothing can
/// drift out of sync. Reflection is slow (microseconds), so only string key paths,
/// introspection and debug descriptions use it; typed key paths and setters never do.
struct PropertyTable {
    struct Entry {
        let name: String
        let storage: any ObservedStorage
    }

    let entries: [Entry]

    init(_ object: ObservableModel) {
        var levels: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            levels.append(current)
            mirror = current.superclassMirror
        }
        var entries: [Entry] = []
        // Superclass properties first: declaration order from the root class down.
        for level in levels.reversed() {
            for child in level.children {
                guard let label = child.label, label.hasPrefix("_"),
                    let storage = child.value as? any ObservedStorage
                else { continue }
                entries.append(Entry(name: String(label.dropFirst()), storage: storage))
            }
        }
        self.entries = entries
    }

    func entry(named name: String) -> Entry? {
        entries.first { $0.name == name }
    }

    func name(ofSerial serial: UInt64) -> String? {
        entries.first { $0.storage.serial == serial }?.name
    }
}

extension ObservableModel {
    /// The names of this object's `@Observed` properties, superclass properties first.
    ///
    /// - Complexity: O(*p*) reflection over the object's stored properties; meant for tools and
    ///   debugging, not hot paths.
    public var observablePropertyNames: [String] {
        PropertyTable(self).entries.map(\.name)
    }
}

extension PropertyTable {
    /// The names and value types of a class's `@Observed` properties, remembered per class
    /// once an instance has been reflected, so string paths can be checked through nil links.
    struct Schema: Sendable {
        struct Property: @unchecked Sendable {  // Any.Type is an immutable metatype
            let name: String
            let valueType: Any.Type
        }

        let typeName: String
        let properties: [Property]

        private static let cache = Locked<[ObjectIdentifier: Schema]>(state: [:])

        init(_ table: PropertyTable, type: ObservableModel.Type) {
            typeName = String(describing: type)
            properties = table.entries.map { Property(name: $0.name, valueType: Swift.type(of: $0.storage).valueType) }
            let schema = self
            Self.cache.withLock { $0[ObjectIdentifier(type)] = schema }
        }

        static func cached(for type: ObservableModel.Type) -> Schema? {
            cache.withLock { $0[ObjectIdentifier(type)] }
        }
    }

    /// `type` without any `Optional` around it.
    static func unwrapped(_ type: Any.Type) -> Any.Type {
        if let optional = type as? any _OptionalType.Type { return unwrapped(optional.wrappedType) }
        return type
    }

    /// The `ObservableModel` subclass a value of `type` holds, looking through `Optional`.
    static func modelType(in type: Any.Type) -> ObservableModel.Type? {
        if let model = type as? ObservableModel.Type { return model }
        if let optional = type as? any _OptionalType.Type { return modelType(in: optional.wrappedType) }
        return nil
    }

    /// Whether a value of `type` might still be a model at run time (existentials).
    static func mayHoldModel(_ type: Any.Type) -> Bool {
        if let optional = type as? any _OptionalType.Type { return mayHoldModel(optional.wrappedType) }
        // Swift has no API to ask whether a metatype is an existential (`Any`, `AnyObject`, a
        // protocol). The first word of type metadata is its kind, part of the stable ABI on
        // every platform; 0x303 is `MetadataKind.Existential`.
        let kind = unsafeBitCast(type, to: UnsafeRawPointer.self).load(as: UInt.self)
        return kind == 0x303
    }
}

/// Lets reflection see the wrapped type of an `Optional` metatype.
protocol _OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
