/// One key path that a subscription watches, rooted at the token's observed object.
///
/// A path is a list of steps. Walking it from the root yields the edges to attach — one per
/// (object, property) the path currently runs through — and the endpoint value. Walking again
/// after a middle property changes yields the new edges; the subscription attaches the
/// difference, so retargeting costs O(path length).
@usableFromInline
struct ObservedPath: Sendable {
    let steps: SmallArray<PathStep>
    /// A `*` before the last step makes the path fan out (computed once: walks check it).
    let hasInnerWildcard: Bool

    /// For typed paths of several steps, their key path objects: two paths with equal
    /// identities walk alike, which lets tokens on the same path share one walk.
    let typedIdentity: [ObjectIdentifier]?

    init(steps: some Sequence<PathStep>) {
        self.steps = SmallArray(steps)
        hasInnerWildcard = self.steps.dropLast().contains { if case .wildcard = $0 { true } else { false } }
        var identity: [ObjectIdentifier]? = self.steps.count > 1 ? [] : nil
        for step in self.steps where identity != nil {
            if case .key(let key) = step { identity!.append(ObjectIdentifier(key.keyPath)) } else { identity = nil }
        }
        typedIdentity = identity
    }

    init(step: PathStep) {
        var steps = SmallArray<PathStep>()
        steps.append(step)
        self.steps = steps
        hasInnerWildcard = false
        typedIdentity = nil
    }

    var hasWildcard: Bool {
        steps.contains { if case .wildcard = $0 { true } else { false } }
    }

    /// The path as dotted property names, resolved against `root` where it is still reachable.
    /// Uses reflection; for debug output only.
    func describe(from root: ObservableModel?, rootTable: PropertyTable? = nil) -> String {
        var names: [String] = []
        var object = root
        var table = rootTable
        for step in steps {
            switch step {
            case .wildcard:
                names.append("*")
                object = nil
                table = nil
            case .name(let name):
                names.append(name)
                object = object.flatMap { step.value(on: $0) }.flatMap(PathStep.model(in:))
                table = nil
            case .key:
                if let current = object, let (serial, value) = step.resolve(on: current),
                    let name = (table ?? PropertyTable(current)).name(ofSerial: serial)
                {
                    names.append(name)
                    object = PathStep.model(in: value)
                    table = nil
                } else {
                    names.append("<key path>")
                    object = nil
                }
            }
        }
        return names.joined(separator: ".")
    }

    /// A place the path currently runs through.
    struct EdgeKey {
        /// The registry of the object the edge is on. Kept rather than the object: registries
        /// have no weak references, so copying a key costs a fast retain, not a side-table one.
        let registry: Registry
        /// The property's storage serial, or `PathStep.wildcardSerial` for `*`.
        let serial: UInt64
        let isLeaf: Bool

        init(object: ObservableModel, serial: UInt64, isLeaf: Bool) {
            registry = object.registry
            self.serial = serial
            self.isLeaf = isLeaf
        }
    }

    /// The end of a path, as seen at one moment.
    enum Endpoint {
        /// Some object on the way was nil, not observable, or gone.
        case unreachable
        case value(Any)
    }

    /// Walks the path from `root`, appending every edge on the way to `edges`, and returns the
    /// endpoint, or nil when the root itself can't resolve the first step (a registration
    /// error).
    ///
    /// Iterative, so a path of any length can't exhaust the stack. A `*` in the middle fans
    /// out; each (object, step) pair is visited once, so cycles in the object graph can't make
    /// the walk blow up.
    func walk(from root: ObservableModel, into edges: inout [EdgeKey], needsEndpoint: Bool = true)
        -> Endpoint?
    {
        if hasInnerWildcard { return fanOut(from: root, into: &edges) }
        var object = root
        for index in steps.indices {
            let isLeaf = index == steps.count - 1
            if case .wildcard = steps[index] {
                // Only ever the last step here.
                edges.append(EdgeKey(object: object, serial: PathStep.wildcardSerial, isLeaf: true))
                return .unreachable
            }
            if isLeaf, !needsEndpoint {
                guard let serial = steps[index].resolveSerial(on: object) else {
                    return index == 0 ? nil : .unreachable
                }
                edges.append(EdgeKey(object: object, serial: serial, isLeaf: true))
                return .unreachable
            }
            guard let (serial, value) = steps[index].resolve(on: object) else {
                return index == 0 ? nil : .unreachable
            }
            edges.append(EdgeKey(object: object, serial: serial, isLeaf: isLeaf))
            if isLeaf { return .value(value) }
            guard let next = PathStep.model(in: value) else { return .unreachable }
            object = next
        }
        return .unreachable
    }

    /// The walk for paths with a `*` before the last step: a tree, not a line.
    private func fanOut(from root: ObservableModel, into edges: inout [EdgeKey]) -> Endpoint? {
        var work: [(object: ObservableModel, index: Int)] = [(root, 0)]
        var visited = Set<VisitKey>()
        var rootResolved = false
        while let (object, index) = work.popLast() {
            guard visited.insert(VisitKey(object: ObjectIdentifier(object), index: index)).inserted else { continue }
            let isLeaf = index == steps.count - 1
            switch steps[index] {
            case .wildcard:
                if index == 0 { rootResolved = true }
                edges.append(EdgeKey(object: object, serial: PathStep.wildcardSerial, isLeaf: isLeaf))
                guard !isLeaf else { continue }
                for entry in PropertyTable(object).entries.reversed() {
                    if let next = PathStep.model(in: entry.storage.anyValue) { work.append((next, index + 1)) }
                }
                // A collection's `*` fans out over its elements (Collections/).
                if let collection = object as? any ObservedCollectionPaths {
                    for next in collection.elementModels.reversed() { work.append((next, index + 1)) }
                }
            case .key, .name:
                guard let (serial, value) = steps[index].resolve(on: object) else { continue }
                if index == 0 { rootResolved = true }
                edges.append(EdgeKey(object: object, serial: serial, isLeaf: isLeaf))
                if !isLeaf, let next = PathStep.model(in: value) { work.append((next, index + 1)) }
            }
        }
        return rootResolved ? .unreachable : nil
    }

    private struct VisitKey: Hashable {
        let object: ObjectIdentifier
        let index: Int
    }

    /// The endpoint's current value, without recording edges. Unreachable through a wildcard.
    func endpoint(from root: ObservableModel) -> Endpoint {
        var object = root
        for (index, step) in steps.enumerated() {
            guard let value = step.value(on: object) else { return .unreachable }
            if index == steps.count - 1 { return .value(value) }
            guard let next = PathStep.model(in: value) else { return .unreachable }
            object = next
        }
        return .unreachable
    }
}
