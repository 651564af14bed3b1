import Synchronization

/// One key path that a subscription watches, rooted at the token's observed object.
///
/// A path is a list of steps. Walking it from the root yields the edges to attach — one per
/// (object, property) the path currently runs through — and the endpoint value. Walking again
/// after a middle property changes yields the new edges; the subscription attaches the
/// difference, so retargeting costs O(path length).
@usableFromInline
final class ObservedPath: Sendable {
    let steps: SmallArray<PathStep>
    /// A `*` before the last step makes the path fan out (computed once: walks check it).
    let hasInnerWildcard: Bool
    /// Two steps, the first not `*`: the path's only middle edge is its first, on the root
    /// (a retarget then knows where the change sits without looking at the edges).
    let hasOneMiddleStep: Bool

    /// For typed paths of several steps, their key path objects: two paths with equal
    /// identities walk alike, which lets tokens on the same path share one walk.
    let typedIdentity: [ObjectIdentifier]?

    /// Each typed step's key, unretained (`steps` keeps it alive), for retarget walks: read
    /// this way a key costs no retain and release, where copying its step costs both.
    private let unretainedKeys: SmallArray<Unmanaged<TypedKeyBox>?>

    /// Whether this path is a typed chain's shared path (`chainPaths`), which remembers that it
    /// is describable without objects once it was.
    private let isShared: Bool
    /// Shared paths: 1 once `isDescribableWithoutObjects` was true.
    private let describableWithoutObjects = Atomic<UInt8>(0)

    init(steps: some Sequence<PathStep>, isShared: Bool = false) {
        self.isShared = isShared
        self.steps = SmallArray(steps)
        unretainedKeys = SmallArray(self.steps.lazy.map(Self.unretainedKey))
        hasInnerWildcard = self.steps.dropLast().contains { if case .wildcard = $0 { true } else { false } }
        hasOneMiddleStep = self.steps.count == 2 && !hasInnerWildcard
        var identity: [ObjectIdentifier]? = self.steps.count > 1 ? [] : nil
        for step in self.steps where identity != nil {
            if case .typed(let box) = step {
                identity!.append(ObjectIdentifier(box.key.keyPath))
            } else {
                identity = nil
            }
        }
        typedIdentity = identity
    }

    init(step: PathStep) {
        var steps = SmallArray<PathStep>()
        steps.append(step)
        self.steps = steps
        var keys = SmallArray<Unmanaged<TypedKeyBox>?>()
        keys.append(Self.unretainedKey(step))
        unretainedKeys = keys
        hasInnerWildcard = false
        hasOneMiddleStep = false
        typedIdentity = nil
        isShared = false
    }

    private static func unretainedKey(_ step: PathStep) -> Unmanaged<TypedKeyBox>? {
        if case .typed(let box) = step { .passUnretained(box) } else { nil }
    }

    /// Whether `other` names the same properties in the same order: typed steps by key path,
    /// named steps by name, and a typed step against a named one by the names the paths
    /// describe from `root`.
    func isSame(as other: ObservedPath, from root: ObservableModelBase) -> Bool {
        guard steps.count == other.steps.count else { return false }
        var mixed = false
        for (mine, theirs) in zip(steps, other.steps) {
            switch (mine, theirs) {
            case (.typed(let a), .typed(let b)): if a.key.keyPath != b.key.keyPath { return false }
            case (.name(let a), .name(let b)): if a != b { return false }
            case (.wildcard, .wildcard): continue
            case (.typed, .name), (.name, .typed): mixed = true
            default: return false
            }
        }
        return !mixed || describe(from: root) == other.describe(from: root)
    }

    var hasWildcard: Bool {
        steps.contains { if case .wildcard = $0 { true } else { false } }
    }

    /// The path as dotted property names, resolved against `root` where it is still reachable.
    /// Names come from the classes' property tables; values are read only for the path's own
    /// properties that lead to a further typed step. For debug output only.
    /// Whether `describe(from: nil)` names every step as `describe(from:)` with the objects
    /// would: string steps carry their names, and each typed step's name is in its root class's
    /// table. Then a token's description needs nothing remembered when its root deinitializes
    /// (remembering walked the path and built the string, ≈ 5,000 instructions per path token
    /// in every model's deinit).
    ///
    /// A shared path (a typed chain's) remembers a true answer: its key paths stay in the
    /// tables, so that every root's deinit pays one load for it.
    var isDescribableWithoutObjects: Bool {
        if isShared, describableWithoutObjects.load(ordering: .relaxed) != 0 { return true }
        let describable = steps.allSatisfy { step in
            guard case .typed(let box) = step else { return true }
            let key = box.key
            guard let root = type(of: key.keyPath).rootType as? ObservableModelBase.Type else { return false }
            return PropertyTable.of(root).entry(forKeyPath: key.keyPath) != nil
        }
        if isShared, describable { describableWithoutObjects.store(1, ordering: .relaxed) }
        return describable
    }

    // MARK: Shared chain paths

    /// A typed chain's steps as a cache key: equal when their key path objects are the same
    /// (chains give equal key paths one object: `KeyPathIdentity`).
    private struct ChainKey: Hashable, @unchecked Sendable {  // key paths are immutable
        let steps: [PathStep]

        static func == (lhs: ChainKey, rhs: ChainKey) -> Bool {
            lhs.steps.count == rhs.steps.count
                && zip(lhs.steps, rhs.steps).allSatisfy { identity(of: $0) == identity(of: $1) }
        }

        func hash(into hasher: inout Hasher) {
            for step in steps { hasher.combine(Self.identity(of: step)) }
        }

        static func identity(of step: PathStep) -> ObjectIdentifier? {
            if case .typed(let box) = step { ObjectIdentifier(box.key.keyPath) } else { nil }
        }
    }

    /// A typed chain's shared parts: its path list, and its evaluations (`ChainEvaluator`), one
    /// per root and endpoint type (chains of the same key paths can differ in endpoint type:
    /// `then` may or may not flatten an optional).
    private struct SharedChain: @unchecked Sendable {  // key paths and closures that apply them
        let paths: [ObservedPath]
        var evaluators: [ObjectIdentifier: AnyObject] = [:]
    }

    /// Typed chains' shared parts, one per chain of key path objects: its tokens share them. The
    /// key keeps the key path objects alive, so an identity can't be reused while cached.
    private static let chainPaths = Locked<[ChainKey: SharedChain]>(state: [:])

    /// Chains remembered (key paths built at run time can make new ones without end; past this
    /// many, a chain's tokens get a path each).
    static var chainPathLimit: Int { 1_024 }

    /// The path list (`[ObservedPath(steps: steps)]`) of a typed chain, shared by all its tokens:
    /// a token then holds one reference to it, where a path of its own was nine objects to make
    /// and free (the path, its arrays, the steps' boxes and the readers' contexts).
    static func chainPaths(_ steps: [PathStep]) -> [ObservedPath] {
        guard steps.allSatisfy({ ChainKey.identity(of: $0) != nil }) else { return [ObservedPath(steps: steps)] }
        let key = ChainKey(steps: steps)
        if let known = chainPaths.withLock({ $0[key]?.paths }) { return known }
        let made = [ObservedPath(steps: steps, isShared: true)]
        return chainPaths.withLock { state in
            if let known = state[key] { return known.paths }
            guard state.count < chainPathLimit else { return made }
            state[key] = SharedChain(paths: made)
            return made
        }
    }

    /// `chainPaths(steps)`, and the chain's evaluation shared the same way: the one `make`
    /// returns for the first chain of these key paths and this `Evaluator` type (which names the
    /// root and endpoint types), or `make()`'s when the chain can't be shared. A token keeps the
    /// shared evaluation with one reference, where its own was one or more closure contexts to
    /// free at its end.
    static func chainPaths<Evaluator: AnyObject>(
        _ steps: [PathStep], evaluator make: () -> Evaluator
    ) -> (paths: [ObservedPath], evaluator: Evaluator) {
        guard steps.allSatisfy({ ChainKey.identity(of: $0) != nil }) else {
            return ([ObservedPath(steps: steps)], make())
        }
        let key = ChainKey(steps: steps)
        let type = ObjectIdentifier(Evaluator.self)
        let known = chainPaths.withLock { state -> (paths: [ObservedPath], evaluator: AnyObject?)? in
            guard let shared = state[key] else { return nil }
            return (shared.paths, shared.evaluators[type])
        }
        // Keyed by its own type: the cast holds.
        if let known, let evaluator = known.evaluator {
            return (known.paths, unsafeDowncast(evaluator, to: Evaluator.self))
        }
        // Made outside the lock; one that loses a race is released outside it too.
        let madePaths = known?.paths ?? [ObservedPath(steps: steps, isShared: true)]
        let madeEvaluator = make()
        let result = chainPaths.withLock { state -> (paths: [ObservedPath], evaluator: AnyObject) in
            if let shared = state[key] {
                if let evaluator = shared.evaluators[type] { return (shared.paths, evaluator) }
                state[key]!.evaluators[type] = madeEvaluator
                return (shared.paths, madeEvaluator)
            }
            guard state.count < chainPathLimit else { return (madePaths, madeEvaluator) }
            state[key] = SharedChain(paths: madePaths, evaluators: [type: madeEvaluator])
            return (madePaths, madeEvaluator)
        }
        return (result.paths, unsafeDowncast(result.evaluator, to: Evaluator.self))
    }

    func describe(from root: ObservableModelBase?) -> String {
        var names: [String] = []
        var object = root
        for (index, step) in steps.enumerated() {
            let isLast = index == steps.count - 1
            switch step {
            case .wildcard:
                names.append("*")
                object = nil
            case .name(let name):
                names.append(name)
                // Middle values are read the way walks read them (see `PathStep.readForWalk`).
                object = isLast ? nil : object.flatMap { step.readForWalk(on: $0)?.value }.flatMap(PathStep.model(in:))
            case .typed(let box):
                let key = box.key
                if let label = PathStep.collectionLabel(key, on: object) {
                    if !label.isEmpty { names.append(label) }
                    object =
                        isLast
                        ? nil : object.flatMap { step.readForWalk(on: $0) }.flatMap { PathStep.model(in: $0.value) }
                    continue
                }
                if let current = object, let serial = step.resolveSerial(on: current),
                    let name = PropertyTable(current).name(ofSerial: serial, in: current)
                {
                    names.append(name)
                    object = isLast ? nil : step.readForWalk(on: current).flatMap { PathStep.model(in: $0.value) }
                } else {
                    // Nothing there to look the name up on: the class's table knows it if the
                    // key path was resolved on another object of the class.
                    if case .typed(let box) = step,
                        let root = type(of: box.key.keyPath).rootType as? ObservableModelBase.Type,
                        let entry = PropertyTable.of(root).entry(forKeyPath: box.key.keyPath)
                    {
                        names.append(entry.name)
                    } else {
                        names.append(Self.name(of: box.key.keyPath))
                    }
                    object = nil
                }
            }
        }
        return names.joined(separator: ".")
    }

    /// A typed step's name when no object or table knows it: the key path as Swift prints it,
    /// without its root type (`\Item.title` → `title`; an `@Observed` property, which Swift
    /// prints as a computed one, shows its type: `<computed String>`).
    static func name(of keyPath: AnyKeyPath) -> String {
        let text = DebugFormat.keyPathText(keyPath, reads: [])
        let prefix = "\\\(type(of: keyPath).rootType)."
        return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }

    /// A place the path currently runs through.
    struct EdgeKey {
        /// The registry of the object the edge is on. Kept rather than the object: registries
        /// have no weak references, so copying a key costs a fast retain, not a side-table one.
        let registry: Registry
        /// The property's storage serial, or `PathStep.wildcardSerial` for `*`.
        let serial: UInt64
        let isLeaf: Bool
        /// Which of the subscription's paths, and which step of it, the edge is for.
        let path: Int32
        let step: Int32
        /// For a step whose value the walk read (a middle step): the object's store version at
        /// that read; 0 otherwise.
        let version: Int

        init(object: ObservableModelBase, serial: UInt64, isLeaf: Bool, path: Int, step: Int, version: Int = 0) {
            self.init(
                registry: object.registry, serial: serial, isLeaf: isLeaf, path: path, step: step, version: version)
        }

        init(registry: Registry, serial: UInt64, isLeaf: Bool, path: Int, step: Int, version: Int = 0) {
            self.registry = registry
            self.serial = serial
            self.isLeaf = isLeaf
            self.path = Int32(truncatingIfNeeded: path)
            self.step = Int32(truncatingIfNeeded: step)
            self.version = version
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
    /// `start` > 0 walks only the part of the path from step `start` on, from `object`, the
    /// object that step reads (a retarget: a set changed that step's property, and nothing
    /// before it may be read: other threads may own it).
    ///
    /// Every value is read under its object's registry lock (see `PathStep.readForWalk`), the
    /// lock that setters of objects read by paths store under. Iterative, so a path of any
    /// length can't exhaust the stack. A `*` in the middle fans out; each (object, step) pair
    /// is visited once, so cycles in the object graph can't make the walk blow up.
    func walk(
        from root: ObservableModelBase, startingAt start: Int = 0, pathIndex: Int = 0,
        into edges: inout some EdgeKeySink,
        needsEndpoint: Bool = true
    ) -> Endpoint? {
        if hasInnerWildcard { return fanOut(from: root, pathIndex: pathIndex, into: &edges) }
        var object = root
        // One allocation for the walk's edges (appending one by one grew the array twice).
        edges.reserveCapacity(edges.count + steps.count - start)
        for index in start..<steps.count {
            // One copy of the step (each copy retains its key path and closures).
            let step = steps[index]
            let isLeaf = index == steps.count - 1
            if case .wildcard = step {
                // Only ever the last step here.
                PathStep.evaluateSyntheticProperties(of: object)
                edges.append(
                    EdgeKey(object: object, serial: PathStep.wildcardSerial, isLeaf: true, path: pathIndex, step: index)
                )
                return .unreachable
            }
            if isLeaf, !needsEndpoint {
                guard let serial = step.resolveSerial(on: object) else {
                    return index == 0 ? nil : .unreachable
                }
                edges.append(EdgeKey(object: object, serial: serial, isLeaf: true, path: pathIndex, step: index))
                return .unreachable
            }
            var version = 0
            if isLeaf {
                guard let (serial, value) = step.readForWalk(on: object, version: &version) else {
                    return index == 0 ? nil : .unreachable
                }
                edges.append(EdgeKey(object: object, serial: serial, isLeaf: true, path: pathIndex, step: index))
                return .value(value)
            }
            // A middle step needs only the model its value holds: read through typed code.
            guard let (serial, next) = step.readModelForWalk(on: object, registry: object.registry, version: &version)
            else {
                return index == 0 ? nil : .unreachable
            }
            edges.append(
                EdgeKey(object: object, serial: serial, isLeaf: false, path: pathIndex, step: index, version: version))
            guard let next else { return .unreachable }
            object = next
        }
        return .unreachable
    }

    /// Where a linear path (no `*` before its last step) runs past step `changed`, for a
    /// retarget by a set of that step's property of `object` (serial `changedSerial`) on this
    /// thread: one `EdgeTarget` per step after it, up to the leaf or the first step that can't be
    /// read (a nil, a value that is not a model, a property the object doesn't have). Nothing
    /// upstream of the change is read (other threads may own it), and the changed step's own
    /// edge is not among the targets: it is the changed property itself, which doesn't move.
    ///
    /// The first read, of the changed property, is the setter's own value (see
    /// `PathStep.readChangedModel`), read without the registry's lock where it can be. Returns
    /// true when that was the only value read: no other thread can have stored to what it read,
    /// so nothing needs reading again after the edges moved (see
    /// `Subscription.retargetAlone`).
    ///
    /// Each target holds its object by the read's own reference (released by
    /// `EdgeTargetBuffer.removeAll()`), which keeps the object's registry, borrowed in the
    /// target, alive: no retain of a registry, as a walk's `EdgeKey` makes.
    @discardableResult @inline(__always)
    func readPast(
        _ changed: Int, from object: ObservableModelBase, pathIndex: Int, changedSerial: UInt64,
        into targets: inout EdgeTargetBuffer
    ) -> Bool {
        // The changed step: the setter's own value where it can be read so (a typed key). Each
        // further object is held by the read that found it (its own reference), which its
        // step's target takes over, or the buffer keeps when the step has none.
        var readOther = false
        var current: Unmanaged<ObservableModelBase>
        if let key = unretainedKeys[changed],
            let own = key._withUnsafeGuaranteedRef({
                PathStep.readChangedModel($0, on: object, serial: changedSerial)
            })
        {
            guard let next = own.next, let next else { return true }
            current = Unmanaged.passRetained(next)
        } else {
            guard let next = readChangedStep(changed, on: object) else { return false }
            readOther = true
            current = next
        }
        let last = steps.count - 1
        if changed + 1 < last {
            // Middle steps past the changed one (a path of three steps or more).
            guard let next = readMiddleSteps(from: current, at: changed + 1, pathIndex: pathIndex, into: &targets)
            else { return false }
            readOther = true
            current = next
        }
        let serial = current._withUnsafeGuaranteedRef { object in
            if let key = unretainedKeys[last] {
                key._withUnsafeGuaranteedRef { $0.resolveSerial(on: object) }
            } else {
                leafSerial(last, on: object)
            }
        }
        if let serial {
            targets.append(
                EdgeTarget(
                    object: current, registry: current._withUnsafeGuaranteedRef { Self.borrowedRegistry(of: $0) },
                    serial: serial, isLeaf: true, path: pathIndex, step: last, version: 0))
        } else {
            targets.keep(current)
        }
        return !readOther
    }

    /// `readPast`'s read of the changed step when it can't be the setter's own value (a name, a
    /// synthetic property, an object no path has read yet): under the registry lock. The model
    /// there, held by this read's reference; nil for none.
    @inline(never)
    private func readChangedStep(_ index: Int, on object: ObservableModelBase) -> Unmanaged<ObservableModelBase>? {
        var version = 0
        guard let read = readModel(index, on: object, version: &version), let next = read.next else { return nil }
        return Unmanaged.passRetained(next)
    }

    /// `readPast`'s middle steps from `first` on (each under its object's registry lock), from
    /// `object`, held by the caller's read, whose reference passes to its target or to the
    /// buffer: appends their targets, and returns the leaf's object (held by its read's
    /// reference), or nil when the path stops before the leaf (the buffer then holds every
    /// object read).
    @inline(never)
    private func readMiddleSteps(
        from object: Unmanaged<ObservableModelBase>, at first: Int, pathIndex: Int,
        into targets: inout EdgeTargetBuffer
    ) -> Unmanaged<ObservableModelBase>? {
        var current = object
        var version = 0
        for index in first..<(steps.count - 1) {
            let read = current._withUnsafeGuaranteedRef { object in
                readModel(index, on: object, version: &version).map { read in
                    // A middle step keeps its edge when its value is nil: a set there moves the
                    // path again.
                    targets.append(
                        EdgeTarget(
                            object: current, registry: Self.borrowedRegistry(of: object), serial: read.serial,
                            isLeaf: false, path: pathIndex, step: index, version: version))
                    return read.next.map { Unmanaged.passRetained($0) }
                }
            }
            guard let read else {
                targets.keep(current)
                return nil
            }
            guard let next = read else { return nil }
            current = next
        }
        return current
    }

    /// A middle step's read for `readPast`, under the object's registry lock: its serial and the
    /// model its value holds; nil when the object doesn't have the property.
    @inline(__always)
    private func readModel(_ index: Int, on object: ObservableModelBase, version: inout Int) -> (
        serial: UInt64, next: ObservableModelBase?
    )? {
        let registry = object.registry
        // A typed step (the usual case) is read through its key, borrowed.
        if let key = unretainedKeys[index] {
            return key._withUnsafeGuaranteedRef {
                PathStep.readModelForWalk($0, on: object, registry: registry, version: &version)
            }
        }
        return steps[index].readModelForWalk(on: object, registry: registry, version: &version)
    }

    /// `object`'s registry, borrowed (`object` holds it): through `registry`, a retain and a
    /// release.
    @inline(__always)
    private static func borrowedRegistry(of object: ObservableModelBase) -> Unmanaged<Registry> {
        object.withExistingRegistry { Unmanaged.passUnretained($0) } ?? Unmanaged.passUnretained(object.registry)
    }

    /// `readPast` for a path of one middle step walked from its root by a set of that step's
    /// property on this thread (a chain `\.owner` then `\.count`, retargeted by a set of
    /// `owner`): where the leaf runs now, without making the walk's keys. The middle edge can't
    /// move (it is the changed property itself), so the leaf is all a retarget needs.
    ///
    /// Nil, having read nothing, when the walk can't be read this way (a step that is not a
    /// typed key, a first read that is not the setter's own value: see
    /// `PathStep.readChangedModel`); the caller then walks. `.some(nil)` when the path ends
    /// before its leaf (the middle value is nil, or not a model), or the new object doesn't
    /// have the leaf's property. The only value read is the setter's own, so, as for
    /// `readPast` returning true, nothing needs reading again after the edge moved.
    ///
    /// The leaf object is returned retained (the read's own reference, released by the caller
    /// with `leaf.release()`): it keeps the object, and its registry, returned borrowed, alive
    /// while the caller moves the edge.
    @inline(__always)
    func readTwoStepLeaf(from object: ObservableModelBase, changedSerial: UInt64) -> (
        leaf: Unmanaged<ObservableModelBase>, registry: Unmanaged<Registry>, serial: UInt64
    )?? {
        guard hasOneMiddleStep, let middleKey = unretainedKeys[0], let leafKey = unretainedKeys[1],
            let changed = middleKey._withUnsafeGuaranteedRef({
                PathStep.readChangedModel($0, on: object, serial: changedSerial)
            })
        else { return nil }
        guard let next = changed.next, let next else { return .some(nil) }
        guard let serial = leafKey._withUnsafeGuaranteedRef({ $0.resolveSerial(on: next) }) else { return .some(nil) }
        // Borrowed (`next` holds it): through `registry`, a retain and a release.
        let registry =
            next.withExistingRegistry { Unmanaged.passUnretained($0) } ?? Unmanaged.passUnretained(next.registry)
        return .some((Unmanaged.passRetained(next), registry, serial))
    }

    /// The serial of a path's last step that is not a typed key: a name, or `*` (whose synthetic
    /// properties are evaluated first, so that the edge hears of their dependencies).
    private func leafSerial(_ index: Int, on object: ObservableModelBase) -> UInt64? {
        let step = steps[index]
        guard case .wildcard = step else { return step.resolveSerial(on: object) }
        PathStep.evaluateSyntheticProperties(of: object)
        return PathStep.wildcardSerial
    }

    /// The walk for paths with a `*` before the last step: a tree, not a line.
    private func fanOut(from root: ObservableModelBase, pathIndex: Int, into edges: inout some EdgeKeySink) -> Endpoint?
    {
        var work: [(object: ObservableModelBase, index: Int)] = [(root, 0)]
        var visited = Set<VisitKey>()
        var rootResolved = false
        while let (object, index) = work.popLast() {
            guard visited.insert(VisitKey(object: ObjectIdentifier(object), index: index)).inserted else { continue }
            let isLeaf = index == steps.count - 1
            switch steps[index] {
            case .wildcard:
                if index == 0 { rootResolved = true }
                if isLeaf { PathStep.evaluateSyntheticProperties(of: object) }
                edges.append(
                    EdgeKey(
                        object: object, serial: PathStep.wildcardSerial, isLeaf: isLeaf, path: pathIndex, step: index))
                guard !isLeaf else { continue }
                // Only properties whose type can hold a model are read.
                let models = object.registry.readForPath { _ in
                    PropertyTable(object).entries.filter(\.mayHoldModel).compactMap {
                        PathStep.model(in: $0.value(in: object))
                    }
                }
                for next in (models ?? []).reversed() { work.append((next, index + 1)) }
                // A collection's `*` fans out over its elements (Collections/).
                if let collection = object as? any ObservedCollectionPaths {
                    for next in collection.elementModels.reversed() { work.append((next, index + 1)) }
                }
            case .typed, .name:
                guard let (serial, value) = steps[index].readForWalk(on: object) else { continue }
                if index == 0 { rootResolved = true }
                edges.append(EdgeKey(object: object, serial: serial, isLeaf: isLeaf, path: pathIndex, step: index))
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
    func endpoint(from root: ObservableModelBase) -> Endpoint {
        var object = root
        for (index, step) in steps.enumerated() {
            guard let value = step.readForWalk(on: object)?.value else { return .unreachable }
            if index == steps.count - 1 { return .value(value) }
            guard let next = PathStep.model(in: value) else { return .unreachable }
            object = next
        }
        return .unreachable
    }
}

/// Where a walk puts the edges it finds.
protocol EdgeKeySink {
    var count: Int { get }
    mutating func reserveCapacity(_ minimumCapacity: Int)
    mutating func append(_ key: ObservedPath.EdgeKey)
}

extension Array: EdgeKeySink where Element == ObservedPath.EdgeKey {}

/// Where a retarget found a step of a path to run now (`ObservedPath.readPast`): the edge to
/// have there. Holds nothing: the registry is borrowed, from the object (held by the buffer the
/// read filled, see `EdgeTargetBuffer`) or from a walk's key.
struct EdgeTarget {
    /// The object the edge is on, when the target was read from it (its store version is
    /// `version`); nil for a target made from a walk's key.
    let object: Unmanaged<ObservableModelBase>?
    let registry: Unmanaged<Registry>
    let serial: UInt64
    let isLeaf: Bool
    /// Which of the subscription's paths, and which step of it, the edge is for.
    let path: Int32
    let step: Int32
    /// As `EdgeKey.version`: a middle step's object's store version at its read (-1 for a
    /// synthetic step, which no object has); 0 for a leaf.
    let version: Int
    /// Set by the move (`Subscription.moveRun`): the new edge's slot, or `kept`, or `failed`.
    var slot = 0

    /// `slot` of a target whose position's edge stays.
    static var kept: Int { -1 }
    /// `slot` of a target whose attach failed (its object deinitialized since the read).
    static var failed: Int { -2 }

    init(
        object: Unmanaged<ObservableModelBase>?, registry: Unmanaged<Registry>, serial: UInt64, isLeaf: Bool,
        path: Int, step: Int, version: Int
    ) {
        self.object = object
        self.registry = registry
        self.serial = serial
        self.isLeaf = isLeaf
        self.path = Int32(truncatingIfNeeded: path)
        self.step = Int32(truncatingIfNeeded: step)
        self.version = version
    }

    /// The target of a walk's key, borrowing the registry the key holds.
    init(_ key: ObservedPath.EdgeKey) {
        object = nil
        registry = Unmanaged.passUnretained(key.registry)
        serial = key.serial
        isLeaf = key.isLeaf
        path = key.path
        step = key.step
        version = key.version
    }

    func matches(_ edge: Edge) -> Bool {
        edge.serial == serial && edge.isLeaf == isLeaf
            && Unmanaged.passUnretained(edge.registry).toOpaque() == registry.toOpaque()
    }

    /// Whether no store began or ended on this target's object since it was read: always for a
    /// leaf (nothing was read there), never for a synthetic step (its value changes without a
    /// store on its object). The object is alive: the buffer holds it.
    var isUnwritten: Bool {
        guard !isLeaf, let object else { return true }
        return object._withUnsafeGuaranteedRef { $0.storeVersion } == version
    }
}

/// `EdgeTarget`s in memory the caller owns (on the stack: at most one per step of a path), and
/// the objects they were read from, each held by one reference (the read's own), released by
/// `removeAll()`, which must run before the memory goes away.
struct EdgeTargetBuffer {
    private let base: UnsafeMutablePointer<EdgeTarget>
    private let capacity: Int
    private(set) var count = 0
    /// An object the read holds that has no target (the last one read: its step couldn't be).
    private var extra: Unmanaged<ObservableModelBase>?

    init(_ memory: UnsafeMutableBufferPointer<EdgeTarget>) {
        base = memory.baseAddress!
        capacity = memory.count
    }

    var targets: UnsafeMutableBufferPointer<EdgeTarget> {
        UnsafeMutableBufferPointer(start: base, count: count)
    }

    /// Appends a target; the buffer now holds its object (if any).
    mutating func append(_ target: EdgeTarget) {
        precondition(count < capacity, "EdgeTargetBuffer: a path's read appends at most one target per step")
        (base + count).initialize(to: target)
        count += 1
    }

    /// Holds `object`, which has no target, until `removeAll()`.
    mutating func keep(_ object: Unmanaged<ObservableModelBase>) {
        extra?.release()
        extra = object
    }

    /// Whether no object read for a middle step was stored to since its read.
    var isUnwritten: Bool {
        for index in 0..<count where !base[index].isUnwritten { return false }
        return true
    }

    /// Whether `other` has the same edges (objects, properties, roles and steps).
    func isSame(as other: EdgeTargetBuffer) -> Bool {
        guard count == other.count else { return false }
        for index in 0..<count {
            let mine = base[index]
            let theirs = other.base[index]
            guard mine.registry.toOpaque() == theirs.registry.toOpaque(), mine.serial == theirs.serial,
                mine.isLeaf == theirs.isLeaf, mine.path == theirs.path, mine.step == theirs.step
            else { return false }
        }
        return true
    }

    /// Releases the objects and forgets the targets.
    @inline(__always)
    mutating func removeAll() {
        for index in 0..<count { base[index].object?.release() }
        count = 0
        extra?.release()
        extra = nil
    }

    /// Replaces the targets with `other`'s, leaving `other` empty.
    mutating func take(_ other: inout EdgeTargetBuffer) {
        removeAll()
        precondition(other.count <= capacity)
        base.moveInitialize(from: other.base, count: other.count)
        count = other.count
        extra = other.extra
        other.count = 0
        other.extra = nil
    }
}
