/// Parses and checks dotted string key paths such as `"currentUser.address.zipCode"`.
///
/// Components are `@Observed` property names, or `*` for every `@Observed` property of the
/// object at that level. On an observed collection, components name its parts (see
/// `docs/Collections.md`): `count`, `#4` (index-following), `4` (object-following, bound at
/// parse time), a dictionary key, or a set member's key (`&2`).
///
/// Checks happen up front as far as they can: the root's properties always; further
/// components where the type at that level is known (an object is there now, or the declared
/// type is a model class, whose names are read from the class). A value met at run time that
/// is not observable simply ends the reachable part of the path, as nil does.
enum StringKeyPath {
    static func parse(_ path: String, root: ObservableModelBase) throws(KeyPathError) -> ObservedPath {
        guard !path.isEmpty else { throw .emptyPath }
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        var steps: [PathStep] = []
        steps.reserveCapacity(components.count)
        for (offset, component) in components.enumerated() {
            let position = offset + 1
            if component.isEmpty { throw .emptyComponent(path: path, position: position) }
            if component == "*" {
                steps.append(.wildcard)
                continue
            }
            if let collectionSteps = try collectionSteps(
                component, after: steps, root: root, path: path, position: position)
            {
                steps.append(contentsOf: collectionSteps)
                continue
            }
            guard isPropertyName(component) else {
                throw .unsupportedComponent(String(component), path: path, position: position)
            }
            steps.append(.name(String(component)))
        }
        try check(steps, path: path, root: root)
        return ObservedPath(steps: steps)
    }

    /// A collection element component (`#4`, `&2`, or an object-following `4`, which is
    /// bound here to the object at that index now); nil for other components.
    private static func collectionSteps(
        _ component: Substring, after steps: [PathStep], root: ObservableModelBase, path: String, position: Int
    ) throws(KeyPathError) -> [PathStep]? {
        let isNumber = { (text: Substring) in !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } }
        let isElementName = component.first.map { $0 == "#" || $0 == "&" } ?? false
        guard isElementName && isNumber(component.dropFirst()) || isNumber(component) else { return nil }
        let holder: Any? =
            if steps.isEmpty { root } else if case .value(let value) = ObservedPath(steps: steps).endpoint(from: root) {
                value
            } else { nil }
        if isElementName {
            // Resolved when walked (the collection may change); rejected now only on something
            // that is there and is not a collection.
            if let holder, !(PathStep.model(in: holder) is any ObservedCollectionPaths), !isNilOptional(holder) {
                throw .unsupportedComponent(String(component), path: path, position: position)
            }
            // An array's index: through a cell per index (see `IndexCell.pathSteps`). Where no
            // array is there yet, the component stays a name, resolved on whatever collection
            // the walk meets (a storage per index on an array: O(k²) inserts with k of them).
            if component.first == "#", let index = Int(component.dropFirst()),
                let holder, PathStep.model(in: holder) is any IndexCellProviding
            {
                return IndexCell.pathSteps(index: index)
            }
            return [.name(String(component))]
        }
        guard let collection = holder.flatMap(PathStep.model(in:)) as? any ObservedCollectionPaths,
            let index = Int(component)
        else { throw .unsupportedComponent(String(component), path: path, position: position) }
        return try collection.followingSteps(at: index, path: path, position: position)
    }

    /// Whether `value` is an `Optional` holding nothing (a collection may appear there later).
    private static func isNilOptional(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// Could be a Swift identifier: no whitespace, control characters or ASCII punctuation
    /// other than `_`, and no leading digit. Swift allows most other Unicode (letters of any
    /// script, emoji), so those pass here and are then looked up like any name.
    private static func isPropertyName(_ component: Substring) -> Bool {
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

    /// Follows the static types as far as they are known and reports the first bad component.
    private static func check(_ steps: [PathStep], path: String, root: ObservableModelBase) throws(KeyPathError) {
        var schema: PropertyTable.Schema? = PropertyTable.Schema(PropertyTable(root), type: type(of: root))
        var instance: ObservableModelBase? = root
        for (offset, step) in steps.enumerated() {
            guard case .name(let name) = step else {
                // Past a `*` the path fans out over properties of different types.
                return
            }
            guard let currentSchema = schema else { return }
            // Past a collection, components name elements, keys and members: checked when walked.
            if instance is any ObservedCollectionPaths { return }
            if name.first == "#" || name.first == "&" {
                throw .unsupportedComponent(name, path: path, position: offset + 1)
            }
            guard let property = currentSchema.properties.first(where: { $0.name == name }) else {
                throw .unknownProperty(name, type: currentSchema.typeName, path: path, position: offset + 1)
            }
            guard offset + 1 < steps.count else { return }
            let valueType = property.valueType
            let next = instance.flatMap { PropertyTable($0).entry(named: name)?.value(in: $0) }
                .flatMap(PathStep.model(in:))
            if let next {
                instance = next
                schema = PropertyTable.Schema(PropertyTable(next), type: type(of: next))
            } else if let modelType = PropertyTable.modelType(in: valueType),
                modelType is any ObservedCollectionPaths.Type
            {
                return
            } else if let modelType = PropertyTable.modelType(in: valueType) {
                instance = nil
                schema = PropertyTable.Schema.cached(for: modelType)
            } else if PropertyTable.mayHoldModel(valueType) {
                // `Any`, `AnyObject` or a protocol: only run time can tell.
                return
            } else {
                let nextName: String
                if case .name(let name) = steps[offset + 1] { nextName = name } else { nextName = "*" }
                if nextName.first == "#" || nextName.first == "&" {
                    throw .unsupportedComponent(nextName, path: path, position: offset + 2)
                }
                throw .notObservable(
                    nextName, type: String(describing: PropertyTable.unwrapped(valueType)), path: path,
                    position: offset + 2)
            }
        }
    }
}
