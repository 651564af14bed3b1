import ObservationTokens

// The model classes the random programs run on, and the log their callbacks and deinits write
// to. The reference evaluator (`ReferenceModel.swift`) mirrors every declaration here in plain
// Swift: keep the two in step.

/// The queue every model-based program delivers through, and the one the computed properties
/// below recompute on: only the model-based suite (serialized) drains it.
let modelQueue = CoalescingQueue(target: .manual)

/// A second queue for tokens (feature group `queues`). Computed properties recompute on
/// ``modelQueue`` only (the queue is fixed per declaration).
let modelOtherQueue = CoalescingQueue(target: .manual)

/// The queues of a program, by index.
let modelQueues = [modelQueue, modelOtherQueue]

/// Something the library did that a program can see: a callback ran (with the values it read),
/// or a model object deinitialized.
enum ModelEvent: Equatable, Sendable {
    /// Token `token`'s callback ran and read `values` (`ModelEvent.absent` stands for nil).
    case callback(token: Int, values: [Int])
    /// A binding's `onApply` ran for token `token` (after its push, which logged `.callback`).
    case applied(token: Int)
    /// Node `label` deinitialized.
    case nodeDeinit(Int)
    /// Hub `label` deinitialized.
    case hubDeinit(Int)

    /// Stands for `nil` in logged values.
    static let absent = -999
}

/// Which bindings that write a model wait in their queue, by token label: bit 0 the binding's
/// own subscription (a `combineLatest` hub), bit 1 + i the subscription of input i of a
/// `combineLatest` binding. Bindings not listed wait for nothing.
typealias ModelQueuedBindings = [Int: UInt8]

/// An event, and which bindings waited in their queue when it was logged: a binding that had
/// its turn and pushed nothing (the binding rules held it) logs no event, and this is how the
/// reference model learns where in the drain that turn was.
struct ModelLoggedEvent: Sendable {
    let event: ModelEvent
    let queued: ModelQueuedBindings
}

/// The log of one program: callbacks and deinits append, the runner takes what happened after
/// each operation. Locked: callbacks and deinits may run on other threads (the threaded mode).
final class ModelEventLog: Sendable {
    private let events = RelLock<[ModelLoggedEvent]>([])
    private let probe = RelLock<(@Sendable () -> ModelQueuedBindings)?>(nil)

    /// Sets what each event records of the bindings' queues (the runner's probe).
    func setProbe(_ probe: @escaping @Sendable () -> ModelQueuedBindings) {
        self.probe.withLock { $0 = probe }
    }

    func append(_ event: ModelEvent) {
        let queued = probe.withLock { $0 }?() ?? [:]
        events.withLock { $0.append(ModelLoggedEvent(event: event, queued: queued)) }
    }

    func callback(_ token: Int, _ values: [Int?]) {
        append(.callback(token: token, values: values.map { $0 ?? ModelEvent.absent }))
    }

    /// Returns and clears what was logged so far.
    func take() -> [ModelLoggedEvent] {
        events.withLock { events in
            defer { events = [] }
            return events
        }
    }
}

/// A node: three stored `Int`s, a strong reference to another node, three observed
/// collections, and a ladder of computed properties (`s` → `t` → `u`, `nt` reading another
/// node's `t` through `next`, `cc` reading the collections).
///
/// `@unchecked Sendable`: callbacks receive nodes; the threaded mode sets each property on one
/// thread only (the rule the library asks of its users) and reads after joining.
final class MNode: ObservableModel, @unchecked Sendable {
    let label: Int
    let log: ModelEventLog

    @Observed var x = 0
    @Observed var y = 0
    @Observed var z = 0
    @Observed var next: MNode? = nil
    @Observed var items: ObservedArray<Int> = []
    @Observed var dict: ObservedDictionary<Int, Int> = [:]
    @Observed var tags: ObservedSet<Int> = []

    @Computed({ (node: MNode) in node.x + node.y }) var s: Int
    @Computed({ (node: MNode) in node.s + node.z }) var t: Int
    @Computed({ (node: MNode) in ((node.t % 3) + 3) % 3 }) var u: Int
    @Computed({ (node: MNode) in (node.next?.t ?? 0) - node.x }) var nt: Int
    /// A `Bool` computed value: changes less often than the `t` it reads.
    @Computed({ (node: MNode) in node.t % 2 == 0 }) var ev: Bool
    /// A `Double` computed value: half of `s`, compared by `==`.
    @Computed({ (node: MNode) in Double(node.s) / 2 }) var hf: Double
    @Computed(
        { (node: MNode) in
            node.items.count + 10 * (node.dict[1] ?? 0) + (node.tags.contains(2) ? 100 : 0)
        })
    var cc: Int

    init(label: Int, log: ModelEventLog) {
        self.label = label
        self.log = log
        super.init()
    }

    deinit { log.append(.nodeDeinit(label)) }
}

/// A hub: a stored `Int`, a strong reference to a node, and a computed property reading the
/// node's computed `u` through the reference.
///
/// `@unchecked Sendable`: see ``MNode``.
final class MHub: ObservableModel, @unchecked Sendable {
    let label: Int
    let log: ModelEventLog

    @Observed var w = 0
    @Observed var node: MNode? = nil

    @Computed({ (hub: MHub) in hub.w * 10 + (hub.node?.u ?? 5) }) var hw: Int

    init(label: Int, log: ModelEventLog) {
        self.label = label
        self.log = log
        super.init()
    }

    deinit { log.append(.hubDeinit(label)) }
}
