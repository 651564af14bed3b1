extension ValuePipeline {
    /// Binds the pipeline to a property named by a string path from `destination`, such as
    /// `"friend.name"`, following the path when an object on it is replaced.
    ///
    /// ```swift
    /// // friend.name ← clown.name, whoever the friend is
    /// let token = try clown.pipeline(of: \.name).bind(to: person, path: "friend.name")
    /// ```
    ///
    /// The last component names the `@Observed` property to write; the ones before it lead to
    /// the object that has it, as in a string key path (`docs/KeyPaths.md`; `*` and collection
    /// components are not allowed here). The property is written as its setter writes it: its
    /// observers hear of real changes only. When the path leads to a new object, that object
    /// gets the current value at once; while it leads nowhere (an optional is nil), pushes are
    /// dropped.
    ///
    /// The property's type must be the pipeline's `Output` (checked at creation when the path's
    /// types are known: always for the destination's own properties and through properties
    /// declared with a model class type). A pipeline of `Any?` values (from
    /// `pipeline(path:)`) is checked per push instead: a value the property can't hold stops a
    /// debug build with a message, and is dropped in a release build.
    ///
    /// - Parameters:
    ///   - destination: The root of the destination path; held weakly, and its deinit ends
    ///     the token.
    ///   - path: Dotted property names from `destination`; the last one is written.
    ///   - options: As for ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)``.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the binding alive.
    /// - Throws: ``KeyPathError`` for a path that is empty, names an unknown property, uses
    ///   `*` or a collection component (`unsupportedComponent`), or ends at a property of
    ///   another type (`wrongValueType`).
    /// - Complexity: O(*c*) in the path's components per push, plus the pipeline's operators.
    public func bind(
        to destination: ObservableModelBase,
        path: String,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) throws(KeyPathError) -> ObservationToken {
        let parsed = try StringKeyPath.parse(path, root: destination)
        var names: [String] = []
        for (offset, step) in parsed.steps.enumerated() {
            guard case .name(let name) = step, name.first != "#", name.first != "&",
                !(name.first?.isNumber ?? false)
            else {
                let component = path.split(separator: ".", omittingEmptySubsequences: false)[offset]
                throw .unsupportedComponent(String(component), path: path, position: offset + 1)
            }
            names.append(name)
        }
        if let storage = try StringDestination.storageType(of: names, from: destination, path: path),
            !Self.isDynamicallyTyped, !storage.type.accepts(Output.self)
        {
            throw .wrongValueType(
                names[names.count - 1], valueType: String(describing: storage.valueType),
                writtenType: String(describing: Output.self), path: path, position: names.count)
        }
        let site = CreationSite(fileID: fileID, line: line, kind: .binding, options: options)
        let store = StringDestination(names: names, path: path, site: site)
        let box = WeakReference(destination)
        let write: BindingWrite = { value, _ in
            guard let value else { return true }
            guard let destination = box.load(as: ObservableModelBase.self) else { return false }
            store.store(value.assumingMemoryBound(to: Output.self).pointee, from: destination)
            return true
        }
        guard names.count > 1 else {
            return startLinked(
                options: options, queue: queue, site: site, destination: .named(destination, names[0]), write: write)
        }
        let objectPath = ObservedPath(steps: names.dropLast().map { PathStep.name($0) })
        return startLinked(
            options: options, queue: queue, site: site, destination: .path(destination, objectPath), write: write)
    }

    /// Whether the pipeline's values are `Any` or `Any?` (a string-path source): their type
    /// is known per value only.
    static var isDynamicallyTyped: Bool {
        Output.self == Any.self || Output.self == Any?.self
    }
}

/// The write at the end of a string-path destination.
struct StringDestination: Sendable {
    let names: [String]
    let path: String
    let site: CreationSite

    /// Walks to the object that holds the last property and writes it; nothing if the path
    /// leads nowhere now.
    func store(_ value: Any, from destination: ObservableModelBase) {
        var object = destination
        for name in names.dropLast() {
            guard let (_, next) = PathStep.name(name).resolve(on: object), let model = PathStep.model(in: next) else {
                return
            }
            object = model
        }
        let name = names[names.count - 1]
        guard let entry = PropertyTable(object).entry(named: name),
            let storage = entry.storageType as? any ObservedDynamicStore.Type
        else {
            // A subclass without the property, reached through an `Any`-typed link.
            _reportMisuse(
                "binding to \"\(path)\" (created at \(site)): \(type(of: object)) has no @Observed property '\(name)'.")
            return
        }
        guard storage.store(value, in: object, at: entry.offset) else {
            _reportMisuse(
                "binding to \"\(path)\" (created at \(site)): '\(name)' of \(type(of: object)) holds \(entry.valueType), and a push brought \(type(of: value)). Map the pipeline to \(entry.valueType) first."
            )
            return
        }
    }

    /// The storage type of the last property, when the types along the path are known now (an
    /// object is there, or the property's declared type is a model class).
    ///
    /// - Throws: `unsupportedComponent` for a component that would be looked up on an observed
    ///   collection (a destination is a property of a model).
    static func storageType(
        of names: [String], from destination: ObservableModelBase, path: String
    ) throws(KeyPathError) -> (type: any ObservedDynamicStore.Type, valueType: Any.Type)? {
        var instance: ObservableModelBase? = destination
        var table = PropertyTable(destination)
        for (offset, name) in names.dropLast().enumerated() {
            guard let entry = table.entry(named: name) else { return nil }
            let next = instance.flatMap { entry.value(in: $0) }.flatMap(PathStep.model(in:))
            let nextType = next.map { type(of: $0) } ?? PropertyTable.modelType(in: entry.valueType)
            if let nextType, nextType is any ObservedCollectionPaths.Type {
                throw .unsupportedComponent(names[offset + 1], path: path, position: offset + 2)
            }
            if let next {
                instance = next
                table = PropertyTable(next)
            } else if let nextType {
                instance = nil
                table = PropertyTable.of(nextType)
            } else {
                return nil
            }
        }
        guard let entry = table.entry(named: names[names.count - 1]),
            let storage = entry.storageType as? any ObservedDynamicStore.Type
        else { return nil }
        return (storage, entry.valueType)
    }
}
