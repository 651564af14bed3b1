// The binding clock of the reference model: the rules of docs/Bindings.md, "Cycles and changes
// that meet", for the bindings that write a model (one-way bindings to `z` and `w`, from a
// path, `combineLatest`). Postings and other tokens don't take part.
//
// - Every change gets a number from one clock when it is made (a set that changes a value, by
//   the program or a callback). A binding's push carries the number of its source's change and
//   the property it writes holds that number from then on, whether the value changed or not;
//   whatever the write changes carries that number too.
// - A turn of a binding pushes nothing, and runs no operator, when its destination holds a
//   later change ("the later change wins"); it runs its operators and writes nothing when it
//   pushed this change already ("a change crosses each binding once") or the destination
//   holds this very change with the same value ("two routes, one push"). Else it writes, and
//   its `onApply` runs.
// - A push in a drain that changes the source of another binding of the same queue that is
//   not waiting for its turn pushes that binding right after it, in the same drain.
// - `drain()` counts one per value a binding writes, nothing for a turn the rules hold.
//
// Where today's library departs from docs/Bindings.md, `ModelBasedConfig` names the case; with
// its switch off the model expects what the library does today there (exactly), and the lead
// turns it on once the library follows the docs.

/// What a binding that writes a model reads, as the binding clock sees it.
enum ClockSource: Equatable {
    /// `@Observed` properties: one, or one per input of a `combineLatest` binding.
    case stored([Dependency])
    /// A `@Computed` property.
    case computed(Dependency)
    /// `hub.node.x`, a key path chain.
    case path(hub: Int)
}

/// The pushes of one turn of a binding in a drain, and the pushes they cause in the same drain.
struct WaveState {
    /// The queue whose drain runs the wave.
    let queue: Int
    /// The binding whose push runs now; nil between pushes.
    var pusher: Int?
    /// Bindings whose source a push of this wave changed: decided when that push returns.
    var heard: [Int] = []
    /// Bindings that must push next (their operators run), in any order.
    var expected: [Int] = []
}

/// What the bindings of a run did, for the run's summary.
struct BindingCounters {
    /// Pushes that wrote their destination.
    var written = 0
    /// Turns the rules held before any operator ran (a later change at the destination).
    var heldBeforeOperators = 0
    /// Pushes whose operators ran and that wrote nothing (the change crossed the binding
    /// already, or the destination holds it with the same value).
    var heldAfterOperators = 0
    /// Pushes made right after another push of the same drain changed their source.
    var sameDrainPushes = 0

    mutating func add(_ other: BindingCounters) {
        written += other.written
        heldBeforeOperators += other.heldBeforeOperators
        heldAfterOperators += other.heldAfterOperators
        sameDrainPushes += other.sameDrainPushes
    }
}

extension TokenSpec {
    /// Whether the token is a binding that writes a model (and follows the binding clock).
    var writesModel: Bool {
        switch self {
        case .bind, .bindToHub, .bindFromHub, .combine: true
        default: false
        }
    }
}

extension BindSource {
    /// The property, as a dependency of node `n`.
    func dependency(of n: Int) -> Dependency {
        switch self {
        case .x: .stored(.node(n), .x)
        case .y: .stored(.node(n), .y)
        case .z: .stored(.node(n), .z)
        case .s: .computed(.node(n), .s)
        case .t: .computed(.node(n), .t)
        case .u: .computed(.node(n), .u)
        case .nt: .computed(.node(n), .nt)
        }
    }
}

extension ReferenceModel {
    // MARK: What a binding reads and writes

    /// The clock's view of `spec`'s source, and the property it writes; nil for tokens that
    /// don't follow the binding clock.
    static func clockShape(of spec: TokenSpec) -> (source: ClockSource, destination: Dependency)? {
        func source(_ n: Int, _ field: BindSource) -> ClockSource {
            let dependency = field.dependency(of: n)
            if case .computed = dependency { return .computed(dependency) }
            return .stored([dependency])
        }
        switch spec {
        case .bind(let n, let field, let d, _): return (source(n, field), .stored(.node(d), .z))
        case .bindToHub(let n, let field, let h, _): return (source(n, field), .stored(.hub(h), .w))
        case .bindFromHub(let h, let d): return (.path(hub: h), .stored(.node(d), .z))
        case .combine(let first, let second, let d):
            return (.stored([.stored(.node(first), .x), .stored(.node(second), .y)]), .stored(.node(d), .z))
        default: return nil
        }
    }

    /// The stored values a computed value reads now.
    func inputs(of dependency: Dependency) -> Set<Dependency> {
        guard case .computed(let object, let key) = dependency else { return [dependency] }
        func xyz(_ n: Int) -> Set<Dependency> {
            [.stored(.node(n), .x), .stored(.node(n), .y), .stored(.node(n), .z)]
        }
        switch (object, key) {
        case (.node(let n), .s), (.node(let n), .hf): return [.stored(.node(n), .x), .stored(.node(n), .y)]
        case (.node(let n), .t), (.node(let n), .u), (.node(let n), .ev): return xyz(n)
        case (.node(let n), .nt):
            let own: Set<Dependency> = [.stored(.node(n), .next), .stored(.node(n), .x)]
            return own.union(node(n).next.map(xyz) ?? [])
        case (.node(let n), .cc):
            return [
                .stored(.node(n), .itemsCount), .stored(.node(n), .itemsContents), .stored(.node(n), .dictKey(1)),
                .stored(.node(n), .member(2)),
            ]
        case (.hub(let h), .hw):
            let own: Set<Dependency> = [.stored(.hub(h), .w), .stored(.hub(h), .node)]
            return own.union(hub(h).node.map(xyz) ?? [])
        default: return []
        }
    }

    /// The change a destination holds, as the rules' gate sees it (see
    /// ``ModelBasedConfig/destinationsKnowSetsMadeBeforeTheirBindings``).
    func heldOrigin(_ destination: Dependency) -> Int {
        ModelBasedConfig.destinationsKnowSetsMadeBeforeTheirBindings
            ? origin[destination] ?? 0 : timedOrigin[destination] ?? 0
    }

    /// `invalidate(\.p)` of a computed property: the bindings whose source is it, or a computed
    /// value that reads it, wait for their turn (it recomputes, finds the value unchanged, and
    /// pushes nothing).
    mutating func bindingsHearInvalidation(of invalidated: Dependency) {
        var affected: Set<Dependency> = [invalidated]
        var frontier = [invalidated]
        while let dependency = frontier.popLast() {
            for reader in computedReaders(of: dependency) where affected.insert(reader).inserted {
                frontier.append(reader)
            }
        }
        for k in tokens.keys.sorted() {
            guard var token = tokens[k], !token.ended, !token.immediate, !token.queued,
                case .computed(let dependency) = token.clockSource, affected.contains(dependency)
            else { continue }
            token.queued = true
            tokens[k] = token
        }
    }

    /// The computed values that read `dependency`, a computed value, now.
    private func computedReaders(of dependency: Dependency) -> [Dependency] {
        guard case .computed(.node(let n), let key) = dependency else { return [] }
        switch key {
        case .s: return [.computed(.node(n), .t), .computed(.node(n), .hf)]
        case .t:
            let readers = nodes.filter { $0.value.next == n }.map { Dependency.computed(.node($0.key), .nt) }
            return [.computed(.node(n), .u), .computed(.node(n), .ev)] + readers
        case .u: return hubs.filter { $0.value.node == n }.map { .computed(.hub($0.key), .hw) }
        default: return []
        }
    }

    /// How far down the computed values of the fixtures a value is (`s` reads stored values,
    /// `t` and `hf` read `s`, `u`, `nt` and `ev` read `t`, `hw` reads `u`): deeper ones are invalidated, and
    /// their bindings numbered, first.
    static func invalidationDepth(_ dependency: Dependency) -> Int {
        guard case .computed(_, let key) = dependency else { return 0 }
        switch key {
        case .s, .cc: return 1
        case .t, .hf: return 2
        case .u, .nt, .ev: return 3
        case .hw: return 4
        }
    }

    /// The properties a path binding of hub `h` reads now: `h.node`, and `x` of that node.
    func pathSteps(_ h: Int) -> Set<Dependency> {
        var steps: Set<Dependency> = [.stored(.hub(h), .node)]
        if let n = hub(h).node { steps.insert(.stored(.node(n), .x)) }
        return steps
    }

    /// The value a stored property holds.
    func storedValue(_ dependency: Dependency) -> Int? {
        switch dependency {
        case .stored(.node(let n), .z): node(n).z
        case .stored(.hub(let h), .w): hub(h).w
        default: nil
        }
    }

    mutating func nextChange() -> Int {
        clock += 1
        return clock
    }

    // MARK: Hearing of changes

    /// A set changed `keys`: numbers the change (the push's, inside one), and tells the bindings
    /// that read them. Returns the bindings a push of the running wave takes along (they don't
    /// wait for a turn of their own).
    mutating func bindingsHear(_ keys: Set<Dependency>) -> Set<Int> {
        let number = pushingOrigin ?? nextChange()
        for key in keys {
            origin[key] = number
            if timesChanges(of: key) { timedOrigin[key] = number }
        }
        var taken: Set<Int> = []
        var computedNumbers: [Dependency: Int] = [:]
        // The library numbers the `.immediate` bindings of computed values a set invalidates in
        // the order it invalidates them: a value's dependants (and theirs) before the value.
        if !ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem, pushingOrigin == nil {
            var affected: Set<Dependency> = []
            for token in tokens.values where !token.ended && token.immediate {
                if case .computed(let dependency) = token.clockSource, !inputs(of: dependency).isDisjoint(with: keys) {
                    affected.insert(dependency)
                }
            }
            let ordered = affected.sorted { a, b in
                Self.invalidationDepth(a) != Self.invalidationDepth(b)
                    ? Self.invalidationDepth(a) > Self.invalidationDepth(b) : "\(a)" < "\(b)"
            }
            for dependency in ordered { computedNumbers[dependency] = nextChange() }
        }
        for k in tokens.keys.sorted() {
            guard var token = tokens[k], !token.ended, let source = token.clockSource else { continue }
            if token.immediate {
                hearImmediately(&token, source, keys, number, &computedNumbers)
                tokens[k] = token
                continue
            }
            switch source {
            case .stored(let sources):
                for (index, key) in sources.enumerated() where keys.contains(key) {
                    if token.firstChange[index] == nil { token.firstChange[index] = number }
                    if sources.count > 1 {
                        // An input's subscription asks only while it is not queued; it queues
                        // only while the combined binding itself is not.
                        if token.queuedInputs[index] || token.queued { continue }
                        if joinsWave(token) {
                            taken.insert(k)
                        } else {
                            token.queuedInputs[index] = true
                        }
                    } else {
                        if token.queued { continue }
                        if joinsWave(token) {
                            taken.insert(k)
                        } else {
                            token.queued = true
                        }
                    }
                }
            case .computed(let dependency):
                guard !inputs(of: dependency).isDisjoint(with: keys) else { break }
                if token.firstChange[0] == nil { token.firstChange[0] = number }
                if token.queued { break }
                if ModelBasedConfig.pushesReachComputedSourcesInTheSameDrain, joinsWave(token) {
                    taken.insert(k)
                } else {
                    token.queued = true
                }
            case .path(let h):
                guard !pathSteps(h).isDisjoint(with: keys) else { break }
                if token.firstChange[0] == nil { token.firstChange[0] = number }
                if !token.queued {
                    token.pathOrigin = number
                    token.queued = true
                }
            }
            tokens[k] = token
        }
        if !taken.isEmpty {
            for k in taken.sorted() where !wave!.heard.contains(k) { wave!.heard.append(k) }
        }
        return taken
    }

    /// Whether a push running now in a drain takes `token` along (same queue, not queued).
    private func joinsWave(_ token: RefToken) -> Bool {
        guard pushingOrigin != nil, let wave else { return false }
        return wave.queue == token.queue
    }

    /// Today's library: whether a change of `key` renumbers the record the bindings that read
    /// it share: when a binding writes it, when an `.immediate` binding reads it, or when a
    /// binding that reads it is not waiting for its turn (see
    /// ``ModelBasedConfig/eachBindingCountsItsSourceFromItsFirstSet``).
    private func timesChanges(of key: Dependency) -> Bool {
        tokens.values.contains { token in
            guard !token.ended, let source = token.clockSource else { return false }
            if token.destinationKey == key { return true }
            guard case .stored(let sources) = source, let index = sources.firstIndex(of: key) else { return false }
            if token.immediate { return true }
            return sources.count > 1 ? !token.queuedInputs[index] : !token.queued
        }
    }

    /// Rule 7 for an `.immediate` binding: it pushes inside the set, carrying the set's change,
    /// unless its destination holds a later one (the push runs no operator then).
    ///
    /// Today (see ``ModelBasedConfig/computedSourcesCountFromTheSetThatChangedThem``) a computed
    /// source's record numbers the set again, after every other binding has numbered it: the
    /// `.immediate` bindings of one computed value share that number (`computedNumbers`).
    private mutating func hearImmediately(
        _ token: inout RefToken, _ source: ClockSource, _ keys: Set<Dependency>, _ setNumber: Int,
        _ computedNumbers: inout [Dependency: Int]
    ) {
        var number = setNumber
        switch source {
        case .stored(let sources):
            guard sources.contains(where: keys.contains) else { return }
        case .computed(let dependency):
            guard !inputs(of: dependency).isDisjoint(with: keys), let seen = token.seen[dependency],
                value(of: dependency) != seen
            else { return }
            let now = value(of: dependency)
            // Owed a push already, from a set this change is nested in (a push that set made):
            // the library compares once, when the innermost set's `.immediate` work ends, with
            // what the binding saw at its last run — one push, or none if the value came back.
            var base = seen
            if let before = token.seenBeforeComputedOwe, !token.owedChanges.isEmpty {
                token.owedChanges.removeLast()
                token.owed = max(0, token.owed - 1)
                token.seenBeforeComputedOwe = nil
                base = before
            }
            // It compares now: what it saw is this value, pushed or not.
            token.seen[dependency] = now
            if now == base { return }
            if !ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem, pushingOrigin == nil {
                number = computedNumbers[dependency] ?? nextChange()
                computedNumbers[dependency] = number
            }
            if let destination = token.destinationKey, number < heldOrigin(destination) {
                counters.heldBeforeOperators += 1
                return
            }
            token.seenBeforeComputedOwe = base
            token.owedChanges.append(number)
            token.owed += 1
            return
        case .path:
            return
        }
        if let destination = token.destinationKey, number < heldOrigin(destination) {
            counters.heldBeforeOperators += 1
            return
        }
        token.owedChanges.append(number)
        token.owed += 1
    }

    // MARK: The change a push carries

    /// The change a binding's turn in a drain carries.
    mutating func turnCarries(_ token: RefToken) -> Int {
        switch token.clockSource {
        case .computed:
            if ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem, let first = token.firstChange[0] {
                return first
            }
            // Today: numbered when it is delivered.
            return nextChange()
        case .stored(let sources):
            if ModelBasedConfig.eachBindingCountsItsSourceFromItsFirstSet {
                return token.firstChange.compactMap { $0 }.max() ?? nextChange()
            }
            return sources.map { timedOrigin[$0] ?? 0 }.max() ?? 0
        case .path:
            if ModelBasedConfig.eachBindingCountsItsSourceFromItsFirstSet {
                return token.firstChange[0] ?? nextChange()
            }
            return token.pathOrigin
        case nil:
            return 0
        }
    }

    /// Forgets what the binding heard since its last turn.
    func turnTaken(_ token: inout RefToken) {
        token.firstChange = token.firstChange.map { _ in nil }
        token.queued = false
        token.queuedInputs = token.queuedInputs.map { _ in false }
    }

    // MARK: Pushes

    /// The push of `token` carrying `carried`, whose operators ran and produced `value`: the
    /// rules decide whether it writes. Returns whether it wrote (then its `onApply` must run).
    mutating func gate(_ k: Int, carried: Int, value: Int, at index: Int) -> (written: Bool, failure: ModelFailure?) {
        guard var token = tokens[k], let destination = token.destinationKey else { return (false, nil) }
        let object: RefObject =
            switch destination {
            case .stored(let object, _), .computed(let object, _): object
            }
        guard !dead.contains(object) else {
            return (
                false,
                ModelFailure(
                    kind: .afterEnd, opIndex: index, message: "k\(k) pushed into \(object) after it deinitialized")
            )
        }
        let held = heldOrigin(destination)
        if carried < held {
            return (
                false,
                fail(
                    .bindingClock, index,
                    "k\(k) (\(token.spec.source(options: ""))) ran its operators for change #\(carried), though \(name(destination)) holds the later change #\(held): the turn should hold before any operator runs",
                    token)
            )
        }
        if token.lastPushed >= carried || (held == carried && storedValue(destination) == value) {
            counters.heldAfterOperators += 1
            return (false, nil)
        }
        origin[destination] = carried
        timedOrigin[destination] = carried
        token.lastPushed = carried
        tokens[k] = token
        counters.written += 1
        awaitingApplied[k, default: 0] += 1
        let saved = pushingOrigin
        pushingOrigin = carried
        defer { pushingOrigin = saved }
        switch object {
        case .node(let n): apply(.set(node: n, .z, value))
        case .hub(let h): apply(.setW(hub: h, value))
        }
        return (true, nil)
    }

    /// `.initial` at creation: a new change of the destination, written whatever the rules
    /// say; the binding's sources keep the changes they hold.
    mutating func pushAtCreation(_ k: Int, value: Int, at index: Int) -> ModelFailure? {
        guard tokens[k] != nil else { return nil }
        return gate(k, carried: nextChange(), value: value, at: index).failure
    }

    /// An `.immediate` binding's push, inside the set it heard (its operators ran).
    mutating func pushImmediately(_ k: Int, value: Int, at index: Int) -> ModelFailure? {
        guard var token = tokens[k], !token.owedChanges.isEmpty else {
            return fail(
                .deliveryWithoutChange, index,
                "k\(k) (\(tokens[k]?.spec.source(options: ".immediate") ?? "?")) pushed inside a set though no change it reads is owed a push",
                tokens[k])
        }
        let carried = token.owedChanges.removeFirst()
        tokens[k] = token
        return gate(k, carried: carried, value: value, at: index).failure
    }

    /// A binding's turn in a drain whose operators ran (it logged `value`): starts the wave of
    /// pushes it causes in this drain. Returns whether it wrote (to count it).
    mutating func pushInTurn(_ k: Int, value: Int, at index: Int) -> (written: Bool, failure: ModelFailure?) {
        guard var token = tokens[k] else { return (false, nil) }
        let carried = turnCarries(token)
        turnTaken(&token)
        tokens[k] = token
        wave = WaveState(queue: token.queue, pusher: k)
        let outcome = gate(k, carried: carried, value: value, at: index)
        if !outcome.written { finishPush(k) }
        return outcome
    }

    /// A push the wave makes because another push changed this binding's source.
    mutating func pushInWave(_ k: Int, value: Int, at index: Int) -> (written: Bool, failure: ModelFailure?) {
        guard var token = tokens[k] else { return (false, nil) }
        wave!.expected.removeAll { $0 == k }
        wave!.pusher = k
        let carried = waveCarries(token)
        turnTaken(&token)
        record(evaluate(token.spec), in: &token)
        tokens[k] = token
        counters.sameDrainPushes += 1
        let outcome = gate(k, carried: carried, value: value, at: index)
        if !outcome.written { finishPush(k) }
        return outcome
    }

    /// The change a push the wave makes carries.
    private mutating func waveCarries(_ token: RefToken) -> Int {
        if case .stored(let sources) = token.clockSource, !ModelBasedConfig.eachBindingCountsItsSourceFromItsFirstSet {
            return sources.map { timedOrigin[$0] ?? 0 }.max() ?? 0
        }
        return turnCarries(token)
    }

    /// The push of `k` (the wave's pusher) returned: the bindings whose source it changed push
    /// next, each unless its destination holds a later change (then it pushes nothing).
    mutating func finishPush(_ k: Int) {
        guard var running = wave, running.pusher == k else { return }
        running.pusher = nil
        for label in running.heard {
            guard var token = tokens[label], !token.ended else { continue }
            if case .computed(let dependency) = token.clockSource, value(of: dependency) == token.seen[dependency] {
                turnTaken(&token)
                tokens[label] = token
                continue
            }
            let carried = waveCarries(token)
            if let destination = token.destinationKey, carried < heldOrigin(destination) {
                counters.heldBeforeOperators += 1
                counters.sameDrainPushes += 1
                turnTaken(&token)
                tokens[label] = token
                continue
            }
            running.expected.append(label)
        }
        running.heard = []
        wave = running.expected.isEmpty ? nil : running
    }

    // MARK: Turns that push nothing

    /// Which bindings the library had waiting in their queue, as an event was logged (or the
    /// drain ended): a binding of the draining queue that waited and waits no more, and did not
    /// log this event, had its turn and pushed nothing. Checks that the rules hold that turn.
    mutating func quietTurns(_ queued: ModelQueuedBindings, except running: Int?, at index: Int) -> ModelFailure? {
        for k in tokens.keys.sorted() where k != running {
            guard let token = tokens[k], !token.ended, token.clockSource != nil, !token.immediate,
                token.queue == drainingQueue, token.queued || token.queuedInputs.contains(true), queued[k] == nil
            else { continue }
            if let failure = quietTurn(k, at: index) { return failure }
        }
        return nil
    }

    private mutating func quietTurn(_ k: Int, at index: Int) -> ModelFailure? {
        var token = tokens[k]!
        let due = isDue(token)
        let source = token.spec.source(options: "")
        if !due || mayBeSkipped(token) {
            // Nothing it reads changed for it (a computed value that came back): no turn taken.
            turnTaken(&token)
            record(evaluate(token.spec), in: &token)
            tokens[k] = token
            return nil
        }
        let carried = turnCarries(token)
        let destination = token.destinationKey!
        let held = heldOrigin(destination)
        guard carried < held else {
            return fail(
                .missedDelivery, index,
                "k\(k) (\(source)) had its turn in drain #\(drainIndex) and pushed nothing, though \(dueReason(token)) and its change #\(carried) is not older than the change #\(held) \(name(destination)) holds",
                token)
        }
        counters.heldBeforeOperators += 1
        turnTaken(&token)
        record(evaluate(token.spec), in: &token)
        token.lastDrain = drainIndex
        tokens[k] = token
        return nil
    }

    /// Takes the library's word for which bindings wait in their queue.
    mutating func syncQueued(_ queued: ModelQueuedBindings) {
        for (k, token) in tokens where token.clockSource != nil && !token.immediate && !token.ended {
            let bits = queued[k] ?? 0
            tokens[k]!.queued = bits & 1 != 0
            for index in token.queuedInputs.indices { tokens[k]!.queuedInputs[index] = bits & (2 << index) != 0 }
        }
    }

    /// After an operation: the bindings waiting for a drain are those whose source changed
    /// since their last turn (rule 1; for a computed source, an input).
    mutating func checkQueued(_ queued: ModelQueuedBindings, after op: ModelOp, at index: Int) -> ModelFailure? {
        for k in tokens.keys.sorted() {
            guard let token = tokens[k], token.clockSource != nil, !token.immediate, !token.ended,
                !mayBeSkipped(token)
            else { continue }
            let bits = queued[k] ?? 0
            var expected: UInt8 = token.queued ? 1 : 0
            for (index, input) in token.queuedInputs.enumerated() where input { expected |= 2 << index }
            guard bits == expected else {
                let what = { (bits: UInt8) in bits == 0 ? "nothing" : String(bits, radix: 2) }
                return fail(
                    .queueState, index,
                    "after `\(op.lines().joined(separator: " "))`, k\(k) (\(token.spec.source(options: ""))) waits for \(what(bits)) in its queue; the model expects \(what(expected)) (bit 0: its own subscription, bit 1 + i: input i's)",
                    token)
            }
        }
        syncQueued(queued)
        return nil
    }
}
