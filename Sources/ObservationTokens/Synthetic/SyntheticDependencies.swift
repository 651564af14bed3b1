internal import CObservationTokensRuntime
import Synchronization

/// The subscription of one computed property on what its last computation read.
///
/// Immediate: a setter of a dependency calls it right away (after unlocking), and it only
/// marks the value invalid, which costs O(1) and runs no user code (the tokens on the computed
/// property become pending, and compare values when they are delivered). An object the
/// computation read that deinitializes invalidates the value too. It never queues anything:
/// nothing is computed until someone reads the value.
/// `SyntheticDependencies`'s edges, and whether its state's deinit has begun.
struct DependencyEdges {
    var list: [DependencyEdge] = []
    var stateIsGone = false
}

/// One edge of a computed property's dependencies: the read object's registry (retained),
/// the storage's serial, and the edge's slot there.
typealias DependencyEdge = (registry: Registry, serial: UInt64, slot: Int)

final class SyntheticDependencies: Subscription, AccessAttaching, @unchecked Sendable {  // see Subscription
    /// What it reads and invalidates. Unowned, as the state owns this subscription; used only
    /// through `retainedState()`. Not `weak`: a weak reference gives the state a side table,
    /// after which every retain and release of it takes the runtime's slow path.
    private unowned(unsafe) let state: any SyntheticStateProtocol
    /// `state` as its class that is not generic, unretained: an invalidation of the owner's own
    /// change calls it without a retain and a release (see `dependencyChanged`).
    private let unretainedState: Unmanaged<ComputedStateBase>
    private let edges = Locked<DependencyEdges>(state: DependencyEdges())
    /// Counts changes of `edges` (made under its lock): the edges a computation confirms its
    /// reads against (`AccessCapture.Recording.expected`, from `rewire`) are current while it
    /// stays the same.
    private let edgeChanges = Atomic<UInt64>(0)

    /// `edgeChanges` now.
    var currentEdgeChanges: UInt64 { edgeChanges.load(ordering: .acquiring) }

    init<Model, Value>(owner: Model, state: ComputedState<Model, Value>) {
        self.state = state
        unretainedState = Unmanaged.passUnretained(state)
        super.init(
            rootRegistry: owner.registry, hasObserver: false, target: .paths([]), options: .immediate,
            queue: .main, wantsOldValue: false,
            site: CreationSite(fileID: #fileID, line: #line).with(kind: .computed),
            comparesComputedValues: false)
    }

    /// The computed property, `Type.name` (from the class's table: reads no value).
    override var writtenDescription: String? {
        guard let state = retainedState(), let owner = rootRegistry.weakOwner else { return nil }
        return SyntheticFields.name(of: state, in: owner)
    }

    /// A dependency changed (immediate mode, inside its setter after unlocking).
    override func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        retainedState()?.invalidate(owner: root, inDeinit: false)
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        retainedState()?.invalidate(owner: root, inDeinit: false)
    }

    /// The state, retained, unless its deinit has begun (`stateWillDeinit`). Its memory is
    /// valid under the lock until its deinit marks it gone there, and `swift_tryRetain` fails
    /// once that deinit has begun.
    private func retainedState() -> (any SyntheticStateProtocol)? {
        guard tryRetainState() else { return nil }
        let retained = state
        Unmanaged.passUnretained(state as AnyObject).release()  // the try-retain's
        return retained
    }

    /// Retains the state unless its deinit has begun (see `retainedState`); the caller gives
    /// the reference back.
    private func tryRetainState() -> Bool {
        edges.withLock { edges -> Bool in
            !edges.stateIsGone && ot_tryRetain(Unmanaged.passUnretained(state as AnyObject).toOpaque())
        }
    }

    /// Called first by the state's deinit: from now on `retainedState()` is nil.
    func stateWillDeinit() {
        edges.withLock { $0.stateIsGone = true }
    }

    /// A dependency changed (called in place of `deliverNow` by the setter's slow path and by
    /// an invalidated computed value of the same object, with no lock held): invalidates the
    /// value. No delivery is counted in: there is no callback to keep, and the state is held
    /// weakly.
    func dependencyChanged(changedObject: ObservableModelBase) {
        guard isActive else { return }
        if isRoot(changedObject) {
            // The changed object is the state's owner, which the caller holds (its setter, or
            // the invalidation of another of its computed values, is running): a computed state
            // lives as long as its owner's storage, destroyed only after every deinit body has
            // run, so the state is alive here without a try-retain (and its lock). The registry
            // holds the states `unowned(unsafe)` on the same ground (`ComputedLink`). Called
            // through the unretained class reference: a call through the unowned existential
            // retained and released it.
            unretainedState._withUnsafeGuaranteedRef { $0.invalidate(owner: changedObject, inDeinit: false) }
            return
        }
        // Another object's change: this state's owner may be going away on another thread, so
        // the try-retain keeps the state alive, and is given back after.
        guard tryRetainState() else { return }
        defer { Unmanaged.passUnretained(state as AnyObject).release() }
        if let owner = rootRegistry.weakOwner { state.invalidate(owner: owner, inDeinit: false) }
    }

    /// An object the computation read deinitialized (inside its deinit, maybe inside the
    /// property write that released it: nothing is read or run here but bookkeeping): the value
    /// may be stale, so it is invalid now. The computed property's own object going away ends
    /// this subscription.
    override func objectDidDeinit(_ id: ObjectIdentifier) {
        guard id != rootID else {
            end()
            return
        }
        guard let state = retainedState(), let owner = rootRegistry.weakOwner else { return }
        state.invalidate(owner: owner, inDeinit: true)
    }

    /// Attaches the edge of a storage the computation is about to read, if it has none yet:
    /// called by the getter (through the recording) before it reads, so a set that lands right
    /// after the read, before the computation returns, invalidates the value it is computing.
    func attachNow(_ access: AccessCapture.TrackedAccess) {
        var hooks = ObservationStateHooks()
        edges.withLock { state in
            guard !state.list.contains(where: { $0.serial == access.serial && $0.registry === access.registry }),
                let slot = access.registry.attach(self, serial: access.serial, isLeaf: true, hooks: &hooks)
            else { return }
            state.list.append((access.registry, access.serial, slot))
            edgeChanges.add(1, ordering: .releasing)
        }
        hooks.run()
    }

    /// Makes the edges match the storages in `accesses`: attaches new ones before detaching
    /// old ones. The steady state (the same storages as last time, in the same order) changes
    /// nothing and allocates nothing. Returns `edgeChanges` as of the edges it leaves, and
    /// those edges (a copy of the list, which retains their registries: what the next
    /// computation confirms its reads against, `AccessCapture.Recording.expected`).
    @discardableResult
    func rewire(to accesses: [AccessCapture.TrackedAccess]) -> (changes: UInt64, edges: [DependencyEdge]) {
        var hooks = ObservationStateHooks()
        var released: [DependencyEdge] = []
        let result = edges.withLock { state -> (changes: UInt64, edges: [DependencyEdge]) in
            if AccessCapture.edges(
                state.list, match: accesses,
                storage: {
                    AccessCapture.KnownEdge(registry: ObjectIdentifier($0.registry), serial: $0.serial)
                })
            {
                return (edgeChanges.load(ordering: .relaxed), state.list)
            }
            var edges = state.list
            state.list = []  // unique while rebuilt
            defer {
                state.list = edges
                edgeChanges.add(1, ordering: .releasing)
            }
            var next: [DependencyEdge] = []
            for access in accesses {
                if next.contains(where: { $0.serial == access.serial && $0.registry === access.registry }) { continue }
                if let index = edges.firstIndex(where: { $0.serial == access.serial && $0.registry === access.registry }
                ) {
                    next.append(edges.remove(at: index))
                } else if let slot = access.registry.attach(self, serial: access.serial, isLeaf: true, hooks: &hooks) {
                    next.append((access.registry, access.serial, slot))
                }
            }
            for edge in edges {
                edge.registry.detach(serial: edge.serial, slot: edge.slot, hooks: &hooks)
            }
            released = edges
            edges = next
            return (edgeChanges.load(ordering: .relaxed) &+ 1, next)
        }
        hooks.run()
        withExtendedLifetime(released) {}
        return result
    }

    /// Detaches every edge and ends the subscription.
    func endAll() {
        end()
        rewire(to: [])
    }
}
