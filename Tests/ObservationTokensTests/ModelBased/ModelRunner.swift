import ObservationTokens

// Runs a program against the library and checks every operation's events with the reference
// model. One runner per run of a program.

/// A weak reference, to tell when an object is gone.
final class ModelWeak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// The objects of one program, for the threads of a parallel phase.
///
/// `@unchecked Sendable`: immutable; the models are `@unchecked Sendable` themselves.
struct ModelHandles: @unchecked Sendable {
    let nodes: [Int: MNode]
    let hubs: [Int: MHub]
}

/// What a run did, to show that the programs exercise what they should.
struct ModelRunStatistics {
    var operations = 0
    var skipped = 0
    var drains = 0
    var callbacks = 0
    var deinits = 0
    /// Chain tokens made and ended on the threads of parallel phases.
    var churnedChainTokens = 0
    var bindings = BindingCounters()

    mutating func add(_ other: ModelRunStatistics) {
        operations += other.operations
        skipped += other.skipped
        drains += other.drains
        callbacks += other.callbacks
        deinits += other.deinits
        churnedChainTokens += other.churnedChainTokens
        bindings.add(other.bindings)
    }
}

/// Lets callbacks reach the runner to perform their actions.
///
/// `@unchecked Sendable`: callbacks run on the thread that drains the queue, which is the
/// runner's (parallel phases run no callbacks).
final class ModelActionPerformer: @unchecked Sendable {
    weak var runner: ModelRunner?
    init(runner: ModelRunner) { self.runner = runner }
    func perform(_ action: CallbackAction) { runner?.perform(action) }
}

/// The observer of the chain tokens made with `observer:`.
final class ModelWatcher {}

final class ModelRunner {
    let program: ModelProgram
    private(set) var statistics = ModelRunStatistics()
    private let log = ModelEventLog()
    private var model: ReferenceModel
    private var nodes: [Int: MNode] = [:]
    private var hubs: [Int: MHub] = [:]
    private var tokens: [Int: ObservationToken] = [:]
    /// The observer of `chainXObserver` tokens, alive as long as the runner.
    private let watcher = ModelWatcher()
    /// Labels of tokens made by callbacks (a label is used once, even after its token is dropped).
    private var madeInCallbacks: Set<Int> = []
    private var everyNode: [Int: ModelWeak<MNode>] = [:]
    private var everyHub: [Int: ModelWeak<MHub>] = [:]
    private var collections: [Int: [ModelWeak<ObservableModelBase>]] = [:]
    /// The bindings that write a model, for the events to record which wait in their queue.
    private let probe = ModelQueueProbe()

    private lazy var performer = ModelActionPerformer(runner: self)

    init(program: ModelProgram) {
        self.program = program
        model = ReferenceModel(features: program.features)
        let probe = probe
        log.setProbe { probe.snapshot() }
    }

    /// Runs the program, then drains until nothing is pending, checking everything.
    func run() -> ModelFailure? {
        defer {
            statistics.bindings = model.counters
            cleanUp()
        }
        for (index, op) in program.ops.enumerated() {
            if let failure = step(op, at: index) { return failure }
        }
        // Settle: acyclic bindings need at most a few more drains (rule 5: a token that already
        // ran in a drain runs in the next one).
        let end = program.ops.count
        for _ in 0..<6 {
            for queue in modelQueues.indices {
                if let failure = step(.drain(queue), at: end) { return failure }
            }
            if nothingPending { break }
        }
        return model.checkReleased(at: end, deadCollections: collectionsAreGone)
    }

    private func step(_ op: ModelOp, at index: Int) -> ModelFailure? {
        statistics.operations += 1
        switch op {
        case .drain(let queue):
            model.beginDrain(queue: queue)
            let returned = modelQueues[queue].drain()
            let events = log.take()
            count(events)
            statistics.drains += 1
            if let failure = model.checkDrainEvents(events, at: index) { return failure }
            if let failure = model.endDrain(returned: returned, queued: probe.snapshot(), at: index) { return failure }
            if nothingPending {
                return model.checkReleased(at: index, deadCollections: collectionsAreGone)
            }
            return nil
        case .parallel(let threads):
            let runnable = model.executableThreads(threads)
            let handles = ModelHandles(nodes: nodes, hubs: hubs)
            let log = log
            let finished = RelThreads.run(count: runnable.count, timeout: 60) { thread in
                for op in runnable[thread] {
                    if case .churnChain(let n, let invalidate) = op {
                        ModelRunner.churnChain(on: handles.nodes[n]!, invalidate: invalidate, log: log)
                    } else {
                        ModelRunner.set(op, handles)
                    }
                }
            }
            guard finished else {
                return ModelFailure(
                    kind: .harness, opIndex: index, message: "a thread of the parallel phase did not finish")
            }
            model.apply(.parallel(runnable))
            for ops in runnable {
                for case .churnChain in ops { statistics.churnedChainTokens += 1 }
            }
            let events = log.take()
            count(events)
            if let failure = model.checkEvents(events, of: op, at: index) { return failure }
            return model.checkQueued(probe.snapshot(), after: op, at: index)
        default:
            guard model.isExecutable(op) else {
                statistics.skipped += 1
                return nil
            }
            model.apply(op)
            execute(op)
            let events = log.take()
            count(events)
            if let failure = model.checkEvents(events, of: op, at: index) { return failure }
            return model.checkQueued(probe.snapshot(), after: op, at: index)
        }
    }

    private func count(_ events: [ModelLoggedEvent]) {
        for event in events {
            switch event.event {
            case .callback: statistics.callbacks += 1
            case .nodeDeinit, .hubDeinit: statistics.deinits += 1
            case .applied: break
            }
        }
    }

    private var nothingPending: Bool { modelQueues.allSatisfy { $0.pendingCount == 0 } }

    private func collectionsAreGone(_ n: Int) -> Bool {
        (collections[n] ?? []).allSatisfy { $0.object == nil }
    }

    // MARK: Operations on the library

    private func execute(_ op: ModelOp) {
        switch op {
        case .newNode(let n):
            let node = MNode(label: n, log: log)
            nodes[n] = node
            everyNode[n] = ModelWeak(node)
            collections[n] = [
                ModelWeak<ObservableModelBase>(node.items), ModelWeak<ObservableModelBase>(node.dict),
                ModelWeak<ObservableModelBase>(node.tags),
            ]
        case .newHub(let h):
            let hub = MHub(label: h, log: log)
            hubs[h] = hub
            everyHub[h] = ModelWeak(hub)
        case .releaseNode(let n): nodes[n] = nil
        case .releaseHub(let h): hubs[h] = nil
        case .invalidateComputed(let n, let field):
            let node = nodes[n]!
            switch field {
            case .s: node.invalidate(\.s)
            case .t: node.invalidate(\.t)
            case .u: node.invalidate(\.u)
            case .nt: node.invalidate(\.nt)
            case .cc: node.invalidate(\.cc)
            case .ev: node.invalidate(\.ev)
            case .hf: node.invalidate(\.hf)
            }
        case .invalidateHubComputed(let h): hubs[h]!.invalidate(\.hw)
        case .observe(let k, let spec, let options):
            // Made first, then stored: an action of its registration callback may change `tokens`.
            let token = observe(k, spec, options)
            tokens[k] = token
            if spec.writesModel, !options.immediate { probe.watch(k, token) }
        case .invalidateToken(let k): tokens[k]!.invalidate()
        case .dropToken(let k): tokens[k] = nil
        case .drain, .parallel, .churnChain: break
        default: ModelRunner.set(op, ModelHandles(nodes: nodes, hubs: hubs))
        }
    }

    /// The label a churned chain token logs under: no token has it, so a callback of one fails
    /// the run (`callbackOutsideDrain`, or an unknown token in a drain).
    static let churnedLabel = -7

    /// `churnChain`: a chain token made on this thread and ended here, never delivered.
    static func churnChain(on node: MNode, invalidate: Bool, log: ModelEventLog) {
        let token = node.observe(.chain(KeyPathChain(\MNode.next).then(\.x)), queue: modelQueue) {
            log.callback(churnedLabel, [$1])
        }
        if invalidate { token.invalidate() }
    }

    /// The operations that set something, and `churnChain`: the only ones a parallel phase runs.
    static func set(_ op: ModelOp, _ handles: ModelHandles) {
        switch op {
        case .set(let n, let field, let value):
            let node = handles.nodes[n]!
            switch field {
            case .x: node.x = value
            case .y: node.y = value
            case .z: node.z = value
            }
        case .setNext(let n, let to): handles.nodes[n]!.next = to.map { handles.nodes[$0]! }
        case .setW(let h, let value): handles.hubs[h]!.w = value
        case .setHubNode(let h, let to): handles.hubs[h]!.node = to.map { handles.nodes[$0]! }
        case .append(let n, let value): handles.nodes[n]!.items.append(value)
        case .removeFirst(let n):
            let items = handles.nodes[n]!.items
            if !items.isEmpty { _ = items.removeFirst() }
        case .replace(let n, let index, let value):
            let items = handles.nodes[n]!.items
            let count = items.count
            if count > 0 { items[index % count] = value }
        case .setKey(let n, let key, let value): handles.nodes[n]!.dict[key] = value
        case .removeKey(let n, let key): _ = handles.nodes[n]!.dict.removeValue(forKey: key)
        case .insertMember(let n, let member): _ = handles.nodes[n]!.tags.insert(member)
        case .removeMember(let n, let member): _ = handles.nodes[n]!.tags.remove(member)
        default: preconditionFailure("not a set: \(op)")
        }
    }

    // MARK: Observations

    private func observe(_ k: Int, _ spec: TokenSpec, _ options: TokenOptions) -> ObservationToken {
        let log = log
        let q = modelQueues[options.queue]
        var o: ObservationOptions = []
        if options.initial { o.insert(.initial) }
        if options.immediate { o.insert(.immediate) }
        // Pipelines get the same options: `.initial` is their default, so `[]` turns it off.
        let pipelineOptions = o
        let probes = program.features.contains(.computed)
        // Callbacks also read a computed value of their root: it must be final (rule 3).
        let probe: @Sendable (MNode) -> [Int?] = { node in probes ? [node.t] : [] }
        let hubProbe: @Sendable (MHub) -> [Int?] = { hub in probes ? [hub.hw] : [] }
        switch spec {
        case .property(let n, let field):
            let node = nodes[n]!
            switch field {
            case .x: return node.observe(\.x, options: o, queue: q) { log.callback(k, [$0.x] + probe($0)) }
            case .y: return node.observe(\.y, options: o, queue: q) { log.callback(k, [$0.y] + probe($0)) }
            case .z: return node.observe(\.z, options: o, queue: q) { log.callback(k, [$0.z] + probe($0)) }
            }
        case .whichOf(let n):
            return nodes[n]!.observe(.whichOf([\.x, \.y, \.z]), options: o, queue: q) { node, changed in
                let bits =
                    (changed.contains(\.x) ? 1 : 0) + (changed.contains(\.y) ? 2 : 0) + (changed.contains(\.z) ? 4 : 0)
                log.callback(k, [node.x, node.y, node.z, bits])
            }
        case .propertyList(let n):
            return nodes[n]!.observe([\.x, \.z], options: o, queue: q) { log.callback(k, [$0.x, $0.z] + probe($0)) }
        case .hubW(let h):
            return hubs[h]!.observe(\.w, options: o, queue: q) { log.callback(k, [$0.w] + hubProbe($0)) }
        case .hubNode(let h):
            return hubs[h]!.observe(\.node, options: o, queue: q) { log.callback(k, [$0.node?.label] + hubProbe($0)) }
        case .computed(let n, let field):
            let node = nodes[n]!
            switch field {
            case .s: return node.observe(\.s, options: o, queue: q) { log.callback(k, [$0.s] + probe($0)) }
            case .t: return node.observe(\.t, options: o, queue: q) { log.callback(k, [$0.t] + probe($0)) }
            case .u: return node.observe(\.u, options: o, queue: q) { log.callback(k, [$0.u] + probe($0)) }
            case .nt: return node.observe(\.nt, options: o, queue: q) { log.callback(k, [$0.nt] + probe($0)) }
            case .cc: return node.observe(\.cc, options: o, queue: q) { log.callback(k, [$0.cc] + probe($0)) }
            case .ev: return node.observe(\.ev, options: o, queue: q) { log.callback(k, [$0.ev ? 1 : 0] + probe($0)) }
            case .hf:
                // Logged as `2 * hf`, which is `s`: exact for the small whole numbers of the programs.
                return node.observe(\.hf, options: o, queue: q) { log.callback(k, [Int($0.hf * 2)] + probe($0)) }
            }
        case .mixedList(let n):
            return nodes[n]!.observe([\.y, \.u], options: o, queue: q) { log.callback(k, [$0.y, $0.u] + probe($0)) }
        case .hubComputed(let h):
            return hubs[h]!.observe(\.hw, options: o, queue: q) { log.callback(k, [$0.hw] + hubProbe($0)) }
        case .chainX(let n):
            return nodes[n]!.observe(.chain(KeyPathChain(\MNode.next).then(\.x)), options: o, queue: q) {
                log.callback(k, [$1] + probe($0))
            }
        case .chainXObserver(let n):
            // The callback checks it gets the observer it was given (a wrong one logs -999).
            let watcherID = ObjectIdentifier(watcher)
            return nodes[n]!.observe(
                .chain(KeyPathChain(\MNode.next).then(\.x)), observer: watcher, options: o, queue: q
            ) { watcher, node, x in
                log.callback(k, [ObjectIdentifier(watcher) == watcherID ? x : -999] + probe(node))
            }
        case .chainNextNextY(let n):
            return nodes[n]!.observe(.chain(KeyPathChain(\MNode.next).then(\.next).then(\.y)), options: o, queue: q) {
                log.callback(k, [$1] + probe($0))
            }
        case .stringPath(let n):
            do {
                return try nodes[n]!.observe(.path("next.next.z"), options: o, queue: q) {
                    log.callback(k, [$0.next?.next?.z] + probe($0))
                }
            } catch {
                preconditionFailure("next.next.z is a valid path: \(error)")
            }
        case .trackedX(let n):
            return nodes[n]!.observe(\.next?.x, options: o, queue: q) { log.callback(k, [$0.next?.x] + probe($0)) }
        case .trackedChanges(let n):
            return nodes[n]!.observe(.changes(\.next?.y), options: o, queue: q) { _, change in
                log.callback(k, [change.old, change.new])
            }
        case .closure(let n):
            return nodes[n]!.observe(options: o, queue: q) { node in
                log.callback(k, [node.x > 1 ? node.y : (node.next?.z ?? -1)])
            }
        case .hubChain(let h):
            return hubs[h]!.observe(.chain(KeyPathChain(\MHub.node).then(\.next).then(\.x)), options: o, queue: q) {
                log.callback(k, [$1] + hubProbe($0))
            }
        case .chainT(let n):
            return nodes[n]!.observe(.chain(KeyPathChain(\MNode.next).then(\.t)), options: o, queue: q) {
                log.callback(k, [$1] + probe($0))
            }
        case .trackedS(let n):
            return nodes[n]!.observe(\.next?.s, options: o, queue: q) { log.callback(k, [$0.next?.s] + probe($0)) }
        case .closureComputed(let n):
            return nodes[n]!.observe(options: o, queue: q) { node in
                log.callback(k, [node.u + (node.next?.s ?? 0)])
            }
        case .hubTracked(let h):
            return hubs[h]!.observe(\.node?.t, options: o, queue: q) { log.callback(k, [$0.node?.t] + hubProbe($0)) }
        case .value(let n):
            return nodes[n]!.observe(.value({ $0.x + $0.y >= 3 ? 1 : 0 }), options: o, queue: q) { _, value in
                log.callback(k, [value])
            }
        case .valueComputed(let n):
            return nodes[n]!.observe(.value({ $0.t % 2 }), options: o, queue: q) { _, value in log.callback(k, [value])
            }
        case .count(let n):
            return nodes[n]!.observe(\.items.count, options: o, queue: q) {
                log.callback(k, [$0.items.count] + probe($0))
            }
        case .mutations(let n):
            return nodes[n]!.items.observe(.mutations, options: o, queue: q) { items, _ in
                log.callback(k, [items.count, items.snapshot.reduce(0, +)])
            }
        case .dictKey(let n, let key):
            return nodes[n]!.dict.observe(.key(key), options: o, queue: q) { log.callback(k, [$0[key]]) }
        case .member(let n, let member):
            return nodes[n]!.tags.observe(.member(member), options: o, queue: q) {
                log.callback(k, [$0.contains(member) ? 1 : 0])
            }
        case .computedCollections(let n):
            return nodes[n]!.observe(\.cc, options: o, queue: q) { log.callback(k, [$0.cc] + probe($0)) }
        case .bind(let n, let source, let d, let mapped):
            return pipeline(nodes[n]!, source, mapped: mapped, logging: k)
                .bind(to: nodes[d]!, \.z, options: pipelineOptions, queue: q)
        case .bindToHub(let n, let source, let h, let mapped):
            return pipeline(nodes[n]!, source, mapped: mapped, logging: k)
                .bind(to: hubs[h]!, \.w, options: pipelineOptions, queue: q)
        case .post(let n, let source, let mapped):
            return pipeline(nodes[n]!, source, mapped: mapped).post(options: pipelineOptions, queue: q) {
                log.callback(k, [$0])
            }
        case .combine(let first, let second, let d):
            let combined = ValuePipeline.combineLatest(
                nodes[first]!.pipeline(of: \.x), nodes[second]!.pipeline(of: \.y)
            ) {
                ($0 + 2 * $1) % 5
            }
            return logged(combined, k).bind(to: nodes[d]!, \.z, options: pipelineOptions, queue: q)
        case .actor(let n, let field, let action):
            let performer = performer
            let node = nodes[n]!
            switch field {
            case .x:
                return node.observe(\.x, options: o, queue: q) {
                    log.callback(k, [$0.x])
                    performer.perform(action)
                }
            case .y:
                return node.observe(\.y, options: o, queue: q) {
                    log.callback(k, [$0.y])
                    performer.perform(action)
                }
            case .z:
                return node.observe(\.z, options: o, queue: q) {
                    log.callback(k, [$0.z])
                    performer.perform(action)
                }
            }
        case .bindFromHub(let h, let d):
            return logged(hubs[h]!.pipeline(of: KeyPathChain(\MHub.node).then(\.x)).map { $0 ?? 0 }, k)
                .bind(to: nodes[d]!, \.z, options: pipelineOptions, queue: q)
        }
    }

    /// Performs a callback's action on the program's objects and tokens, if its labels are
    /// there (the reference model decides the same way).
    fileprivate func perform(_ action: CallbackAction) {
        switch action {
        case .set(let n, _, _):
            guard nodes[n] != nil else { return }
            ModelRunner.set(action.op, ModelHandles(nodes: nodes, hubs: hubs))
        case .setNext(let n, let to):
            guard nodes[n] != nil, to.map({ nodes[$0] != nil }) ?? true else { return }
            ModelRunner.set(action.op, ModelHandles(nodes: nodes, hubs: hubs))
        case .invalidate(let k): tokens[k]?.invalidate()
        case .drop(let k): tokens[k] = nil
        case .release(let n): nodes[n] = nil
        case .observe(let k, let n, let field, let initial):
            guard tokens[k] == nil, !madeInCallbacks.contains(k), nodes[n] != nil else { return }
            madeInCallbacks.insert(k)
            let token = observe(k, .property(node: n, field), TokenOptions(initial: initial))
            tokens[k] = token
        }
    }

    /// A binding's pipeline logs its push in a last `map`, before the write (whose setter may
    /// run `.immediate` callbacks), and `onApply` after it.
    private func logged(_ values: ValuePipeline<Int>, _ k: Int) -> ValuePipeline<Int> {
        let log = log
        return values.map { value in
            log.callback(k, [value])
            return value
        }
        .onApply { _ in log.append(.applied(token: k)) }
    }

    private func pipeline(_ node: MNode, _ source: BindSource, mapped: Bool, logging k: Int) -> ValuePipeline<Int> {
        logged(pipeline(node, source, mapped: mapped), k)
    }

    private func pipeline(_ node: MNode, _ source: BindSource, mapped: Bool) -> ValuePipeline<Int> {
        let values: ValuePipeline<Int> =
            switch source {
            case .x: node.pipeline(of: \.x)
            case .y: node.pipeline(of: \.y)
            case .z: node.pipeline(of: \.z)
            case .s: node.pipeline(of: \.s)
            case .t: node.pipeline(of: \.t)
            case .u: node.pipeline(of: \.u)
            case .nt: node.pipeline(of: \.nt)
            }
        return mapped ? values.map(TokenSpec.map) : values
    }

    // MARK: Clean-up

    /// Ends everything the program made, outside the checks: tokens dropped, references
    /// between objects cut (a cycle of `next` would leak), the queue emptied.
    private func cleanUp() {
        tokens.removeAll()
        probe.removeAll()
        for weak in everyNode.values { weak.object?.next = nil }
        for weak in everyHub.values { weak.object?.node = nil }
        nodes.removeAll()
        hubs.removeAll()
        for _ in 0..<8 {
            let delivered = modelQueues.reduce(0) { $0 + $1.drain() }
            if delivered == 0 && nothingPending { break }
        }
        _ = log.take()
    }
}
