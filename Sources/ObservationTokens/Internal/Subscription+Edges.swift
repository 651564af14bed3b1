// Where a path subscription is attached, and how its edges move when its paths change.
//
// The threading rules (see docs/Reliability.md, "Threads and paths"):
// - A retarget reads nothing upstream of the property that changed: it walks from the changed
//   object, at the step that property is on, and replaces the edges from there on. Upstream
//   properties may belong to other threads. (A path with a `*` before its last step has no
//   single place after the change; it alone is walked from its root again.)
// - Every value a walk reads is read under its object's registry lock, and objects read by
//   walks store their `@Observed` properties under that lock from then on.
// - After the edges are attached, the walk is read again: a set that landed between the read and
//   the attach (on an object nobody observed yet, so it told no one) is caught, and the
//   subscription walks again. Any set after the attach finds the edge and retargets itself (a
//   setter decides that from the edge count its store's atomic add returns). A synthetic step
//   (`@Computed`, …) changes without a store on its object: a walk through one is always read
//   again, and an invalidation after the attach finds the edge.
// - A walk that started from an object that is no longer on the path is dropped.

/// One attachment of a subscription to a property (or `*`) of one object.
struct Edge {
    let registry: Registry
    let serial: UInt64
    let slot: Int
    let isLeaf: Bool
    /// Which of the subscription's paths, and which step of it, the edge is for.
    let path: Int32
    let step: Int32

    init(_ key: ObservedPath.EdgeKey, slot: Int) {
        registry = key.registry
        serial = key.serial
        isLeaf = key.isLeaf
        path = key.path
        step = key.step
        self.slot = slot
    }

    /// An edge outside any path (tracked tokens: a storage that the last evaluation read).
    init(registry: Registry, serial: UInt64, slot: Int, isLeaf: Bool) {
        self.registry = registry
        self.serial = serial
        self.slot = slot
        self.isLeaf = isLeaf
        path = 0
        step = 0
    }

    /// The edge a retarget found the path to run through (`Subscription.moveRun`).
    init(_ target: EdgeTarget, slot: Int) {
        registry = target.registry.takeUnretainedValue()
        serial = target.serial
        isLeaf = target.isLeaf
        path = target.path
        step = target.step
        self.slot = slot
    }

    /// A path's leaf edge at `step` of path 0 (`Subscription.moveTwoStepLeaf`).
    init(leafOnPath0 registry: Registry, serial: UInt64, slot: Int, step: Int32) {
        self.registry = registry
        self.serial = serial
        self.slot = slot
        isLeaf = true
        path = 0
        self.step = step
    }

    /// This edge, kept in place for `key` (same object, property and role).
    func kept(for key: ObservedPath.EdgeKey) -> Edge {
        Edge(key, slot: slot)
    }

    func matches(_ key: ObservedPath.EdgeKey) -> Bool {
        serial == key.serial && isLeaf == key.isLeaf && registry === key.registry
    }
}

/// A subscription's edges (`SubscriptionExtras.State.edges`): the first `inlineCapacity` kept
/// inline, in the extras (which a path subscription keeps in its own allocation), so a path of up
/// to that many steps (a chain `\.owner` then `\.count`, W17 and W19; `a.b.c`, W8) or a tracked
/// read of up to that many storages allocates no list; more move, all together, to an array,
/// which then stays (a path that grew once is likely to again).
///
/// Invariant: without `spilled`, the first `inlineCount` elements of `inline` are edges and the
/// rest nil; with it, every edge is in `spilled` and `inline` is all nil. The buffer methods hand
/// out the inline edges in place (`Optional<Edge>` is an `Edge` with a null `registry` for nil,
/// so a `.some` edge has an `Edge`'s layout); they are `mutating` so that they use the list where
/// it is (the extras' lock's `inout` state), never a copy.
struct EdgeList: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// How many edges are kept inline.
    static var inlineCapacity: Int { 3 }

    private var inline: (Edge?, Edge?, Edge?) = (nil, nil, nil)
    private var inlineCount = 0
    private var spilled: [Edge]?

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { spilled?.count ?? inlineCount }
    var count: Int { endIndex }
    var isEmpty: Bool { endIndex == 0 }
    var indices: Range<Int> { 0..<endIndex }
    func index(after index: Int) -> Int { index + 1 }
    func index(before index: Int) -> Int { index - 1 }

    subscript(position: Int) -> Edge {
        get {
            if spilled != nil { return spilled.unsafelyUnwrapped[position] }
            precondition(position >= 0 && position < inlineCount, "EdgeList index out of range")
            switch position {
            case 0: return inline.0.unsafelyUnwrapped
            case 1: return inline.1.unsafelyUnwrapped
            default: return inline.2.unsafelyUnwrapped
            }
        }
        set {
            if spilled != nil {
                spilled![position] = newValue
                return
            }
            precondition(position >= 0 && position < inlineCount, "EdgeList index out of range")
            switch position {
            case 0: inline.0 = newValue
            case 1: inline.1 = newValue
            default: inline.2 = newValue
            }
        }
    }

    /// The inline slots, as optionals, for `body`.
    @inline(__always)
    private mutating func withInlineSlots<Result>(_ body: (UnsafeMutablePointer<Edge?>) throws -> Result) rethrows
        -> Result
    {
        // A homogeneous tuple's memory is bound to its element type.
        try withUnsafeMutablePointer(to: &inline) {
            try body(UnsafeMutableRawPointer($0).assumingMemoryBound(to: Edge?.self))
        }
    }

    /// The inline slots and the edge count, for a route that edits a short list in place
    /// (`Subscription.moveTwoStepLeaf`); nil, calling nothing, when the edges spilled. `body`
    /// keeps the invariant: slots `0..<count` hold edges, the rest nil.
    @inline(__always)
    mutating func editInline<Result>(_ body: (UnsafeMutablePointer<Edge?>, inout Int) throws -> Result) rethrows
        -> Result?
    {
        guard spilled == nil else { return nil }
        var count = inlineCount
        let result = try withInlineSlots { try body($0, &count) }
        inlineCount = count
        return result
    }

    /// The edges in place, for reading.
    @inline(__always)
    mutating func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<Edge>) throws -> Result) rethrows
        -> Result
    {
        try withUnsafeMutableBufferPointer { try body(UnsafeBufferPointer($0)) }
    }

    /// The edges in place. `body` may move edges out and initialize others in their place, but
    /// must leave every position holding an edge.
    ///
    /// Both cases inlined: with the spilled one out of line, a closure stored in a `let` that
    /// `body` captures (`moveEdges`' `isPast`) was allocated on the heap (W8: one object per
    /// token and retarget).
    @inline(__always)
    mutating func withUnsafeMutableBufferPointer<Result>(
        _ body: (UnsafeMutableBufferPointer<Edge>) throws -> Result
    ) rethrows -> Result {
        if _slowPath(spilled != nil) { return try spilled!.withUnsafeMutableBufferPointer { try body($0) } }
        let count = inlineCount
        return try withUnsafeMutablePointer(to: &inline) {
            try body(
                UnsafeMutableBufferPointer(
                    start: UnsafeMutableRawPointer($0).assumingMemoryBound(to: Edge.self), count: count))
        }
    }

    @inline(__always)
    mutating func append(_ edge: __owned Edge) {
        let count = inlineCount
        guard _fastPath(spilled == nil && count < Self.inlineCapacity) else { return appendSpilling(edge) }
        withInlineSlots { ($0 + count).initialize(to: edge) }
        inlineCount = count + 1
    }

    /// `append` past the inline edges.
    @inline(never)
    private mutating func appendSpilling(_ edge: __owned Edge) {
        if spilled == nil { spill(capacity: inlineCount + 1) }
        spilled!.append(edge)
    }

    @inline(__always) @discardableResult
    mutating func removeLast() -> Edge {
        if _slowPath(spilled != nil) { return removeLastSpilled() }
        let count = inlineCount
        precondition(count > 0, "removeLast on an empty EdgeList")
        inlineCount = count - 1
        return withInlineSlots { slots in
            let last = (slots + count - 1).move()
            (slots + count - 1).initialize(to: nil)
            return last.unsafelyUnwrapped
        }
    }

    @inline(never)
    private mutating func removeLastSpilled() -> Edge {
        spilled!.removeLast()
    }

    mutating func removeAll(keepingCapacity keep: Bool = false) {
        if spilled != nil {
            spilled!.removeAll(keepingCapacity: keep)
            return
        }
        inline = (nil, nil, nil)
        inlineCount = 0
    }

    /// Empties the list, handing each edge to `body`, moved out (not copied).
    @inline(__always)
    mutating func removeAll(passing body: (borrowing Edge) -> Void) {
        if spilled != nil {
            let all = spilled.unsafelyUnwrapped
            spilled = nil
            for edge in all { body(edge) }
            return
        }
        let count = inlineCount
        inlineCount = 0
        withInlineSlots { slots in
            for index in 0..<count {
                let edge = (slots + index).move().unsafelyUnwrapped
                (slots + index).initialize(to: nil)
                body(edge)
            }
        }
    }

    mutating func reserveCapacity(_ capacity: Int) {
        if spilled != nil {
            spilled!.reserveCapacity(capacity)
        } else if capacity > Self.inlineCapacity {
            spill(capacity: capacity)
        }
    }

    mutating func swapAt(_ first: Int, _ second: Int) {
        withUnsafeMutableBufferPointer { $0.swapAt(first, second) }
    }

    /// The index of the edge on `registry`'s property `serial`, read in place.
    mutating func firstIndex(of registry: Registry, serial: UInt64) -> Int? {
        withUnsafeBufferPointer { edges in
            edges.firstIndex { $0.serial == serial && $0.registry === registry }
        }
    }

    /// Every edge moves to `spilled`, with room for `capacity`.
    private mutating func spill(capacity: Int) {
        var array: [Edge] = []
        array.reserveCapacity(Swift.max(capacity, inlineCount))
        let count = inlineCount
        withInlineSlots { slots in
            for index in 0..<count {
                array.append((slots + index).move().unsafelyUnwrapped)
                (slots + index).initialize(to: nil)
            }
        }
        inlineCount = 0
        spilled = array
    }

    /// The rare edits (an insert, a removal in the middle, several paths rebuilt): through an
    /// array. A list that had spilled stays spilled.
    mutating func replaceSubrange<C: Collection<Edge>>(_ subrange: Range<Int>, with newElements: C) {
        if spilled != nil {
            spilled!.replaceSubrange(subrange, with: newElements)
            return
        }
        var all = Array(self)
        all.replaceSubrange(subrange, with: newElements)
        removeAll()
        if all.count > Self.inlineCapacity {
            spilled = all
        } else {
            for edge in all { append(edge) }
        }
    }
}

/// What makes two edges interchangeable when a path is walked again.
private struct EdgeID: Hashable {
    let registry: ObjectIdentifier
    let serial: UInt64
    let isLeaf: Bool

    init(_ registry: Registry, _ serial: UInt64, _ isLeaf: Bool) {
        self.registry = ObjectIdentifier(registry)
        self.serial = serial
        self.isLeaf = isLeaf
    }
}

extension Subscription {
    /// A set changed a property that this subscription's paths run through (not as their last
    /// step): moves the edges after it to where the paths run now.
    final func retarget(walks: inout WalkMemo) {
        guard !isProperty, extras != nil else { return }
        // No other subscription of the change can share a walk: the route that reads past the
        // changed step on the stack, for the usual case (one linear path through it).
        let borrowed = extras.unsafelyUnwrapped
        // One path of two linear steps (a chain `\.owner` then `\.count`, W17's view-model token):
        // its leaf moves on a route of its own (`moveTwoStepLeaf`), when the edges have that shape.
        if walks.isAlone,
            borrowed.withPaths({ $0.count == 1 && $0[0].hasOneMiddleStep }),
            moveTwoStepLeaf(
                borrowed, changed: walks.unmanagedChanged, changedRegistry: walks.unmanagedChangedRegistry,
                serial: walks.serial)
        {
            return
        }
        if walks.isAlone,
            retargetAlone(
                borrowed, changed: walks.unmanagedChanged, changedRegistry: walks.unmanagedChangedRegistry,
                serial: walks.serial)
        {
            return
        }
        guard let extras else { return }
        let (first, more) = changedSteps(borrowed, registry: walks.unmanagedChangedRegistry, serial: walks.serial)
        guard let first else { return }
        func move(_ start: (path: Int, step: Int)) {
            if extras.paths[start.path].hasInnerWildcard {
                guard let root = rootRegistry.weakOwner else { return }
                walks.walk(self, pathIndex: start.path, from: root, step: 0)
            } else {
                walks.walk(self, pathIndex: start.path, from: walks.changed, step: start.step)
            }
        }
        move(first)
        for start in more { move(start) }
    }

    /// `retarget(walks:)` for a set that moves this subscription alone, by the route of
    /// `moveTwoStepLeaf`, without a `WalkMemo` (which `moveTwoStepLeaf` doesn't use, and whose
    /// list a retarget destroyed): returns false, having done nothing, when that route doesn't
    /// apply; the caller then retargets with a memo. `changed` is borrowed: the setter holds it.
    final func retargetTwoStepAlone(changed: ObservableModelBase, serial: UInt64) -> Bool {
        guard !isProperty, extras != nil else { return false }
        let borrowed = extras.unsafelyUnwrapped
        let isTwoStep = borrowed.withPaths { $0.count == 1 && $0[0].hasOneMiddleStep }
        guard isTwoStep else { return false }
        // Borrowed (the changed object holds it), as `WalkMemo` does.
        let changedRegistry =
            changed.withExistingRegistry { Unmanaged.passUnretained($0) } ?? Unmanaged.passUnretained(changed.registry)
        return moveTwoStepLeaf(
            borrowed, changed: Unmanaged.passUnretained(changed), changedRegistry: changedRegistry, serial: serial)
    }

    /// `retargetAlone` for the one path of two steps, moved from its root (a chain `\.owner`
    /// then `\.count`, retargeted by a set of `owner`: W17's view-model token), when the
    /// subscription's edges have that path's shape (its middle edge, and at most its leaf): reads
    /// where the leaf runs now (`ObservedPath.readTwoStepLeaf`) and moves the leaf edge, with no
    /// targets, buffers or loops. Returns false, having changed nothing, when the path can't be
    /// read this way or the edges have another shape; the caller then takes the general route
    /// (`retargetAlone`).
    ///
    /// Kept beside the general route, which moves this shape too, because it is cheaper on the
    /// shape every W17 retarget has: the general route (`readPast`, `moveRun`) costs ≈ 145
    /// instructions more per retarget, ≈ 23 per W17 set (see docs/Performance.md, "Known
    /// limits"). Its steps are `moveRun`'s for a run of one edge: a walk whose middle edge is
    /// gone (another retarget moved the path off the changed object) or of an ended subscription
    /// moves nothing; the new leaf is attached before the old one is detached (a property that
    /// stays observed never reports 1 → 0 → 1); the hooks run after the lock. The leaf object,
    /// held by the read, keeps its registry alive while it is borrowed here. Nothing is read
    /// again after the move: the only value read was this set's own (see `ObservedPath.readPast`).
    @inline(__always)
    private func moveTwoStepLeaf(
        _ extras: SubscriptionExtras, changed: Unmanaged<ObservableModelBase>,
        changedRegistry: Unmanaged<Registry>, serial: UInt64
    ) -> Bool {
        let expected = changedRegistry.toOpaque()
        let path = extras.withPaths { Unmanaged.passUnretained($0[0]) }
        let read = path._withUnsafeGuaranteedRef { path in
            changed._withUnsafeGuaranteedRef { path.readTwoStepLeaf(from: $0, changedSerial: serial) }
        }
        guard let read else { return false }
        // The leaf's registry is borrowed: the leaf holds it, and the read holds the leaf.
        let leafRegistry = read?.registry
        let leafSerial = read?.serial ?? 0
        var hooks = ObservationStateHooks()
        let isMoved = extras.withLock { state -> Bool in
            guard isActive else { return true }
            // The list edited in place: a path of two steps has at most two edges, inline (a
            // list that spilled, which it never does, takes the general route).
            let isMoved = state.edges.editInline { slots, count -> Bool in
                // Read as edges (a `.some` edge has an edge's layout); no copy, no retain.
                let edges = UnsafeMutableRawPointer(slots).assumingMemoryBound(to: Edge.self)
                let isMiddle = { (edge: Edge) in
                    edge.path == 0 && edge.step == 0 && !edge.isLeaf && edge.serial == serial
                        && Unmanaged.passUnretained(edge.registry).toOpaque() == expected
                }
                // The edges are the walk's middle edge and at most the leaf; else, with the middle
                // edge elsewhere, another shape (the general route), and without it, a stale walk
                // (nothing to move).
                guard count == 1 || count == 2, isMiddle(edges[0]),
                    count == 1 || (edges[1].path == 0 && edges[1].step == 1 && edges[1].isLeaf)
                else {
                    return !UnsafeBufferPointer(start: edges, count: count).contains(where: isMiddle)
                }
                var slot: Int?
                if let leafRegistry {
                    if count == 2, edges[1].serial == leafSerial,
                        Unmanaged.passUnretained(edges[1].registry).toOpaque() == leafRegistry.toOpaque()
                    {
                        return true
                    }
                    slot = leafRegistry._withUnsafeGuaranteedRef {
                        $0.attach(self, serial: leafSerial, isLeaf: true, hooks: &hooks)
                    }
                }
                // As `moveRun`: the old leaf is moved out of the list and detached; its
                // place takes the new leaf, or goes when there is none (or its object
                // deinitialized since the read).
                var old: Edge?
                if count == 2 {
                    old = (edges + 1).move()
                    if let slot, let leafRegistry {
                        (edges + 1).initialize(
                            to: Edge(
                                leafOnPath0: leafRegistry.takeUnretainedValue(), serial: leafSerial, slot: slot,
                                step: 1))
                    } else {
                        (slots + 1).initialize(to: nil)
                        count = 1
                    }
                } else if let slot, let leafRegistry {
                    (edges + 1).initialize(
                        to: Edge(
                            leafOnPath0: leafRegistry.takeUnretainedValue(), serial: leafSerial, slot: slot, step: 1))
                    count = 2
                }
                if let old {
                    Unmanaged.passUnretained(old.registry)._withUnsafeGuaranteedRef {
                        $0.detach(serial: old.serial, slot: old.slot, hooks: &hooks)
                    }
                }
                return true
            }
            return isMoved ?? false
        }
        hooks.run()
        read?.leaf.release()
        return isMoved
    }

    /// Where the change of `registry`'s property `serial` sits on the paths: for each path
    /// through it, the first step whose edge is on it (a path may loop through it). One path
    /// (the usual case) needs no list.
    private func changedSteps(_ extras: SubscriptionExtras, registry: Unmanaged<Registry>, serial: UInt64)
        -> (first: (path: Int, step: Int)?, more: [(path: Int, step: Int)])
    {
        let changed = registry.toOpaque()
        var first: (path: Int, step: Int)?
        var more: [(path: Int, step: Int)] = []
        extras.withLock { state in
            guard isActive else { return }
            // Through the buffer: iterating the array would retain and release it.
            state.edges.withUnsafeBufferPointer { edges in
                for edge in edges
                where !edge.isLeaf && (edge.serial == serial || edge.serial == PathStep.wildcardSerial)
                    && Unmanaged.passUnretained(edge.registry).toOpaque() == changed
                {
                    let (path, step) = (Int(edge.path), Int(edge.step))
                    if first == nil {
                        first = (path, step)
                    } else if first!.path == path {
                        first!.step = min(first!.step, step)
                    } else if let index = more.firstIndex(where: { $0.path == path }) {
                        more[index].step = min(more[index].step, step)
                    } else {
                        more.append((path, step))
                    }
                }
            }
        }
        return (first, more)
    }

    /// `retarget(walks:)` for a set that moves this subscription alone (the setter's slow path
    /// found no other), without the memo's list: returns false, having done nothing, when the
    /// subscription needs one (its paths run through the changed property in several places,
    /// or fan out before it). Borrows the extras (held by this subscription, a `let`), the
    /// changed object and its registry (held by the setter).
    ///
    /// The changed step is known without a look at the edges for a path of one middle step
    /// (`ObservedPath.hasOneMiddleStep`: a chain `\.owner` then `\.count`, W17's view-model
    /// token); otherwise the edges on the changed property say where it is. The move checks,
    /// under the lock, that the edge there is still in place.
    @inline(__always)
    private func retargetAlone(
        _ extras: SubscriptionExtras, changed: Unmanaged<ObservableModelBase>,
        changedRegistry: Unmanaged<Registry>, serial: UInt64
    ) -> Bool {
        let isOneMiddleStep = extras.withPaths { $0.count == 1 && $0[0].hasOneMiddleStep }
        if isOneMiddleStep {
            moveAlone(extras, pathIndex: 0, step: 0, changed: changed, changedRegistry: changedRegistry, serial: serial)
            return true
        }
        let (first, more) = changedSteps(extras, registry: changedRegistry, serial: serial)
        guard let first else { return true }
        let isLinear = extras.withPaths { !$0[first.path].hasInnerWildcard }
        guard more.isEmpty, isLinear else { return false }
        moveAlone(
            extras, pathIndex: first.path, step: first.step, changed: changed, changedRegistry: changedRegistry,
            serial: serial)
        return true
    }

    /// Retargets one linear path at step `step`, the changed property's: reads where the path
    /// runs past it (`ObservedPath.readPast`: no walk keys, nor their retains of the
    /// registries), moves the edges past it (`moveEdges(_:path:past:on:serial:to:)`), then reads
    /// again while what it read was stored to since (a set on an object that had no edge yet
    /// tells no one; bounded, as `WalkMemo.revalidate()`: a path that keeps changing is left to
    /// the setters doing that, which find the attached edges). A read of nothing but this set's
    /// own value (the usual two-step chain) can't have been overtaken: no second read.
    ///
    /// Borrows what it uses: the path (held by the extras' `paths`, a `let`), the objects read
    /// (held by the targets, by the reads' own references, until `removeAll()`).
    @inline(__always)
    private func moveAlone(
        _ extras: SubscriptionExtras, pathIndex: Int, step: Int, changed: Unmanaged<ObservableModelBase>,
        changedRegistry: Unmanaged<Registry>, serial: UInt64
    ) {
        let path = extras.withPaths { Unmanaged.passUnretained($0[pathIndex]) }
        path._withUnsafeGuaranteedRef { path in
            changed._withUnsafeGuaranteedRef { changed in
                // At most one target per step past the changed one; twice: a read again.
                let capacity = path.steps.count - step - 1
                withUnsafeTemporaryAllocation(of: EdgeTarget.self, capacity: 2 * capacity) { memory in
                    var targets = EdgeTargetBuffer(UnsafeMutableBufferPointer(rebasing: memory[..<capacity]))
                    let readOnlyOwnSet = path.readPast(
                        step, from: changed, pathIndex: pathIndex, changedSerial: serial, into: &targets)
                    let isOnePath = extras.withPaths { $0.count == 1 }
                    var isMoved = moveEdges(
                        extras, path: Int32(pathIndex), past: Int32(step), on: changedRegistry, serial: serial,
                        isOnePath: isOnePath, to: targets.targets)
                    if !readOnlyOwnSet {
                        var again = EdgeTargetBuffer(UnsafeMutableBufferPointer(rebasing: memory[capacity...]))
                        for _ in 0..<4 where isMoved {
                            if targets.isUnwritten { break }
                            path.readPast(
                                step, from: changed, pathIndex: pathIndex, changedSerial: serial, into: &again)
                            if targets.isSame(as: again) {
                                again.removeAll()
                                break
                            }
                            targets.take(&again)
                            isMoved = moveEdges(
                                extras, path: Int32(pathIndex), past: Int32(step), on: changedRegistry,
                                serial: serial, isOnePath: isOnePath, to: targets.targets)
                        }
                    }
                    targets.removeAll()
                }
            }
        }
    }

    /// Moves path `path`'s edges past step `step` to `targets` under the extras' lock
    /// (`moveEdges(in:path:past:on:serial:to:hooks:)`), and runs the hooks after it. Returns
    /// false, having moved nothing, when the subscription ended or the read is stale.
    @inline(__always)
    private func moveEdges(
        _ extras: SubscriptionExtras, path: Int32, past step: Int32, on registry: Unmanaged<Registry>,
        serial: UInt64, isOnePath: Bool, to targets: UnsafeMutableBufferPointer<EdgeTarget>
    ) -> Bool {
        var hooks = ObservationStateHooks()
        let isMoved = extras.withLock { state -> Bool in
            // "Ended" is checked under the lock `end()` takes the edges under: an ended
            // subscription never gains an edge.
            guard isActive else { return false }
            return moveEdges(
                in: &state, path: path, past: step, on: registry, serial: serial, isOnePath: isOnePath,
                to: targets, hooks: &hooks)
        }
        hooks.run()
        return isMoved
    }

    /// Under the extras' lock: a retarget's move. The edge the read started from — step `step`
    /// of path `path`, on `registry`'s property `serial` (the changed property) — stays, and the
    /// path's edges past it are made to match `targets` (`moveRun`). Returns false, moving
    /// nothing, when that edge is gone: another retarget moved the path off the changed object,
    /// and the read is stale.
    ///
    /// A subscription of one linear path (`isOnePath`) has its edges in step order, one per step
    /// (a path's first edges are its walk's, in order, and every move keeps the order): the
    /// changed edge is usually at its step's position, and the edges past it are the rest of the
    /// list. Several paths' edges may interleave: their run is looked for, and when it is not
    /// one, the list is built again.
    private func moveEdges(
        in state: inout SubscriptionExtras.State, path: Int32, past step: Int32, on registry: Unmanaged<Registry>,
        serial: UInt64, isOnePath: Bool, to targets: UnsafeMutableBufferPointer<EdgeTarget>,
        hooks: inout ObservationStateHooks
    ) -> Bool {
        let expected = registry.toOpaque()
        let count = state.edges.count
        let isPast = { (edge: Edge) in edge.path == path && edge.step > step }
        // (where the changed edge is, the end of the run past it, whether the path's edges past it
        // are that run).
        let (changed, high, isRun) = state.edges.withUnsafeBufferPointer { edges -> (Int?, Int, Bool) in
            let isChanged = { (edge: Edge) in
                edge.path == path && edge.step == step && !edge.isLeaf && edge.serial == serial
                    && Unmanaged.passUnretained(edge.registry).toOpaque() == expected
            }
            let at = Int(step)
            guard let changed = at < count && isChanged(edges[at]) ? at : edges.firstIndex(where: isChanged) else {
                return (nil, 0, false)
            }
            if isOnePath { return (changed, count, true) }
            var high = changed + 1
            while high < count, isPast(edges[high]) { high += 1 }
            for index in 0..<changed where isPast(edges[index]) { return (changed, high, false) }
            for index in high..<count where isPast(edges[index]) { return (changed, high, false) }
            return (changed, high, true)
        }
        guard let changed else { return false }
        if isRun {
            moveRun(in: &state, from: changed + 1, to: high, targets: targets, hooks: &hooks)
        } else {
            // Several paths whose edges interleave: the list is built again.
            let keys = targets.map {
                ObservedPath.EdgeKey(
                    registry: $0.registry.takeUnretainedValue(), serial: $0.serial, isLeaf: $0.isLeaf,
                    path: Int($0.path), step: Int($0.step), version: $0.version)
            }
            keys.withUnsafeBufferPointer { rebuildEdges(in: &state, where: isPast, with: $0, hooks: &hooks) }
        }
        return true
    }

    /// Walks every path from the root again, at delivery, after an object on them deinitialized
    /// (its deinit may run inside another property's write, where nothing may be read).
    final func walkPathsAgain(root: ObservableModelBase) {
        guard !isProperty, let extras else { return }
        var walks = WalkMemo(changed: root, serial: 0)
        for pathIndex in extras.paths.indices {
            walks.walk(self, pathIndex: pathIndex, from: root, step: 0)
        }
        walks.revalidate()
    }

    /// Replaces the edges of path `path` from step `start` on with `keys`, unless the walk is
    /// stale: `expecting`, the edge the walk started from, is no longer there (another retarget
    /// moved the path off the changed object).
    final func moveEdges(
        path: Int32, from start: Int32, expecting: (Registry, UInt64)?,
        to keys: UnsafeBufferPointer<ObservedPath.EdgeKey>
    ) {
        guard let extras else { return }
        let hooks = extras.withLock { state -> ObservationStateHooks in
            var hooks = ObservationStateHooks()
            guard isActive else { return hooks }
            if let (registry, serial) = expecting {
                // A walk from the changed property (a retarget): its first key is that property's
                // edge, which stays; the edges past it move, as a retarget alone moves them.
                if let first = keys.first, first.step == start, !first.isLeaf, first.serial == serial,
                    first.registry === registry
                {
                    withUnsafeTemporaryAllocation(of: EdgeTarget.self, capacity: keys.count - 1) { targets in
                        for index in 1..<keys.count {
                            targets.initializeElement(at: index - 1, to: EdgeTarget(keys[index]))
                        }
                        _ = moveEdges(
                            in: &state, path: path, past: start, on: Unmanaged.passUnretained(registry),
                            serial: serial, isOnePath: extras.paths.count == 1, to: targets, hooks: &hooks)
                    }
                    return hooks
                }
                let isThere = state.edges.contains {
                    $0.path == path && $0.step == start && !$0.isLeaf && $0.serial == serial && $0.registry === registry
                }
                guard isThere else { return hooks }
            }
            replaceEdges(in: &state, where: { $0.path == path && $0.step >= start }, with: keys, hooks: &hooks)
            return hooks
        }
        hooks.run()
    }

    /// Makes the edges that `isReplaced` selects match `keys`. Every new edge is attached before
    /// any old one is detached, so a property that stays observed never reports a 1 → 0 → 1
    /// transition. Under the extras' lock.
    final func replaceEdges(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) {
        if replaceInPlace(in: &state, where: isReplaced, with: keys, hooks: &hooks) { return }
        rebuildEdges(in: &state, where: isReplaced, with: keys, hooks: &hooks)
    }

    /// The usual `replaceEdges` (an object on a path replaced, set to nil, or set where there
    /// was nil): the replaced edges are one run, moved to the keys by `moveRun`. Returns false,
    /// changing nothing, when they are not (none yet, or interleaved with another path's).
    private func replaceInPlace(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) -> Bool {
        guard let low = state.edges.firstIndex(where: isReplaced) else { return false }
        var high = low + 1
        while high < state.edges.count, isReplaced(state.edges[high]) { high += 1 }
        guard !state.edges[high...].contains(where: isReplaced) else { return false }
        withUnsafeTemporaryAllocation(of: EdgeTarget.self, capacity: keys.count) { targets in
            for index in keys.indices { targets.initializeElement(at: index, to: EdgeTarget(keys[index])) }
            moveRun(in: &state, from: low, to: high, targets: targets, hooks: &hooks)
        }
        return true
    }

    /// The one move of a path's edges, shared by every retarget and walk: makes the run
    /// `state.edges[low..<high]` (one path's edges, in step order) match `targets` (where the
    /// path runs now, in step order), position by position. An edge that matches its position's
    /// target stays. Every other target's edge is attached first (its slot kept in the target);
    /// then each replaced edge is moved out of the list (not copied) and detached, its place
    /// taken by the new edge, and the edges the path gained or lost are appended or removed at
    /// the run's end. Every new edge is attached before any old one is detached, so a property
    /// that stays observed never reports 1 → 0 → 1 (the transitions are collected in `hooks`,
    /// run after the lock). A target whose object deinitialized since it was read (its attach
    /// fails) gets no edge. Under the extras' lock.
    private func moveRun(
        in state: inout SubscriptionExtras.State, from low: Int, to high: Int,
        targets: UnsafeMutableBufferPointer<EdgeTarget>, hooks: inout ObservationStateHooks
    ) {
        let oldCount = high - low
        let common = Swift.min(oldCount, targets.count)
        // The first position that changes.
        var first = 0
        state.edges.withUnsafeBufferPointer { edges in
            while first < common, targets[first].matches(edges[low + first]) { first += 1 }
        }
        if first == common, oldCount == targets.count { return }
        // Every new edge attached first.
        var isFailed = false
        state.edges.withUnsafeBufferPointer { edges in
            for index in first..<targets.count {
                if index < common, targets[index].matches(edges[low + index]) {
                    targets[index].slot = EdgeTarget.kept
                } else if let slot = attach(targets[index], hooks: &hooks) {
                    targets[index].slot = slot
                } else {
                    targets[index].slot = EdgeTarget.failed
                    isFailed = true
                }
            }
        }
        if isFailed {
            moveRunDroppingFailed(in: &state, from: low, to: high, first: first, targets: targets, hooks: &hooks)
            return
        }
        // Then each replaced edge goes, its place taken by its new edge.
        if first < common {
            state.edges.withUnsafeMutableBufferPointer { edges in
                let base = edges.baseAddress! + low
                for index in first..<common where targets[index].slot != EdgeTarget.kept {
                    let old = (base + index).move()
                    (base + index).initialize(to: Edge(targets[index], slot: targets[index].slot))
                    detach(old, hooks: &hooks)
                }
            }
        }
        if common < targets.count {
            var end = high
            for index in common..<targets.count {
                // At the list's end (one path: the usual case), appended.
                if end == state.edges.count {
                    state.edges.append(Edge(targets[index], slot: targets[index].slot))
                } else {
                    state.edges.insert(Edge(targets[index], slot: targets[index].slot), at: end)
                }
                end += 1
            }
        } else if common < oldCount {
            if high == state.edges.count {
                // At the list's end (one path: the usual case), moved out from the end.
                for _ in common..<oldCount { detach(state.edges.removeLast(), hooks: &hooks) }
            } else {
                let gone = Array(state.edges[(low + common)..<high])
                state.edges.removeSubrange((low + common)..<high)
                for edge in gone { detach(edge, hooks: &hooks) }
            }
        }
    }

    /// `moveRun` after a new edge's attach failed (its object deinitialized since the read):
    /// the run is built again without it, and every replaced edge detached. Rare.
    @inline(never)
    private func moveRunDroppingFailed(
        in state: inout SubscriptionExtras.State, from low: Int, to high: Int, first: Int,
        targets: UnsafeMutableBufferPointer<EdgeTarget>, hooks: inout ObservationStateHooks
    ) {
        let oldCount = high - low
        var run: [Edge] = []
        var gone: [Edge] = []
        for index in 0..<Swift.max(oldCount, targets.count) {
            let isOld = index < oldCount
            let slot = index < first ? EdgeTarget.kept : index < targets.count ? targets[index].slot : EdgeTarget.failed
            if slot == EdgeTarget.kept {
                run.append(state.edges[low + index])
                continue
            }
            if isOld { gone.append(state.edges[low + index]) }
            if slot >= 0 { run.append(Edge(targets[index], slot: slot)) }
        }
        state.edges.replaceSubrange(low..<high, with: run)
        for edge in gone { detach(edge, hooks: &hooks) }
    }

    /// Attaches this subscription where `target` says; nil when the object deinitialized since.
    /// The registry is borrowed for the call (the target's object, or its key, holds it).
    @inline(__always)
    private func attach(_ target: EdgeTarget, hooks: inout ObservationStateHooks) -> Int? {
        target.registry._withUnsafeGuaranteedRef {
            $0.attach(self, serial: target.serial, isLeaf: target.isLeaf, hooks: &hooks)
        }
    }

    /// Detaches an edge taken out of the list; its registry is borrowed for the call.
    @inline(__always)
    private func detach(_ edge: consuming Edge, hooks: inout ObservationStateHooks) {
        Unmanaged.passUnretained(edge.registry)._withUnsafeGuaranteedRef {
            $0.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks)
        }
    }

    /// `replaceEdges` when the edges can't move in place: builds the new list.
    private func rebuildEdges(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) {
        var next = EdgeList()
        // A subscription's first edges (`start(root:)`) get room for every step of its paths, so
        // a path that is shorter now (`owner` is nil) grows in place when it lengthens instead
        // of reallocating its list on the first such set.
        let full = state.edges.isEmpty ? extras?.paths.reduce(0) { $0 + $1.steps.count } ?? 0 : 0
        // (What it keeps and what it attaches, at most: more would move a short list out of line.)
        next.reserveCapacity(Swift.max(state.edges.count(where: { !isReplaced($0) }) + keys.count, full))
        var old: [Edge] = []
        for edge in state.edges {
            if isReplaced(edge) { old.append(edge) } else { next.append(edge) }
        }
        func attach(_ key: ObservedPath.EdgeKey) {
            if let slot = key.registry.attach(self, serial: key.serial, isLeaf: key.isLeaf, hooks: &hooks) {
                next.append(Edge(key, slot: slot))
            }
            // Otherwise the object deinitialized since the walk: its edge goes away.
        }
        if old.isEmpty {
            for key in keys { attach(key) }
        } else if old.count <= 16 {
            // Short paths: a scan that marks the edges it keeps in a bit mask.
            var kept: UInt16 = 0
            for key in keys {
                if let index = old.indices.first(where: { kept & (1 << $0) == 0 && old[$0].matches(key) }) {
                    kept |= 1 << index
                    next.append(old[index].kept(for: key))
                } else {
                    attach(key)
                }
            }
            for index in old.indices where kept & (1 << index) == 0 {
                old[index].registry.detach(serial: old[index].serial, slot: old[index].slot, hooks: &hooks)
            }
        } else {
            // Long paths match through a hash table, so moving them stays linear.
            var remaining: [EdgeID: [Edge]] = [:]
            for edge in old { remaining[EdgeID(edge.registry, edge.serial, edge.isLeaf), default: []].append(edge) }
            for key in keys {
                if let kept = remaining[EdgeID(key.registry, key.serial, key.isLeaf)]?.popLast() {
                    next.append(kept.kept(for: key))
                } else {
                    attach(key)
                }
            }
            for edges in remaining.values {
                for edge in edges { edge.registry.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks) }
            }
        }
        state.edges = next
    }
}

/// The walks made for one change, and the subscriptions they moved.
///
/// Tokens with the same typed path (1,000 views watching `cache.currentUser.address.zipCode`)
/// share one walk from the changed object. After the edges are attached, `revalidate()` reads
/// each walk again and moves its subscriptions once more if what it read has changed since.
struct WalkMemo {
    /// The object whose property changed, and its registry: the setter (or the caller of
    /// `walkPathsAgain`) keeps the object alive, and the object its registry, for as long as
    /// the memo lives (a local of theirs). Unretained: a memo is made for every set that needs
    /// the slow path.
    let unmanagedChanged: Unmanaged<ObservableModelBase>
    let unmanagedChangedRegistry: Unmanaged<Registry>
    var changed: ObservableModelBase { unmanagedChanged.takeUnretainedValue() }
    var changedRegistry: Registry { unmanagedChangedRegistry.takeUnretainedValue() }
    let serial: UInt64

    private struct Walk {
        let start: ObservableModelBase
        let step: Int
        let pathIndex: Int
        /// The path itself is the first subscriber's (`extras.paths[pathIndex]`): a copy here
        /// would retain what its steps hold, once per walk.
        let hasInnerWildcard: Bool
        /// Set for paths shared by key path identity.
        let identity: [ObjectIdentifier]?
        /// Present when the walk started at the changed object's property.
        let expecting: (Registry, UInt64)?
        var keys: [ObservedPath.EdgeKey]
        /// The subscriptions the walk moved: the first, and any others sharing the walk (kept
        /// apart so that the usual walk, for one subscription, allocates no list).
        let subscriber: Subscription
        var moreSubscribers: [Subscription]
    }

    private var walks: [Walk] = []

    /// Set when only one subscription is moved for this change: no walk can be shared, so none
    /// is memoized (`Subscription.retargetAlone`).
    let isAlone: Bool

    /// `changed` is borrowed (an initializer's argument is otherwise retained by the caller and
    /// released here).
    @inline(__always)
    init(changed: __shared ObservableModelBase, serial: UInt64, isAlone: Bool = false) {
        unmanagedChanged = Unmanaged.passUnretained(changed)
        // Borrowed (the changed object holds it): through `registry`, a retain and a release.
        unmanagedChangedRegistry =
            changed.withExistingRegistry { Unmanaged.passUnretained($0) } ?? Unmanaged.passUnretained(changed.registry)
        self.serial = serial
        self.isAlone = isAlone
    }

    /// Walks `subscription`'s path `pathIndex` from step `step` of `start` (sharing a walk made
    /// for another subscription when the path is the same typed path) and moves its edges.
    mutating func walk(_ subscription: Subscription, pathIndex: Int, from start: ObservableModelBase, step: Int) {
        guard let paths = subscription.extras?.paths else { return }
        let shared = paths.count == 1 ? paths[pathIndex].typedIdentity : nil
        let hasInnerWildcard = paths[pathIndex].hasInnerWildcard
        // A retarget's walk starts at the changed property; it is stale once the path no longer
        // runs through it. Walks from the root (fan-outs, `walkPathsAgain`) can't be stale.
        let expecting = start === changed && serial != 0 && !hasInnerWildcard ? (changedRegistry, serial) : nil
        if let shared,
            let index = walks.firstIndex(where: { $0.identity == shared && $0.step == step && $0.start === start })
        {
            walks[index].moreSubscribers.append(subscription)
            walks[index].keys.withUnsafeBufferPointer { keys in
                subscription.moveEdges(
                    path: Int32(pathIndex), from: Int32(step), expecting: walks[index].expecting, to: keys)
            }
            return
        }
        let keys = Self.keys(paths[pathIndex], pathIndex: pathIndex, from: start, step: step)
        walks.append(
            Walk(
                start: start, step: step, pathIndex: pathIndex, hasInnerWildcard: hasInnerWildcard, identity: shared,
                expecting: expecting, keys: keys, subscriber: subscription, moreSubscribers: []))
        keys.withUnsafeBufferPointer { keys in
            subscription.moveEdges(path: Int32(pathIndex), from: Int32(step), expecting: expecting, to: keys)
        }
    }

    /// Reads every walk again; where the path now runs elsewhere, moves its subscriptions
    /// again. Bounded: a path that keeps changing under it is left to the setters doing that,
    /// which find the attached edges and retarget it themselves.
    @inline(__always)
    mutating func revalidate() {
        // No walk (the usual retarget walks alone, on the stack): return before the loop, whose
        // hoisted uniqueness check would otherwise copy the shared empty array (≈ 60
        // instructions per retarget), and before the call.
        if walks.isEmpty { return }
        revalidateWalks()
    }

    private mutating func revalidateWalks() {
        for _ in 0..<4 {
            var moved = false
            for index in walks.indices {
                // Nothing the walk read was written since (one load per object): nothing to do.
                if isUnwritten(index) { continue }
                let walk = walks[index]
                guard let paths = walk.subscriber.extras?.paths else { continue }
                let keys = Self.keys(
                    paths[walk.pathIndex], pathIndex: walk.pathIndex, from: walk.start, step: walk.step)
                let isSame = keys.withUnsafeBufferPointer { keys in
                    walk.keys.withUnsafeBufferPointer { Self.same(keys, $0) }
                }
                guard !isSame else { continue }
                moved = true
                walks[index].keys = keys
                keys.withUnsafeBufferPointer { keys in
                    walk.subscriber.moveEdges(
                        path: Int32(walk.pathIndex), from: Int32(walk.step), expecting: walk.expecting, to: keys)
                    for subscription in walk.moreSubscribers {
                        subscription.moveEdges(
                            path: Int32(walk.pathIndex), from: Int32(walk.step), expecting: walk.expecting, to: keys)
                    }
                }
            }
            if !moved { return }
        }
    }

    /// Whether no object whose value a linear walk read has been stored to since: each middle
    /// step's object still has the store version the walk saw. A fan-out walk always counts as
    /// written (its keys don't record every read).
    ///
    /// Reads the walk in place: a copy of it would retain and release everything it holds.
    private func isUnwritten(_ index: Int) -> Bool {
        walks.withUnsafeBufferPointer { walks in
            guard !walks[index].hasInnerWildcard else { return false }
            return walks[index].keys.withUnsafeBufferPointer {
                Self.isUnwritten($0, changed: changed, changedRegistry: changedRegistry)
            }
        }
    }

    /// Whether no object whose value a linear walk read (the middle steps of `keys`) has been
    /// stored to since the walk. The changed object's version is read without its registry's
    /// lock: the setter keeps it alive (the lock is there to keep other owners from going away).
    /// A synthetic step's key has version -1, which no object has: its value changes without a
    /// store on its object, so a walk through one is always read again.
    static func isUnwritten(
        _ keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, changed: ObservableModelBase, changedRegistry: Registry
    ) -> Bool {
        for key in keys.indices where !keys[key].isLeaf {
            let version =
                keys[key].registry === changedRegistry ? changed.storeVersion : keys[key].registry.ownerStoreVersion
            guard version == keys[key].version else { return false }
        }
        return true
    }

    private static func keys(_ path: ObservedPath, pathIndex: Int, from start: ObservableModelBase, step: Int)
        -> [ObservedPath.EdgeKey]
    {
        var keys: [ObservedPath.EdgeKey] = []
        _ = path.walk(from: start, startingAt: step, pathIndex: pathIndex, into: &keys, needsEndpoint: false)
        return keys
    }

    static func same(_ lhs: UnsafeBufferPointer<ObservedPath.EdgeKey>, _ rhs: UnsafeBufferPointer<ObservedPath.EdgeKey>)
        -> Bool
    {
        lhs.count == rhs.count
            && zip(lhs, rhs).allSatisfy {
                $0.registry === $1.registry && $0.serial == $1.serial && $0.isLeaf == $1.isLeaf
            }
    }
}
