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
        // One path of two linear steps (a chain `\.owner` then `\.count`), the usual case: its
        // only middle edge is step 0, on the root, so the change sits there without a look at
        // the edges (and their lock). `moveEdges` checks under the lock that the edge is still
        // there and the subscription active, as the scan below would have. The extras are
        // borrowed: `self` (alive for the call) holds its `let` extras.
        let borrowed = Unmanaged.passUnretained(extras.unsafelyUnwrapped)
        if walks.isAlone,
            borrowed._withUnsafeGuaranteedRef({ extras in
                extras.paths.count == 1 && extras.paths.withUnsafeBufferPointer { $0[0].hasOneMiddleStep }
            })
        {
            let isMoved = moveTwoStepLeaf(
                borrowed, changed: walks.unmanagedChanged, changedRegistry: walks.unmanagedChangedRegistry,
                serial: walks.serial)
            if isMoved { return }
            retargetAlone(borrowed, pathIndex: 0, step: 0, walks: walks)
            return
        }
        guard let extras else { return }
        let changed = walks.changedRegistry
        let serial = walks.serial
        // Where the change sits on each path: its first edge there (a path may loop through it).
        // One path (the usual case) needs no list.
        var first: (path: Int32, step: Int32)?
        var more: [(path: Int32, step: Int32)] = []
        extras.withLock { state in
            guard isActive else { return }
            // Through the buffer: iterating the array would retain and release it.
            state.edges.withUnsafeBufferPointer { edges in
                for edge in edges
                where !edge.isLeaf && (edge.serial == serial || edge.serial == PathStep.wildcardSerial)
                    && edge.registry === changed
                {
                    if first == nil {
                        first = (edge.path, edge.step)
                    } else if first!.path == edge.path {
                        first!.step = min(first!.step, edge.step)
                    } else if let index = more.firstIndex(where: { $0.path == edge.path }) {
                        more[index].step = min(more[index].step, edge.step)
                    } else {
                        more.append((edge.path, edge.step))
                    }
                }
            }
        }
        guard let first else { return }
        if more.isEmpty, walks.isAlone {
            let pathIndex = Int(first.path)
            let linear = extras.paths.withUnsafeBufferPointer { !$0[pathIndex].hasInnerWildcard }
            if linear {
                retargetAlone(borrowed, pathIndex: pathIndex, step: Int(first.step), walks: walks)
                return
            }
        }
        func move(_ start: (path: Int32, step: Int32)) {
            let pathIndex = Int(start.path)
            if extras.paths[pathIndex].hasInnerWildcard {
                guard let root = rootRegistry.weakOwner else { return }
                walks.walk(self, pathIndex: pathIndex, from: root, step: 0)
            } else {
                walks.walk(self, pathIndex: pathIndex, from: walks.changed, step: Int(start.step))
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
        let borrowed = Unmanaged.passUnretained(extras.unsafelyUnwrapped)
        let isTwoStep = borrowed._withUnsafeGuaranteedRef { extras in
            extras.paths.count == 1 && extras.paths.withUnsafeBufferPointer { $0[0].hasOneMiddleStep }
        }
        guard isTwoStep else { return false }
        // Borrowed (the changed object holds it), as `WalkMemo` does.
        let changedRegistry =
            changed.withExistingRegistry { Unmanaged.passUnretained($0) } ?? Unmanaged.passUnretained(changed.registry)
        return moveTwoStepLeaf(
            borrowed, changed: Unmanaged.passUnretained(changed), changedRegistry: changedRegistry, serial: serial)
    }

    /// `retarget(walks:)` for one linear path when no other subscription of the change can share
    /// its walk (the usual case): the walk's keys live on the stack, nothing is memoized, and
    /// the walk is read again (see `WalkMemo.revalidate()`) right after its edges moved.
    ///
    /// Borrows what it uses, without retaining it: the extras (held by this subscription, a
    /// `let`), the path (held by the extras' `paths`, a `let`), the changed object and its
    /// registry (held by the setter, through `walks`).
    @inline(__always)
    private func retargetAlone(
        _ extras: Unmanaged<SubscriptionExtras>, pathIndex: Int, step: Int, walks: borrowing WalkMemo
    ) {
        let changed = walks.unmanagedChanged
        let changedRegistry = walks.unmanagedChangedRegistry
        let serial = walks.serial
        let path = extras._withUnsafeGuaranteedRef { extras in
            extras.paths.withUnsafeBufferPointer { Unmanaged.passUnretained($0[pathIndex]) }
        }
        path._withUnsafeGuaranteedRef { path in
            changed._withUnsafeGuaranteedRef { changed in
                let capacity = path.steps.count - step
                // Twice the path's length: the keys the edges moved to, and a walk read again.
                withUnsafeTemporaryAllocation(of: ObservedPath.EdgeKey.self, capacity: 2 * capacity) { memory in
                    var keys = EdgeKeyBuffer(UnsafeMutableBufferPointer(rebasing: memory[..<capacity]))
                    var again = EdgeKeyBuffer(UnsafeMutableBufferPointer(rebasing: memory[capacity...]))
                    // A walk that read nothing but this set's own value (the usual two-step
                    // chain) can't have been overtaken by another thread's store: no second read.
                    let readOnlyOwnSet = path.walkEdges(
                        from: changed, startingAt: step, pathIndex: pathIndex, changedSerial: serial, into: &keys)
                    moveEdgesAlone(
                        extras, path: Int32(pathIndex), from: Int32(step), expecting: changedRegistry, serial: serial,
                        to: keys.keys)
                    for _ in 0..<(readOnlyOwnSet ? 0 : 4) {
                        let isUnwritten = changedRegistry._withUnsafeGuaranteedRef {
                            WalkMemo.isUnwritten(keys.keys, changed: changed, changedRegistry: $0)
                        }
                        if isUnwritten { break }
                        path.walkEdges(
                            from: changed, startingAt: step, pathIndex: pathIndex, changedSerial: serial, into: &again)
                        if WalkMemo.same(keys.keys, again.keys) {
                            again.removeAll()
                            break
                        }
                        keys.take(&again)
                        moveEdgesAlone(
                            extras, path: Int32(pathIndex), from: Int32(step), expecting: changedRegistry,
                            serial: serial, to: keys.keys)
                    }
                    keys.removeAll()
                }
            }
        }
    }

    /// `retargetAlone` for the one path of two steps, moved from its root (a chain `\.owner`
    /// then `\.count`, retargeted by a set of `owner`: W17's view-model token), when the
    /// subscription's edges have that path's shape (its middle edge, and at most its leaf): reads
    /// where the leaf runs now (`ObservedPath.readTwoStepLeaf`) and moves the leaf edge, with no
    /// walk keys (nor their retains of the registries), buffers or shape checks of keys. Returns
    /// false, having changed nothing, when the path can't be read this way or the edges have
    /// another shape; the caller then walks (`retargetAlone`).
    ///
    /// As `moveEdgesAlone` and `moveLeafEdge`: a walk whose middle edge is gone (another
    /// retarget moved the path off the changed object) or of an ended subscription moves
    /// nothing; the new leaf is attached before the old one is detached (a property that stays
    /// observed never reports 1 → 0 → 1); the hooks run after the lock. The leaf object, held by
    /// the read, keeps its registry alive while it is borrowed here. Nothing is read again after
    /// the move: the only value read was this set's own (see `walkEdges`).
    @inline(__always)
    private func moveTwoStepLeaf(
        _ extras: Unmanaged<SubscriptionExtras>, changed: Unmanaged<ObservableModelBase>,
        changedRegistry: Unmanaged<Registry>, serial: UInt64
    ) -> Bool {
        let expected = changedRegistry.toOpaque()
        let path = extras._withUnsafeGuaranteedRef { extras in
            extras.paths.withUnsafeBufferPointer { Unmanaged.passUnretained($0[0]) }
        }
        let read = path._withUnsafeGuaranteedRef { path in
            changed._withUnsafeGuaranteedRef { path.readTwoStepLeaf(from: $0, changedSerial: serial) }
        }
        guard let read else { return false }
        // The leaf's registry is borrowed: the leaf holds it, and the read holds the leaf.
        let leafRegistry = read?.registry
        let leafSerial = read?.serial ?? 0
        var hooks = ObservationStateHooks()
        let isMoved = extras._withUnsafeGuaranteedRef { extras in
            extras.withLock { state -> Bool in
                guard isActive else { return true }
                let count = state.edges.count
                // (isThere, isShape): the walk's middle edge is still there; the edges are it and
                // at most the leaf.
                let (isThere, isShape) = state.edges.withUnsafeBufferPointer { edges in
                    let isMiddle = { (edge: Edge) in
                        edge.path == 0 && edge.step == 0 && !edge.isLeaf && edge.serial == serial
                            && Unmanaged.passUnretained(edge.registry).toOpaque() == expected
                    }
                    if count == 1 || count == 2, isMiddle(edges[0]) {
                        return (true, count == 1 || (edges[1].path == 0 && edges[1].step == 1 && edges[1].isLeaf))
                    }
                    return (edges.contains(where: isMiddle), false)
                }
                guard isThere else { return true }
                guard isShape else { return false }
                var slot: Int?
                if let leafRegistry {
                    if count == 2 {
                        let isKept = state.edges.withUnsafeBufferPointer {
                            $0[1].serial == leafSerial
                                && Unmanaged.passUnretained($0[1].registry).toOpaque() == leafRegistry.toOpaque()
                        }
                        if isKept { return true }
                    }
                    slot = leafRegistry._withUnsafeGuaranteedRef {
                        $0.attach(self, serial: leafSerial, isLeaf: true, hooks: &hooks)
                    }
                }
                // As `moveLeafEdge`: the old leaf is moved out of the list and detached; its
                // place takes the new leaf, or goes when there is none (or its object
                // deinitialized since the read).
                var old: Edge?
                if count == 2 {
                    if let slot, let leafRegistry {
                        old = state.edges.withUnsafeMutableBufferPointer { edges in
                            let base = edges.baseAddress! + 1
                            let moved = base.move()
                            base.initialize(
                                to: Edge(
                                    leafOnPath0: leafRegistry.takeUnretainedValue(), serial: leafSerial, slot: slot,
                                    step: 1))
                            return moved
                        }
                    } else {
                        old = state.edges.removeLast()
                    }
                } else if let slot, let leafRegistry {
                    state.edges.append(
                        Edge(leafOnPath0: leafRegistry.takeUnretainedValue(), serial: leafSerial, slot: slot, step: 1))
                }
                if let old {
                    Unmanaged.passUnretained(old.registry)._withUnsafeGuaranteedRef {
                        $0.detach(serial: old.serial, slot: old.slot, hooks: &hooks)
                    }
                }
                return true
            }
        }
        hooks.run()
        read?.leaf.release()
        return isMoved
    }

    /// `moveEdges(path:from:expecting:to:)` for `retargetAlone`, with the extras and the
    /// expected edge's registry borrowed.
    @inline(__always)
    private func moveEdgesAlone(
        _ extras: Unmanaged<SubscriptionExtras>, path: Int32, from start: Int32,
        expecting registry: Unmanaged<Registry>, serial: UInt64, to keys: UnsafeBufferPointer<ObservedPath.EdgeKey>
    ) {
        let expected = registry.toOpaque()
        let hooks = extras._withUnsafeGuaranteedRef { extras in
            extras.withLock { state -> ObservationStateHooks in
                var hooks = ObservationStateHooks()
                guard isActive else { return hooks }
                let isThere = state.edges.withUnsafeBufferPointer { edges in
                    edges.contains {
                        $0.path == path && $0.step == start && !$0.isLeaf && $0.serial == serial
                            && Unmanaged.passUnretained($0.registry).toOpaque() == expected
                    }
                }
                guard isThere else { return hooks }
                // A two-step path's leaf moved (W17's `owner.count`): its own short route.
                if start == 0, moveLeafEdge(in: &state, path: path, to: keys, hooks: &hooks) { return hooks }
                // The usual move in place, called directly (not through `replaceEdges`).
                let isReplaced = { (edge: Edge) in edge.path == path && edge.step >= start }
                if !replaceInPlace(in: &state, where: isReplaced, with: keys, hooks: &hooks) {
                    rebuildEdges(in: &state, where: isReplaced, with: keys, hooks: &hooks)
                }
                return hooks
            }
        }
        hooks.run()
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

    /// Makes the edges that `isReplaced` selects match `keys`, keeping edges that are already in
    /// place. Every new edge is attached before any old one is detached, so a property that
    /// stays observed never reports a 1 → 0 → 1 transition. Under the extras' lock.
    final func replaceEdges(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) {
        if replaceInPlace(in: &state, where: isReplaced, with: keys, hooks: &hooks) { return }
        rebuildEdges(in: &state, where: isReplaced, with: keys, hooks: &hooks)
    }

    /// `replaceEdges` when the edges can't move in place: builds the new list.
    private func rebuildEdges(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) {
        var next: [Edge] = []
        // A subscription's first edges (`start(root:)`) get room for every step of its paths, so
        // a path that is shorter now (`owner` is nil) grows in place when it lengthens instead
        // of reallocating its list on the first such set.
        let full = state.edges.isEmpty ? extras?.paths.reduce(0) { $0 + $1.steps.count } ?? 0 : 0
        next.reserveCapacity(Swift.max(state.edges.count + keys.count, full))
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

extension Subscription {
    /// `replaceInPlace` for the one shape a two-step path's retarget from its root has: the
    /// subscription's edges are the path's middle edge (step 0) and at most its leaf (step 1),
    /// the walk's keys the same middle edge and at most a new leaf. Only the leaf moves: the new
    /// one is attached before the old one is detached, as `replaceInPlace` does, with no lists,
    /// masks or closures. Returns false, changing nothing, for any other shape (the caller then
    /// takes the general route). Under the extras' lock.
    @inline(__always)
    fileprivate func moveLeafEdge(
        in state: inout SubscriptionExtras.State, path: Int32,
        to keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) -> Bool {
        let count = state.edges.count
        guard count == 1 || count == 2, keys.count == 1 || keys.count == 2 else { return false }
        let isShape = state.edges.withUnsafeBufferPointer { edges in
            edges[0].path == path && edges[0].step == 0 && !edges[0].isLeaf && edges[0].matches(keys[0])
                && (count == 1 || (edges[1].path == path && edges[1].step == 1 && edges[1].isLeaf))
        }
        guard isShape, keys.count == 1 || (keys[1].isLeaf && keys[1].step == 1) else { return false }
        let hasNew = keys.count == 2
        if count == 2, hasNew {
            let isKept = state.edges.withUnsafeBufferPointer { $0[1].matches(keys[1]) }
            if isKept { return true }
        }
        // The new leaf first: attached before the old one goes (a property that stays observed
        // never reports 1 → 0 → 1). The registry is borrowed for the call (the key holds it).
        var slot: Int?
        if hasNew {
            slot = Unmanaged.passUnretained(keys[1].registry)._withUnsafeGuaranteedRef {
                $0.attach(self, serial: keys[1].serial, isLeaf: true, hooks: &hooks)
            }
        }
        // The old leaf is moved out of the list (no retain) and detached; its place takes the
        // new leaf, or goes when the new leaf is missing or its object deinitialized since the
        // walk (`replaceInPlace` drops such an edge too).
        var old: Edge?
        if count == 2 {
            if let slot {
                old = state.edges.withUnsafeMutableBufferPointer { edges in
                    let base = edges.baseAddress! + 1
                    let moved = base.move()
                    base.initialize(to: Edge(keys[1], slot: slot))
                    return moved
                }
            } else {
                old = state.edges.removeLast()
            }
        } else if let slot {
            state.edges.append(Edge(keys[1], slot: slot))
        }
        if let old {
            Unmanaged.passUnretained(old.registry)._withUnsafeGuaranteedRef {
                $0.detach(serial: old.serial, slot: old.slot, hooks: &hooks)
            }
        }
        return true
    }

    /// The usual move (an object on a path replaced, set to nil, or set where there was nil):
    /// the replaced edges are one run, each new edge takes the place of the old edge at its
    /// position, and edges the path gained or lost are inserted or removed at the run's end,
    /// without building new lists. Returns false, changing nothing, when the path changed shape
    /// otherwise (a new edge matching an old one at another position).
    fileprivate func replaceInPlace(
        in state: inout SubscriptionExtras.State, where isReplaced: (Edge) -> Bool,
        with keys: UnsafeBufferPointer<ObservedPath.EdgeKey>, hooks: inout ObservationStateHooks
    ) -> Bool {
        guard keys.count <= 16, let low = state.edges.firstIndex(where: isReplaced) else { return false }
        var high = low + 1
        while high < state.edges.count, isReplaced(state.edges[high]) { high += 1 }
        let oldCount = high - low
        guard oldCount <= 16, !state.edges[high...].contains(where: isReplaced) else { return false }
        let common = min(oldCount, keys.count)
        // Positions below `common` whose edge changes; every key from `common` on is new, and
        // every old edge from `common` on goes.
        var moved: UInt16 = 0
        for index in 0..<common where !state.edges[low + index].matches(keys[index]) { moved |= 1 << index }
        if moved == 0, oldCount == keys.count { return true }
        let changes = UInt32(moved) | ~((UInt32(1) << common) - 1)
        // A new edge that matches another position's old edge, which goes: the shape changed.
        for index in keys.indices where changes & (1 << index) != 0 {
            for other in 0..<oldCount where other != index && changes & (1 << other) != 0 {
                if state.edges[low + other].matches(keys[index]) { return false }
            }
        }
        // Attach every new edge before detaching any old one.
        var failed: UInt16 = 0
        withUnsafeTemporaryAllocation(of: Edge.self, capacity: oldCount) { old in
            var released = 0
            if moved != 0 {
                // Each moved edge is moved out of the list (no retain) and its replacement made in
                // its place; the registries are borrowed for the attach (the keys hold them).
                state.edges.withUnsafeMutableBufferPointer { edges in
                    let base = edges.baseAddress! + low
                    for index in 0..<common where moved & (1 << index) != 0 {
                        old.initializeElement(at: released, to: (base + index).move())
                        released += 1
                        let slot = Unmanaged.passUnretained(keys[index].registry)._withUnsafeGuaranteedRef {
                            $0.attach(self, serial: keys[index].serial, isLeaf: keys[index].isLeaf, hooks: &hooks)
                        }
                        if let slot {
                            (base + index).initialize(to: Edge(keys[index], slot: slot))
                        } else {
                            // The object deinitialized since the walk: the old edge stays in
                            // place to be filtered out below (and is detached with the others).
                            (base + index).initialize(to: old[released - 1])
                            failed |= 1 << index
                        }
                    }
                }
            }
            var end = high
            for index in common..<keys.count {
                if let slot = keys[index].registry.attach(
                    self, serial: keys[index].serial, isLeaf: keys[index].isLeaf, hooks: &hooks)
                {
                    state.edges.insert(Edge(keys[index], slot: slot), at: end)
                    end += 1
                }
            }
            if common < oldCount {
                for index in common..<oldCount {
                    old.initializeElement(at: released, to: state.edges[low + index])
                    released += 1
                }
                state.edges.removeSubrange((low + common)..<high)
            }
            for index in 0..<released {
                let edge = old.moveElement(from: index)
                Unmanaged.passUnretained(edge.registry)._withUnsafeGuaranteedRef {
                    $0.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks)
                }
            }
        }
        if failed != 0 {
            state.edges = state.edges.indices.filter {
                $0 < low || $0 >= low + common || failed & (1 << ($0 - low)) == 0
            }
            .map { state.edges[$0] }
        }
        return true
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
