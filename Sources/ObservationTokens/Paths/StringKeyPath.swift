import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Parses and checks dotted string key paths such as `"currentUser.address.zipCode"`.
///
/// Components are `@Observed` property names, or `*` for every `@Observed` property of the
/// object at that level. On an observed collection, components name its parts (see
/// `docs/Collections.md`): `count`, `*` (every element), `#4` (index-following), `4`
/// (object-following, bound at parse time), a dictionary key, or a set member's key (`&2`,
/// bound to its member at parse time).
///
/// Checks happen up front, component by component, as far as the types are known: an object
/// that is there now, or the declared type (a model class, whose names are read from the
/// class; an observed collection, whose element type is its generic argument). A value met at
/// run time that is not observable simply ends the reachable part of the path, as nil does.
/// Past an element whose type only run time knows (`Any`, `AnyObject`, a protocol), each
/// component is checked on the object it reaches (see `RuntimeComponent`).
enum StringKeyPath {
    static func parse(_ path: String, root: ObservableModelBase) throws(KeyPathError) -> ObservedPath {
        try parse(path, level: PathLevel.of(root), PathParse(.instance))
    }

    /// `parse(_:root:)` from the root's class alone, for a source made before it is started on
    /// an object (``ObservationSource/path(_:)``): names are checked against the declared types;
    /// components that depend on the objects there (an object-following index) are checked for
    /// their syntax only.
    static func parse(_ path: String, rootType: ObservableModelBase.Type) throws(KeyPathError) -> ObservedPath {
        try parse(path, level: PathLevel.of(rootType, instance: nil, isElement: false), PathParse(.declared))
    }

    /// The paths of a string-path source starting on `root`, and whether one of them was bound
    /// to no object (its token's first delivery is then its last). A path that parsed against
    /// the declared types but not against the objects there now (one of an unexpected class)
    /// is a programming error: a trap in debug builds; release builds follow it as declared
    /// and say so once.
    static func parseStarting(
        _ paths: [String], declared: [ObservedPath], root: ObservableModelBase, fileID: StaticString, line: UInt
    ) -> (paths: [ObservedPath], startsDeparted: Bool) {
        var parsed: [ObservedPath] = []
        var startsDeparted = false
        for (path, declaredPath) in zip(paths, declared) {
            let parse = PathParse(.starting)
            do {
                parsed.append(try Self.parse(path, level: PathLevel.of(root), parse))
                startsDeparted = startsDeparted || parse.startsDeparted
            } catch {
                let message =
                    "the path \"\(path)\" observed at \(fileID):\(line) does not fit the objects it reaches now (\(error)); check the types of the values along it"
                #if DEBUG
                    _reportMisuse(message)
                #else
                    RuntimeComponentLog.logOnce(message)
                #endif
                parsed.append(declaredPath)
            }
        }
        return (parsed, startsDeparted)
    }

    private static func parse(_ path: String, level root: PathLevel, _ parse: PathParse) throws(KeyPathError)
        -> ObservedPath
    {
        guard !path.isEmpty else { throw .emptyPath }
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        // Empty components first, wherever they are (as before types are looked at).
        if let empty = components.firstIndex(where: \.isEmpty) {
            throw .emptyComponent(path: path, position: empty + 1)
        }
        var steps: [PathStep] = []
        steps.reserveCapacity(components.count)
        var level = root
        for (offset, component) in components.enumerated() {
            let (componentSteps, next) = try level.parse(
                String(component), path: path, position: offset + 1, parse)
            steps.append(contentsOf: componentSteps)
            level = next
        }
        return ObservedPath(steps: steps)
    }

    /// Could be a Swift identifier: no whitespace, control characters or ASCII punctuation
    /// other than `_`, and no leading digit. Swift allows most other Unicode (letters of any
    /// script, emoji), so those pass here and are then looked up like any name.
    static func isPropertyName(_ component: String) -> Bool {
        guard let first = component.first, !first.isNumber else { return false }
        return component.unicodeScalars.allSatisfy { scalar in
            if scalar == "_" { return true }
            if scalar.isASCII { return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) }
            let properties = scalar.properties
            return !properties.isWhitespace && properties.generalCategory != .control
                && properties.generalCategory != .format && properties.generalCategory != .unassigned
                && properties.generalCategory != .privateUse && properties.generalCategory != .surrogate
        }
    }

    /// Collection syntax: `#4`, `&2`, or a plain number.
    static func isElementSyntax(_ component: String) -> Bool {
        component.first == "#" || component.first == "&" || component.isASCIIDigits
    }
}

/// How a string path is parsed, and what parsing met.
final class PathParse {
    enum Mode {
        /// Against an object: every component is checked on what is there now.
        case instance
        /// Against the declared types only: components that depend on the objects there (an
        /// object-following index) are checked for their syntax, and stay names.
        case declared
        /// Against an object a source starts on: as `instance`, except that an object-following
        /// index beyond the end binds to no object rather than throwing.
        case starting
    }

    let mode: Mode
    /// Set when a `starting` parse bound a component to no object.
    var startsDeparted = false

    init(_ mode: Mode) { self.mode = mode }
}

/// What a string path reaches at some component, as far as parsing can tell: what the next
/// component may be, and what it becomes.
enum PathLevel {
    /// A model whose class is known: the class of the object there now, or the declared class.
    case model(PropertyTable.Schema, ObservableModelBase?)
    /// An observed collection type, and the collection there now, if any.
    case collection(any ObservedCollectionPaths.Type, (any ObservedCollectionPaths)?)
    /// A value that is not observable, of the named type: nothing may follow.
    case value(String)
    /// The properties of different types that a model's `*` fans out over, or a property whose
    /// declared type (`Any`, a protocol) holds nothing now: looked up when walked, unchecked.
    case unchecked
    /// Past a collection element whose type only run time knows: each component is checked on
    /// the object it reaches (see `RuntimeComponent`).
    case runtime

    /// The level of an object that is there now.
    static func of(_ object: ObservableModelBase) -> PathLevel {
        if let collection = object as? any ObservedCollectionPaths {
            return .collection(type(of: collection), collection)
        }
        return .model(PropertyTable.Schema(PropertyTable(object), type: type(of: object)), object)
    }

    /// The level of a value of `type`, or of `instance` if one is there now: a model property's
    /// value (`isElement` false) or a collection's element.
    static func of(_ type: Any.Type, instance: Any?, isElement: Bool) -> PathLevel {
        if let instance, let model = PathStep.model(in: instance) { return of(model) }
        let type = PropertyTable.unwrapped(type)
        if let modelType = type as? ObservableModelBase.Type {
            if let collectionType = modelType as? any ObservedCollectionPaths.Type {
                return .collection(collectionType, nil)
            }
            // Elements declared as the base class itself can be of any model class.
            if isElement, modelType == ObservableModelBase.self { return .runtime }
            return .model(PropertyTable.Schema.cached(for: modelType) ?? .empty(modelType), nil)
        }
        if PropertyTable.mayHoldModel(type) { return isElement ? .runtime : .unchecked }
        return .value(String(describing: type))
    }

    /// A collection's element (a dictionary's value), of the declared type `type`.
    static func element(_ type: Any.Type, instance: Any? = nil) -> PathLevel {
        of(type, instance: instance, isElement: true)
    }

    /// A value of `type` that is not observable.
    static func value(_ type: Any.Type) -> PathLevel {
        .value(String(describing: type))
    }

    /// The steps `component` becomes at this level, and the level after it.
    func parse(_ component: String, path: String, position: Int, _ parse: PathParse) throws(KeyPathError) -> (
        steps: [PathStep], next: PathLevel
    ) {
        switch self {
        case .model(let schema, let object):
            if component == "*" { return ([.wildcard], .unchecked) }
            guard !StringKeyPath.isElementSyntax(component), StringKeyPath.isPropertyName(component) else {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            guard let property = schema.properties.first(where: { $0.name == component }) else {
                throw .unknownProperty(component, type: schema.typeName, path: path, position: position)
            }
            let value = object.flatMap { PropertyTable($0).entry(named: component)?.value(in: $0) }
            return ([.name(component)], .of(property.valueType, instance: value, isElement: false))
        case .collection(let type, let collection):
            return try Self.parse(component, on: type, collection, path: path, position: position, parse)
        case .value(let typeName):
            if StringKeyPath.isElementSyntax(component) {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            throw .notObservable(component, type: typeName, path: path, position: position)
        case .unchecked:
            if component == "*" { return ([.wildcard], .unchecked) }
            // An element component is resolved on whatever collection the walk meets (an
            // object-following one needs the array there now).
            if component.first == "#" || component.first == "&" { return ([.name(component)], .unchecked) }
            guard StringKeyPath.isPropertyName(component) else {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            return ([.name(component)], .unchecked)
        case .runtime:
            if component == "*" { return ([.wildcard], .unchecked) }
            guard component.first == "#" || component.first == "&" || StringKeyPath.isPropertyName(component) else {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            return ([RuntimeComponent(name: component, path: path, position: position).step], .runtime)
        }
    }

    /// `parse` on a collection type, opened so that its static requirement can be called.
    private static func parse<Collection: ObservedCollectionPaths>(
        _ component: String, on type: Collection.Type, _ collection: (any ObservedCollectionPaths)?, path: String,
        position: Int, _ parse: PathParse
    ) throws(KeyPathError) -> (steps: [PathStep], next: PathLevel) {
        try Collection.pathComponent(
            component, on: collection as? Collection, path: path, position: position, parse: parse)
    }
}

extension PropertyTable.Schema {
    /// The schema of a class without `@Observed` properties.
    static func empty(_ type: ObservableModelBase.Type) -> PropertyTable.Schema {
        PropertyTable.Schema(PropertyTable.of(type), type: type)
    }
}

/// A string path component past a collection element whose type only run time knows: checked
/// on each object it reaches. A component the object doesn't have is a mistake in the path —
/// a trap naming the path in debug builds; in release builds the path is unreachable there and
/// a message says so once.
///
/// It becomes a typed step whose key path (`\ObservableModel.[_runtimeComponent: self]`) is
/// its own, so the caches that remember what a key path resolved to on a class work as for
/// any key path.
struct RuntimeComponent: Hashable, Sendable {
    let name: String
    let path: String
    let position: Int

    var step: PathStep {
        let component = self
        return .key(
            TypedKey(keyPath: \ObservableModelBase.[_runtimeComponent: self]) { object, _ in component.read(on: object)
            })
    }

    /// The value of the component on `object`, reporting the access as an `@Observed` getter
    /// does; nil (and a report) when `object` has no such part.
    func read(on object: ObservableModelBase) -> Any? {
        if object === RuntimeComponentLabel.probe { return RuntimeComponentLabel(name: name) }
        if let collection = object as? any ObservedCollectionPaths {
            guard let (serial, value) = collection.resolve(component: name) else {
                report(on: object)
                return nil
            }
            if isCapturingAccesses { _recordObservedAccess(object, serial: serial, valueType: Any?.self) }
            return value
        }
        let table = PropertyTable(object)
        if let entry = table.entry(named: name) {
            if isCapturingAccesses {
                _recordObservedAccess(object, serial: entry.serial(in: object), valueType: Any?.self)
            }
            return entry.value(in: object)
        }
        if let entry = table.syntheticEntry(named: name) {
            let state = entry.state(in: object)
            let value = state.value(of: object)
            if isCapturingAccesses { _recordObservedAccess(object, serial: state.serial, valueType: Any?.self) }
            return value
        }
        report(on: object)
        return nil
    }

    private func report(on object: ObservableModelBase) {
        let message =
            "string path \"\(path)\": \(type(of: object)) has no @Observed property '\(name)' (component \(position)). The element type is only known at run time, so the component is checked on each element it reaches; fix the path, or keep such elements out of the collection."
        #if DEBUG
            _reportMisuse(message)
        #else
            RuntimeComponentLog.logOnce(message)
        #endif
    }
}

extension ObservableModelBase {
    /// The key path of a `RuntimeComponent` step (its identity and value type); reads like the
    /// step.
    subscript(_runtimeComponent component: RuntimeComponent) -> Any? {
        component.read(on: self)
    }
}

/// What a `RuntimeComponent` step's reader returns for the probe: its name, for descriptions.
struct RuntimeComponentLabel {
    let name: String

    /// An object that no path reaches: asked of a step, it answers with its label.
    static let probe = RuntimeComponentProbe()

    /// The name of a `RuntimeComponent` step's key, or nil for other keys.
    static func name(of key: TypedKey) -> String? {
        guard key.keyPath is KeyPath<ObservableModelBase, Any?> else { return nil }
        return (key.read(probe) as? RuntimeComponentLabel)?.name
    }
}

/// See `RuntimeComponentLabel.probe`.
final class RuntimeComponentProbe: ObservableModelBase, @unchecked Sendable {}  // no state

/// Release builds: each message about a string path that doesn't fit the objects it meets, once.
enum RuntimeComponentLog {
    private static let logged = Locked<Set<String>>(state: [])

    static func logOnce(_ message: String) {
        guard logged.withLock({ $0.insert(message).inserted }) else { return }
        let line = "ObservationTokens: \(message)\n"
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            var text = line
            text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
        #else
            print(line, terminator: "")
        #endif
    }

    /// Whether `message` was logged (for tests).
    static func hasLogged(_ message: String) -> Bool {
        logged.withLock { $0.contains(message) }
    }

    /// Whether a message starting with `prefix` was logged (for tests).
    static func hasLogged(prefix: String) -> Bool {
        logged.withLock { $0.contains { $0.hasPrefix(prefix) } }
    }
}
