// The reference evaluator of the model-based random test: plain Swift, no library code. It
// mirrors a program's state in plain structs and dictionaries, and checks what the library did
// (the callbacks it ran, with the values they read, and the deinits) against the propagation
// rules the library guarantees (issue 24; summarized here, and where each check is made):
//
// 1. A set that changes a stored value makes every token watching it (directly, as a path step,
//    through a tracking read) due, once; a set back does not cancel it.
// 2. A token watching a computed value (or comparing a value) is due iff the value it reads now
//    differs from the value it last saw (at registration or its last delivery).
// 3. A due token runs exactly once per drain, and every value its callback reads is final.
// 4. A token made after a change does not hear of it; with `.initial` it runs once right away.
// 5. A callback (here: a binding's push) that changes what a token watches makes that token run
//    in the same drain if it has not run in it yet, else in the next one.
// 6. `drain()` returns the number of user callbacks that ran in it.
// 7. An `.immediate` token runs inside the setter: on each change of a stored value it
//    watches; for a computed value, only when it differs from what the token last saw.
// 8. After its end (invalidated, dropped, root deinitialized) a token never runs.
//
// Object lifetimes follow docs/Lifecycle.md: an object the program and other objects no longer
// reference deinitializes at once, or, while a delivery is pending, by the time the queue has
// nothing pending; a token rooted at such an object may or may not run in that window.

/// A node's state, as the program set it.
struct RefNode {
    var x = 0
    var y = 0
    var z = 0
    var next: Int?
    var items: [Int] = []
    var dict: [Int: Int] = [:]
    var tags: Set<Int> = []
}

/// A hub's state.
struct RefHub {
    var w = 0
    var node: Int?
}

/// A model object of a program.
enum RefObject: Hashable, CustomStringConvertible {
    case node(Int)
    case hub(Int)

    var description: String {
        switch self {
        case .node(let n): "n\(n)"
        case .hub(let h): "h\(h)"
        }
    }
}

/// A stored thing a token can watch: a property, or one facet of a collection.
enum StoredKey: Hashable {
    case x, y, z, next, w, node
    case itemsCount, itemsContents
    case dictKey(Int)
    case member(Int)
}

/// A computed property.
enum ComputedKey: Hashable {
    case s, t, u, nt, cc, ev, hf, hw
}

/// One dependency of a token.
enum Dependency: Hashable {
    case stored(RefObject, StoredKey)
    case computed(RefObject, ComputedKey)
}

/// What a token reads when it runs now: the values its callback logs, what it depends on, and
/// (value tokens) the value it compares.
struct Evaluation {
    var values: [Int?] = []
    var stored: Set<Dependency> = []
    var computed: Set<Dependency> = []
    var compared: Int?
}

/// A failure of a program: which rule, where, and what happened.
struct ModelFailure: Error, CustomStringConvertible {
    enum Kind: String, CaseIterable {
        case missedDelivery = "missed delivery (rules 1-3, 5)"
        case deliveryWithoutChange = "delivery though nothing it watches changed (rules 1, 2)"
        case twiceInOneDrain = "ran twice in one drain (rule 3)"
        case staleValues = "callback read values that are not final (rule 3)"
        case afterEnd = "callback after the token's end (rule 8)"
        case drainCount = "drain() returned a count other than the callbacks that ran (rule 6)"
        case wrongQueue = "callback in a drain of another queue"
        case pipelineOrder = "a binding's onApply did not follow its push"
        case initialDelivery = "wrong delivery at registration (rule 4)"
        case callbackOutsideDrain = "callback outside a drain with no .immediate token"
        case prematureDeinit = "object deinitialized while still referenced"
        case notReleased = "object still alive with nothing referencing it and nothing pending"
        case bindingClock =
            "a binding pushed against the binding rules (docs/Bindings.md, cycles and changes that meet)"
        case queueState = "a binding waits for a drain the rules don't give it, or doesn't wait for one they do"
        case harness = "test harness"
    }

    let kind: Kind
    let opIndex: Int
    let message: String
    /// The kind of token involved (`chainX`, `computed`, …), if any: with `kind`, what the
    /// shrinker keeps while it shrinks, and what tells two defects apart.
    var subject = ""

    var signature: String { subject.isEmpty ? kind.rawValue : "\(kind.rawValue) / \(subject)" }

    var description: String { "[\(kind.rawValue)] at operation \(opIndex): \(message)" }
}

/// A token as the model knows it.
struct RefToken {
    let label: Int
    let spec: TokenSpec
    let root: RefObject
    /// Rooted at one of the node's collections rather than at the node.
    let rootIsCollection: Bool
    /// A binding's destination.
    let destination: RefObject?
    /// Other sources than the root (`combineLatest`): their deinit ends the token too.
    let otherSources: [RefObject]
    /// Delivered iff the compared value changed (value tokens), rather than by rules 1 and 2.
    let comparesValue: Bool
    /// The queue it delivers through (0 or 1).
    let queue: Int
    /// `.immediate`: runs inside the setter on each change, never in a drain (rule 7).
    let immediate: Bool
    var ended = false
    /// `.immediate`, rule 7: changes of watched stored values it has not run for yet.
    var owed = 0
    /// `whichOf`: the stored values that changed since its last call.
    var changedKeys: Set<StoredKey> = []
    /// Rule 1: a watched stored value changed since the last delivery.
    var dirty = false
    var stored: Set<Dependency> = []
    /// Rule 2: computed values as this token last saw them.
    var seen: [Dependency: Int] = [:]
    var comparedSeen: Int?
    /// The values of the last delivery (or registration): `old` of `observeChanges`.
    var lastValues: [Int?] = []
    var lastDrain = -1

    // A binding that writes a model (ReferenceModel+Bindings.swift); nil and empty for others.
    /// What it reads, as the binding clock sees it.
    var clockSource: ClockSource?
    /// The property it writes.
    var destinationKey: Dependency?
    /// Its own subscription (a `combineLatest` hub) waits for its turn in a drain.
    var queued = false
    /// `combineLatest`: each input's subscription waits for its turn.
    var queuedInputs: [Bool] = []
    /// The change it last pushed.
    var lastPushed = 0
    /// The first change of each of its sources since its last turn (an input's, for a
    /// computed value; a step's, for a path).
    var firstChange: [Int?] = []
    /// Today's library: the change a path source took, numbered when the binding heard of it.
    var pathOrigin = 0
    /// `.immediate`: the changes it owes a push, in order.
    var owedChanges: [Int] = []
    /// `.immediate`, computed source, owed a push: the value it saw at its last run. The library
    /// compares once, when the innermost set's `.immediate` work ends; a change heard inside
    /// that set before then (a push the set made) joins the push owed.
    var seenBeforeComputedOwe: Int?
}

/// The reference model of one program.
struct ReferenceModel {
    let features: ModelFeatures
    private(set) var nodes: [Int: RefNode] = [:]
    private(set) var hubs: [Int: RefHub] = [:]
    private(set) var nodeHandles: Set<Int> = []
    private(set) var hubHandles: Set<Int> = []
    private(set) var dead: Set<RefObject> = []
    /// Nodes whose collections may outlive them (a pending delivery keeps a collection alive).
    private(set) var lingeringCollections: Set<Int> = []
    var tokens: [Int: RefToken] = [:]
    /// Tokens the program still holds (not dropped).
    private(set) var tokenHandles: Set<Int> = []
    private var usedTokenLabels: Set<Int> = []
    private(set) var drainIndex = 0
    private var ranThisDrain: [Int] = []
    private(set) var drainingQueue = 0
    /// Bindings' pushes whose `onApply` has not run yet.
    var awaitingApplied: [Int: Int] = [:]
    /// Tokens made by the operation (or callback) whose events are being checked that must run
    /// at registration, and whether they did.
    private var pendingInitials: [Int: Bool] = [:]
    /// Failures of ignored kinds seen so far.
    private(set) var ignoredFailures = 0
    /// Pushes of bindings that wrote in this drain (`drain()` counts them, not their turns).
    private var pushesThisDrain = 0

    // The binding clock (ReferenceModel+Bindings.swift).
    /// The number of the last change.
    var clock = 0
    /// The change each stored property holds: its last set's, or the change the push that last
    /// wrote it carried.
    var origin: [Dependency: Int] = [:]
    /// Today's library: the change a binding that reads the property takes at its turn, from a
    /// record the bindings that read or write it share (see
    /// `ModelBasedConfig.eachBindingCountsItsSourceFromItsFirstSet`).
    var timedOrigin: [Dependency: Int] = [:]
    /// The change the push writing now carries; nil outside pushes.
    var pushingOrigin: Int?
    /// The pushes of the binding whose turn runs now in a drain.
    var wave: WaveState?
    var counters = BindingCounters()

    init(features: ModelFeatures) {
        self.features = features
    }

    // MARK: Computed values (mirrors of ModelFixtures.swift)

    func node(_ n: Int) -> RefNode { nodes[n] ?? RefNode() }
    func hub(_ h: Int) -> RefHub { hubs[h] ?? RefHub() }

    func s(_ n: Int) -> Int { node(n).x + node(n).y }
    func t(_ n: Int) -> Int { s(n) + node(n).z }
    func u(_ n: Int) -> Int { ((t(n) % 3) + 3) % 3 }
    func nt(_ n: Int) -> Int { (node(n).next.map(t) ?? 0) - node(n).x }
    func cc(_ n: Int) -> Int {
        let node = node(n)
        return node.items.count + 10 * (node.dict[1] ?? 0) + (node.tags.contains(2) ? 100 : 0)
    }
    /// `ev` as logged: 1 when `t` is even.
    func ev(_ n: Int) -> Int { t(n) % 2 == 0 ? 1 : 0 }
    /// `hf` as logged (`2 * hf`): `s`.
    func hf(_ n: Int) -> Int { s(n) }
    func hw(_ h: Int) -> Int { hub(h).w * 10 + (hub(h).node.map(u) ?? 5) }

    func value(of dependency: Dependency) -> Int? {
        guard case .computed(let object, let key) = dependency else { return nil }
        switch (object, key) {
        case (.node(let n), .s): return s(n)
        case (.node(let n), .t): return t(n)
        case (.node(let n), .u): return u(n)
        case (.node(let n), .nt): return nt(n)
        case (.node(let n), .cc): return cc(n)
        case (.node(let n), .ev): return ev(n)
        case (.node(let n), .hf): return hf(n)
        case (.hub(let h), .hw): return hw(h)
        default: return nil
        }
    }

    func bindValue(_ n: Int, _ source: BindSource) -> (Int, Dependency) {
        switch source {
        case .x: (node(n).x, .stored(.node(n), .x))
        case .y: (node(n).y, .stored(.node(n), .y))
        case .z: (node(n).z, .stored(.node(n), .z))
        case .s: (s(n), .computed(.node(n), .s))
        case .t: (t(n), .computed(.node(n), .t))
        case .u: (u(n), .computed(.node(n), .u))
        case .nt: (nt(n), .computed(.node(n), .nt))
        }
    }

    // MARK: What a token reads

    /// The values a callback of `spec` reads now, and what it depends on.
    func evaluate(_ spec: TokenSpec, lastValues: [Int?] = [], changedKeys: Set<StoredKey> = []) -> Evaluation {
        var e = Evaluation()
        let probes = features.contains(.computed)
        func stored(_ object: RefObject, _ key: StoredKey) { e.stored.insert(.stored(object, key)) }
        func computed(_ object: RefObject, _ key: ComputedKey) -> Int {
            let dependency = Dependency.computed(object, key)
            e.computed.insert(dependency)
            return value(of: dependency)!
        }
        func nodeProbe(_ n: Int) { if probes { e.values.append(t(n)) } }
        func hubProbe(_ h: Int) { if probes { e.values.append(hw(h)) } }
        switch spec {
        case .property(let n, let field):
            stored(.node(n), field.key)
            e.values = [node(n)[field]]
            nodeProbe(n)
        case .whichOf(let n):
            for key in [StoredKey.x, .y, .z] { stored(.node(n), key) }
            let bits =
                (changedKeys.contains(.x) ? 1 : 0) + (changedKeys.contains(.y) ? 2 : 0)
                + (changedKeys.contains(.z) ? 4 : 0)
            e.values = [node(n).x, node(n).y, node(n).z, bits]
        case .combine(let first, let second, _):
            stored(.node(first), .x)
            stored(.node(second), .y)
            e.values = [(node(first).x + 2 * node(second).y) % 5]
        case .propertyList(let n):
            stored(.node(n), .x)
            stored(.node(n), .z)
            e.values = [node(n).x, node(n).z]
            nodeProbe(n)
        case .hubW(let h):
            stored(.hub(h), .w)
            e.values = [hub(h).w]
            hubProbe(h)
        case .hubNode(let h):
            stored(.hub(h), .node)
            e.values = [hub(h).node]
            hubProbe(h)
        case .computed(let n, let field):
            e.values = [computed(.node(n), field.key)]
            nodeProbe(n)
        case .mixedList(let n):
            stored(.node(n), .y)
            e.values = [node(n).y, computed(.node(n), .u)]
            nodeProbe(n)
        case .hubComputed(let h):
            e.values = [computed(.hub(h), .hw)]
            hubProbe(h)
        case .chainX(let n), .chainXObserver(let n), .trackedX(let n):
            stored(.node(n), .next)
            if let m = node(n).next {
                stored(.node(m), .x)
                e.values = [node(m).x]
            } else {
                e.values = [nil]
            }
            nodeProbe(n)
        case .chainNextNextY(let n), .stringPath(let n):
            stored(.node(n), .next)
            var endpoint: Int?
            if let m = node(n).next {
                stored(.node(m), .next)
                if let m2 = node(m).next {
                    let key: StoredKey = if case .stringPath = spec { .z } else { .y }
                    stored(.node(m2), key)
                    endpoint = key == .z ? node(m2).z : node(m2).y
                }
            }
            e.values = [endpoint]
            nodeProbe(n)
        case .trackedChanges(let n):
            stored(.node(n), .next)
            var new: Int?
            if let m = node(n).next {
                stored(.node(m), .y)
                new = node(m).y
            }
            e.values = [lastValues.last ?? new, new]
        case .closure(let n):
            stored(.node(n), .x)
            if node(n).x > 1 {
                stored(.node(n), .y)
                e.values = [node(n).y]
            } else {
                stored(.node(n), .next)
                if let m = node(n).next {
                    stored(.node(m), .z)
                    e.values = [node(m).z]
                } else {
                    e.values = [-1]
                }
            }
        case .hubChain(let h):
            stored(.hub(h), .node)
            var endpoint: Int?
            if let m = hub(h).node {
                stored(.node(m), .next)
                if let m2 = node(m).next {
                    stored(.node(m2), .x)
                    endpoint = node(m2).x
                }
            }
            e.values = [endpoint]
            hubProbe(h)
        case .chainT(let n), .trackedS(let n):
            stored(.node(n), .next)
            let key: ComputedKey = if case .chainT = spec { .t } else { .s }
            e.values = [node(n).next.map { computed(.node($0), key) }]
            nodeProbe(n)
        case .closureComputed(let n):
            let u = computed(.node(n), .u)
            stored(.node(n), .next)
            let s = node(n).next.map { computed(.node($0), .s) }
            e.values = [u + (s ?? 0)]
        case .hubTracked(let h):
            stored(.hub(h), .node)
            e.values = [hub(h).node.map { computed(.node($0), .t) }]
            hubProbe(h)
        case .value(let n):
            stored(.node(n), .x)
            stored(.node(n), .y)
            e.compared = node(n).x + node(n).y >= 3 ? 1 : 0
            e.values = [e.compared]
        case .valueComputed(let n):
            e.compared = computed(.node(n), .t) % 2
            e.values = [e.compared]
        case .count(let n):
            stored(.node(n), .itemsCount)
            e.values = [node(n).items.count]
            nodeProbe(n)
        case .mutations(let n):
            stored(.node(n), .itemsContents)
            e.values = [node(n).items.count, node(n).items.reduce(0, +)]
        case .dictKey(let n, let key):
            stored(.node(n), .dictKey(key))
            e.values = [node(n).dict[key]]
        case .member(let n, let member):
            stored(.node(n), .member(member))
            e.values = [node(n).tags.contains(member) ? 1 : 0]
        case .computedCollections(let n):
            e.values = [computed(.node(n), .cc)]
            nodeProbe(n)
        case .bind(let n, let source, _, let mapped), .bindToHub(let n, let source, _, let mapped),
            .post(let n, let source, let mapped):
            let (value, dependency) = bindValue(n, source)
            if case .stored = dependency { e.stored.insert(dependency) } else { e.computed.insert(dependency) }
            e.values = [mapped ? TokenSpec.map(value) : value]
        case .actor(let n, let field, _):
            stored(.node(n), field.key)
            e.values = [node(n)[field]]
        case .bindFromHub(let h, _):
            stored(.hub(h), .node)
            var value = 0
            if let m = hub(h).node {
                stored(.node(m), .x)
                value = node(m).x
            }
            e.values = [value]
        }
        return e
    }

    // MARK: Labels and handles

    /// Whether the operation runs: every label it names is there. The runner asks this before
    /// running an operation, so both sides skip the same ones.
    func isExecutable(_ op: ModelOp) -> Bool {
        func hasNode(_ n: Int) -> Bool { nodeHandles.contains(n) }
        func hasHub(_ h: Int) -> Bool { hubHandles.contains(h) }
        switch op {
        case .newNode(let n): return nodes[n] == nil
        case .newHub(let h): return hubs[h] == nil
        case .releaseNode(let n): return hasNode(n)
        case .releaseHub(let h): return hasHub(h)
        case .set(let n, _, _), .append(let n, _), .removeFirst(let n), .replace(let n, _, _),
            .setKey(let n, _, _), .removeKey(let n, _), .insertMember(let n, _), .removeMember(let n, _),
            .invalidateComputed(let n, _):
            return hasNode(n)
        case .setNext(let n, let to): return hasNode(n) && (to.map(hasNode) ?? true)
        case .setW(let h, _), .invalidateHubComputed(let h): return hasHub(h)
        case .setHubNode(let h, let to): return hasHub(h) && (to.map(hasNode) ?? true)
        case .observe(let k, let spec, _):
            guard !usedTokenLabels.contains(k) else { return false }
            return objects(of: spec).allSatisfy { object in
                switch object {
                case .node(let n): hasNode(n)
                case .hub(let h): hasHub(h)
                }
            }
        case .invalidateToken(let k), .dropToken(let k): return tokenHandles.contains(k)
        case .churnChain(let n, _): return hasNode(n)
        case .drain: return true
        case .parallel: return true
        }
    }

    /// The objects a token spec names: its root first, then a binding's destination, then other
    /// sources.
    func objects(of spec: TokenSpec) -> [RefObject] {
        switch spec {
        case .property(let n, _), .propertyList(let n), .whichOf(let n), .computed(let n, _), .mixedList(let n),
            .chainX(let n), .chainXObserver(let n),
            .chainNextNextY(let n), .stringPath(let n), .trackedX(let n), .trackedChanges(let n), .closure(let n),
            .chainT(let n), .trackedS(let n), .closureComputed(let n), .value(let n), .valueComputed(let n),
            .count(let n), .mutations(let n), .dictKey(let n, _), .member(let n, _), .computedCollections(let n),
            .post(let n, _, _), .actor(let n, _, _):
            return [.node(n)]
        case .hubW(let h), .hubNode(let h), .hubComputed(let h), .hubChain(let h), .hubTracked(let h):
            return [.hub(h)]
        case .bind(let n, _, let d, _): return [.node(n), .node(d)]
        case .bindToHub(let n, _, let h, _): return [.node(n), .hub(h)]
        case .bindFromHub(let h, let d): return [.hub(h), .node(d)]
        case .combine(let first, let second, let d): return [.node(first), .node(d), .node(second)]
        }
    }

    /// The operations of a parallel phase that run: those whose labels are there, and no
    /// reference set while some object lives only through references (a thread could then
    /// release it, and when it goes would depend on the interleaving).
    func executableThreads(_ threads: [[ModelOp]]) -> [[ModelOp]] {
        let referenceSetsAllowed = !hasUnheldObjects
        return threads.map { ops in
            ops.filter { op in
                switch op {
                case .setNext, .setHubNode: referenceSetsAllowed && isExecutable(op)
                case .set, .setW, .append, .removeFirst, .replace, .setKey, .removeKey, .insertMember, .removeMember,
                    .churnChain:
                    isExecutable(op)
                default: false
                }
            }
        }
    }

    private var hasUnheldObjects: Bool {
        nodes.keys.contains { !nodeHandles.contains($0) && !dead.contains(.node($0)) }
            || hubs.keys.contains { !hubHandles.contains($0) && !dead.contains(.hub($0)) }
    }

    // MARK: Lifetimes

    /// How many references keep `object` alive: the program's, and live objects' `next`/`node`.
    func referenceCount(_ object: RefObject) -> Int {
        switch object {
        case .hub(let h): return hubHandles.contains(h) ? 1 : 0
        case .node(let n):
            var count = nodeHandles.contains(n) ? 1 : 0
            for (m, state) in nodes where state.next == n && !dead.contains(.node(m)) { count += 1 }
            for (h, state) in hubs where state.node == n && !dead.contains(.hub(h)) { count += 1 }
            return count
        }
    }

    func isDoomed(_ object: RefObject) -> Bool { !dead.contains(object) && referenceCount(object) == 0 }

    /// Objects that nothing references any more and that have not deinitialized.
    var doomedObjects: [RefObject] {
        (nodes.keys.map(RefObject.node) + hubs.keys.map(RefObject.hub)).filter(isDoomed).sorted {
            $0.description < $1.description
        }
    }

    /// Whether a missed delivery of the token is allowed: its root (or a binding's destination)
    /// is unreferenced and may deinitialize before the token's turn (see docs/Lifecycle.md).
    func mayBeSkipped(_ token: RefToken) -> Bool {
        if isDoomed(token.root) { return true }
        if token.rootIsCollection, case .node(let n) = token.root, lingeringCollections.contains(n) { return true }
        if let destination = token.destination, isDoomed(destination) { return true }
        return token.otherSources.contains(where: isDoomed)
    }

    // MARK: Applying operations

    /// Applies an operation to the state (before the library's events for it are checked).
    /// Returns a failure only for harness errors.
    mutating func apply(_ op: ModelOp) {
        switch op {
        case .newNode(let n):
            nodes[n] = RefNode()
            nodeHandles.insert(n)
        case .newHub(let h):
            hubs[h] = RefHub()
            hubHandles.insert(h)
        case .releaseNode(let n): nodeHandles.remove(n)
        case .releaseHub(let h): hubHandles.remove(h)
        case .set(let n, let field, let value):
            if node(n)[field] != value {
                nodes[n]![field] = value
                changed([.stored(.node(n), field.key)])
            }
        case .setNext(let n, let to):
            if node(n).next != to {
                nodes[n]!.next = to
                changed([.stored(.node(n), .next)])
            }
        case .setW(let h, let value):
            if hub(h).w != value {
                hubs[h]!.w = value
                changed([.stored(.hub(h), .w)])
            }
        case .setHubNode(let h, let to):
            if hub(h).node != to {
                hubs[h]!.node = to
                changed([.stored(.hub(h), .node)])
            }
        case .append(let n, let value):
            nodes[n]!.items.append(value)
            changed([.stored(.node(n), .itemsCount), .stored(.node(n), .itemsContents)])
        case .removeFirst(let n):
            if !node(n).items.isEmpty {
                nodes[n]!.items.removeFirst()
                changed([.stored(.node(n), .itemsCount), .stored(.node(n), .itemsContents)])
            }
        case .replace(let n, let index, let value):
            let count = node(n).items.count
            if count > 0, node(n).items[index % count] != value {
                nodes[n]!.items[index % count] = value
                changed([.stored(.node(n), .itemsContents)])
            }
        case .setKey(let n, let key, let value):
            if node(n).dict[key] != value {
                nodes[n]!.dict[key] = value
                changed([.stored(.node(n), .dictKey(key))])
            }
        case .removeKey(let n, let key):
            if node(n).dict[key] != nil {
                nodes[n]!.dict[key] = nil
                changed([.stored(.node(n), .dictKey(key))])
            }
        case .insertMember(let n, let member):
            if !node(n).tags.contains(member) {
                nodes[n]!.tags.insert(member)
                changed([.stored(.node(n), .member(member))])
            }
        case .removeMember(let n, let member):
            if node(n).tags.contains(member) {
                nodes[n]!.tags.remove(member)
                changed([.stored(.node(n), .member(member))])
            }
        case .invalidateComputed(let n, let field):
            // The value recomputes equal: nobody may hear of it. Bindings of it wait for their
            // turn, which finds it unchanged.
            let key: ComputedKey =
                switch field {
                case .s: .s
                case .t: .t
                case .u: .u
                case .nt: .nt
                case .cc: .cc
                case .ev: .ev
                case .hf: .hf
                }
            bindingsHearInvalidation(of: .computed(.node(n), key))
        case .invalidateHubComputed(let h):
            bindingsHearInvalidation(of: .computed(.hub(h), .hw))
        case .observe(let k, let spec, let options):
            register(k, spec, options)
        case .invalidateToken(let k):
            tokens[k]?.ended = true
        case .dropToken(let k):
            tokens[k]?.ended = true
            tokenHandles.remove(k)
        case .drain, .churnChain:
            break
        case .parallel(let threads):
            for ops in threads { for op in ops { apply(op) } }
        }
    }

    /// Rule 1: tokens watching a changed stored value are due.
    private mutating func changed(_ keys: Set<Dependency>) {
        let takenByWave = bindingsHear(keys)
        for (k, token) in tokens where !token.ended && !token.stored.isDisjoint(with: keys) {
            // Bindings that write a model: `bindingsHear` did their part.
            if token.clockSource != nil, token.immediate || takenByWave.contains(k) { continue }
            if token.immediate {
                tokens[k]!.owed += 1
            } else {
                tokens[k]!.dirty = true
            }
            for case .stored(_, let key) in keys.intersection(token.stored) { tokens[k]!.changedKeys.insert(key) }
        }
    }

    private mutating func register(_ k: Int, _ spec: TokenSpec, _ options: TokenOptions) {
        usedTokenLabels.insert(k)
        // The program holds the token once `observe` has returned (`checkEvents`): an action
        // of its own registration callback can't reach it.
        let objects = objects(of: spec)
        let rootIsCollection: Bool
        switch spec {
        case .mutations, .dictKey, .member: rootIsCollection = true
        default: rootIsCollection = false
        }
        let comparesValue: Bool
        switch spec {
        case .value, .valueComputed: comparesValue = true
        default: comparesValue = false
        }
        var token = RefToken(
            label: k, spec: spec, root: objects[0], rootIsCollection: rootIsCollection,
            destination: objects.count > 1 ? objects[1] : nil, otherSources: Array(objects.dropFirst(2)),
            comparesValue: comparesValue, queue: options.queue,
            immediate: options.immediate)
        if let shape = Self.clockShape(of: spec) {
            token.clockSource = shape.source
            token.destinationKey = shape.destination
            if case .stored(let sources) = shape.source {
                token.firstChange = Array(repeating: nil, count: sources.count)
                if sources.count > 1 { token.queuedInputs = Array(repeating: false, count: sources.count) }
            } else {
                token.firstChange = [nil]
            }
        }
        // Rule 4: the baseline is the value at registration.
        let evaluation = evaluate(spec)
        record(evaluation, in: &token)
        tokens[k] = token
        let runsAtCreation: Bool
        switch spec {
        case .closure, .closureComputed: runsAtCreation = true
        default: runsAtCreation = options.initial
        }
        if runsAtCreation { pendingInitials[k] = false }
    }

    func record(_ evaluation: Evaluation, in token: inout RefToken) {
        token.stored = evaluation.stored
        token.seen = [:]
        for dependency in evaluation.computed { token.seen[dependency] = value(of: dependency) }
        token.comparedSeen = evaluation.compared
        token.lastValues = evaluation.values
        token.dirty = false
        token.changedKeys = []
    }

    /// Whether the token must run if its turn came now (rules 1 and 2).
    func isDue(_ token: RefToken) -> Bool {
        if token.comparesValue { return evaluate(token.spec).compared != token.comparedSeen }
        if token.dirty { return true }
        return token.seen.contains { dependency, seen in value(of: dependency) != seen }
    }

    // MARK: Checking events

    /// Checks the events of an operation that is not a drain: the registration delivery of a
    /// token made by it (rule 4) and deinits.
    mutating func checkEvents(_ events: [ModelLoggedEvent], of op: ModelOp, at index: Int) -> ModelFailure? {
        if let failure = check(events, during: op, at: index) { return failure }
        if case .observe(let k, _, _) = op { tokenHandles.insert(k) }
        return nil
    }

    /// Checks events in the order they happened, during an operation (`op`) or a drain (nil).
    private mutating func check(_ events: [ModelLoggedEvent], during op: ModelOp?, at index: Int) -> ModelFailure? {
        for logged in events {
            let event = logged.event
            var running: Int?
            if case .callback(let k, _) = event { running = k }
            if case .applied(let k) = event { running = k }
            // Bindings whose turn came, quietly, since the last event (see ModelQueueProbe.swift).
            if op == nil, let failure = quietTurns(logged.queued, except: running, at: index) { return failure }
            syncQueued(logged.queued)
            if let failure = checkWave(before: event, at: index) { return failure }
            switch event {
            case .nodeDeinit(let n):
                if let failure = deinitialized(.node(n), at: index) { return failure }
            case .hubDeinit(let h):
                if let failure = deinitialized(.hub(h), at: index) { return failure }
            case .callback(let k, let values):
                if pendingInitials[k] == false {
                    if let failure = ranAtRegistration(k, values: values, at: index) { return failure }
                } else if let token = tokens[k], token.immediate {
                    if let failure = ranImmediately(k, values: values, at: index) { return failure }
                } else if let op {
                    return ModelFailure(
                        kind: .callbackOutsideDrain, opIndex: index,
                        message:
                            "k\(k)'s callback ran during `\(op.lines().joined(separator: " "))` with \(show(values))",
                        subject: tokens[k]?.spec.kindName ?? "")
                } else if let failure = delivered(k, values: values, at: index) {
                    return failure
                }
            case .applied(let k):
                if let failure = applied(k, at: index) { return failure }
            }
        }
        if let failure = checkSettled(at: index) { return failure }
        let missing = pendingInitials.filter { !$0.value }.keys.sorted()
        pendingInitials = [:]
        if let k = missing.first {
            let spec = tokens[k].map { $0.spec.source(options: "") } ?? "?"
            return ModelFailure(
                kind: .initialDelivery, opIndex: index,
                message: "k\(k) (\(spec)) did not run at registration (.initial or a tracking closure)",
                subject: tokens[k]?.spec.kindName ?? "")
        }
        return nil
    }

    /// Rule 4: with `.initial` (or a tracking closure) a token runs once at registration, with
    /// the values then.
    private mutating func ranAtRegistration(_ k: Int, values: [Int], at index: Int) -> ModelFailure? {
        pendingInitials[k] = true
        guard let token = tokens[k] else { return harness(index, "k\(k) unknown") }
        let expected = token.lastValues.map { $0 ?? ModelEvent.absent }
        guard expected == values else {
            return ModelFailure(
                kind: .initialDelivery, opIndex: index,
                message:
                    "k\(k) (\(token.spec.source(options: ""))) read \(show(values)) at registration; expected \(show(expected))",
                subject: token.spec.kindName)
        }
        if token.clockSource != nil, let value = values.first,
            let failure = pushAtCreation(k, value: value, at: index)
        {
            return failure
        }
        performAction(of: token)
        return nil
    }

    mutating func beginDrain(queue: Int) {
        drainIndex += 1
        drainingQueue = queue
        ranThisDrain = []
        pushesThisDrain = 0
    }

    /// Checks the events of a drain, in the order they happened.
    mutating func checkDrainEvents(_ events: [ModelLoggedEvent], at index: Int) -> ModelFailure? {
        check(events, during: nil, at: index)
    }

    /// Rule 3 of bindings: once a push returns, the bindings of its queue whose source it
    /// changed push, before anything else happens.
    private mutating func checkWave(before event: ModelEvent, at index: Int) -> ModelFailure? {
        guard let running = wave, running.pusher == nil, !running.expected.isEmpty else { return nil }
        if case .callback(let k, _) = event, running.expected.contains(k) { return nil }
        let k = running.expected[0]
        return fail(
            .bindingClock, index,
            "a push in drain #\(drainIndex) changed the source of k\(k) (\(tokens[k]?.spec.source(options: "") ?? "?")), of the same queue, and k\(k) did not push right after it",
            tokens[k])
    }

    /// Rule 7: an `.immediate` token runs inside the setter, once per change of a stored value
    /// it watches, and for computed values it watches only when one differs from what it last
    /// saw; it reads the values as they are then.
    private mutating func ranImmediately(_ k: Int, values: [Int], at index: Int) -> ModelFailure? {
        let token = tokens[k]!
        let source = token.spec.source(options: ".immediate")
        if token.ended { return fail(.afterEnd, index, "k\(k) (\(source)) ran after its end", token) }
        let computedChanged = token.seen.contains { dependency, seen in value(of: dependency) != seen }
        if token.owed == 0, !computedChanged,
            let failure = fail(
                .deliveryWithoutChange, index,
                "k\(k) (\(source)) ran with \(show(values)) though nothing it watches changed since its last run", token
            )
        {
            return failure
        }
        let evaluation = evaluate(token.spec)
        let expected = evaluation.values.map { $0 ?? ModelEvent.absent }
        if expected != values,
            let failure = fail(
                .staleValues, index, "k\(k) (\(source)) read \(show(values)); the values then are \(show(expected))",
                token)
        {
            return failure
        }
        var updated = token
        let owed = max(0, token.owed - 1)
        record(evaluation, in: &updated)
        updated.owed = owed
        updated.seenBeforeComputedOwe = nil
        tokens[k] = updated
        if updated.clockSource != nil, let value = values.first {
            return pushImmediately(k, value: value, at: index)
        }
        return nil
    }

    /// A binding's `onApply` runs after its push's write.
    private mutating func applied(_ k: Int, at index: Int) -> ModelFailure? {
        guard let waiting = awaitingApplied[k], waiting > 0 else {
            return ModelFailure(
                kind: .pipelineOrder, opIndex: index, message: "k\(k)'s onApply ran without a push before it",
                subject: tokens[k]?.spec.kindName ?? "")
        }
        awaitingApplied[k] = waiting - 1
        finishPush(k)
        return nil
    }

    /// At the end of an operation or a drain: every `.immediate` token ran for every change
    /// (rule 7), and every push was followed by its `onApply`.
    private mutating func checkSettled(at index: Int) -> ModelFailure? {
        for k in tokens.keys.sorted() {
            let token = tokens[k]!
            guard token.immediate, !token.ended, !mayBeSkipped(token) else { continue }
            let computedChanged = token.seen.contains { dependency, seen in value(of: dependency) != seen }
            if token.owed > 0 || computedChanged {
                let why = token.owed > 0 ? "\(token.owed) change(s) of what it watches" : dueReason(token)
                if let failure = fail(
                    .missedDelivery, index,
                    "k\(k) (\(token.spec.source(options: ".immediate"))) did not run inside the setter for \(why)",
                    token)
                {
                    return failure
                }
            }
        }
        if let (k, _) = awaitingApplied.first(where: { $0.value > 0 }) {
            return ModelFailure(
                kind: .pipelineOrder, opIndex: index, message: "k\(k) pushed, and its onApply did not run",
                subject: tokens[k]?.spec.kindName ?? "")
        }
        return nil
    }

    /// After the drain: every due token ran (rules 1-3, 5) and the count is right (rule 6).
    /// `queued`: the bindings that write a model still waiting in their queue.
    mutating func endDrain(returned: Int, queued: ModelQueuedBindings, at index: Int) -> ModelFailure? {
        if let failure = quietTurns(queued, except: nil, at: index) { return failure }
        syncQueued(queued)
        if let running = wave, let k = running.expected.first {
            return fail(
                .bindingClock, index,
                "a push in drain #\(drainIndex) changed the source of k\(k) (\(tokens[k]?.spec.source(options: "") ?? "?")), of the same queue, and k\(k) did not push in that drain",
                tokens[k])
        }
        wave = nil
        for k in tokens.keys.sorted() {
            let token = tokens[k]!
            guard !token.ended, !token.immediate, token.queue == drainingQueue, !mayBeSkipped(token) else { continue }
            if token.clockSource != nil {
                // A binding still waiting after the drain is deferred: it ran in it already.
                let waits = token.queued || token.queuedInputs.contains(true)
                guard waits ? token.lastDrain != drainIndex : isDue(token) else { continue }
            } else {
                guard token.lastDrain != drainIndex, isDue(token) else { continue }
            }
            if let failure = fail(
                .missedDelivery, index,
                "k\(k) (\(token.spec.source(options: ""))) did not run in drain #\(drainIndex) though \(dueReason(token))",
                token)
            {
                return failure
            }
        }
        // `.immediate` callbacks that ran inside the drain (a push or a callback set what they
        // watch) are not the queue's deliveries: not counted. A binding that writes a model
        // counts one per value it wrote (docs/Bindings.md), not per turn.
        let counted = ranThisDrain.count + pushesThisDrain
        if returned != counted {
            return fail(
                .drainCount, index,
                "drain #\(drainIndex) returned \(returned); \(ranThisDrain.count) callbacks ran (\(ranThisDrain.isEmpty ? "none" : ranThisDrain.map { "k\($0)" }.joined(separator: ", "))) and bindings wrote \(pushesThisDrain) values",
                nil)
        }
        return nil
    }

    /// Lifetimes once the queue has nothing pending: every unreferenced object is gone.
    /// `deadCollections(n)` says whether node `n`'s collections are gone (weak references).
    mutating func checkReleased(at index: Int, deadCollections: (Int) -> Bool) -> ModelFailure? {
        if let object = doomedObjects.first {
            return ModelFailure(
                kind: .notReleased, opIndex: index,
                message:
                    "\(object) is referenced by nothing and the queue has nothing pending, but it has not deinitialized"
            )
        }
        for n in lingeringCollections.sorted() {
            guard deadCollections(n) else {
                return ModelFailure(
                    kind: .notReleased, opIndex: index,
                    message: "a collection of n\(n) (deinitialized) is still alive with nothing pending")
            }
            lingeringCollections.remove(n)
            for (k, token) in tokens where token.rootIsCollection && token.root == .node(n) {
                tokens[k]!.ended = true
            }
        }
        return nil
    }

    private mutating func delivered(_ k: Int, values: [Int], at index: Int) -> ModelFailure? {
        guard let token = tokens[k] else {
            if k == ModelRunner.churnedLabel {
                return ModelFailure(
                    kind: .afterEnd, opIndex: index,
                    message: "a chain token made and ended on a thread of a parallel phase ran in a drain")
            }
            return harness(index, "callback of unknown token k\(k)")
        }
        let source = token.spec.source(options: "")
        if token.ended {
            // Ignored (a diagnostic run): the event is dropped.
            return fail(.afterEnd, index, "k\(k) (\(source)) ran after its end", token)
        }
        if let running = wave, running.expected.contains(k) { return pushedInWave(k, values: values, at: index) }
        if token.clockSource != nil, let running = wave, let pusher = running.pusher {
            return fail(
                .bindingClock, index,
                "k\(k) (\(source)) had its turn in drain #\(drainIndex) while k\(pusher)'s push was running", token)
        }
        if token.queue != drainingQueue,
            let failure = fail(
                .wrongQueue, index,
                "k\(k) (\(source)), on queue \(token.queue), ran in a drain of queue \(drainingQueue)",
                token)
        {
            return failure
        }
        if token.lastDrain == drainIndex,
            let failure = fail(.twiceInOneDrain, index, "k\(k) (\(source)) ran twice in drain #\(drainIndex)", token)
        {
            return failure
        }
        if !isDue(token),
            let failure = fail(
                .deliveryWithoutChange, index,
                "k\(k) (\(source)) ran in drain #\(drainIndex) with \(show(values)) though nothing it watches changed (last saw \(show(token.lastValues.map { $0 ?? ModelEvent.absent }))\(seenText(token)))",
                token)
        {
            return failure
        }
        let evaluation = evaluate(token.spec, lastValues: token.lastValues, changedKeys: token.changedKeys)
        let expected = evaluation.values.map { $0 ?? ModelEvent.absent }
        if expected != values,
            let failure = fail(
                .staleValues, index,
                "k\(k) (\(source)) read \(show(values)) in drain #\(drainIndex); the final values are \(show(expected))",
                token)
        {
            return failure
        }
        var updated = token
        // `observeChanges`: `old` is the value last delivered; keep the new value as the last one.
        var fresh = evaluate(token.spec)
        if case .trackedChanges = token.spec { fresh.values = [evaluation.values[1]] }
        record(fresh, in: &updated)
        updated.lastDrain = drainIndex
        tokens[k] = updated
        if updated.clockSource != nil, let value = values.first {
            let outcome = pushInTurn(k, value: value, at: index)
            if outcome.written { pushesThisDrain += 1 }
            return outcome.failure
        }
        ranThisDrain.append(k)
        performAction(of: updated)
        return nil
    }

    /// A push the wave of a running drain makes: another push of the same queue changed this
    /// binding's source (rule 3 of bindings). Not a turn of its own.
    private mutating func pushedInWave(_ k: Int, values: [Int], at index: Int) -> ModelFailure? {
        let token = tokens[k]!
        let expected = evaluate(token.spec).values.map { $0 ?? ModelEvent.absent }
        if expected != values,
            let failure = fail(
                .staleValues, index,
                "k\(k) (\(token.spec.source(options: ""))) pushed \(show(values)) in drain #\(drainIndex); the final values are \(show(expected))",
                token)
        {
            return failure
        }
        guard let value = values.first else { return nil }
        let outcome = pushInWave(k, value: value, at: index)
        if outcome.written { pushesThisDrain += 1 }
        return outcome.failure
    }

    /// What an `.actor` token's callback does after logging, if its labels are there then (the
    /// runner decides the same way on its side).
    private mutating func performAction(of token: RefToken) {
        guard case .actor(_, _, let action) = token.spec, isExecutable(action.op) else { return }
        apply(action.op)
        // A token made by a callback is the program's at once (the runner stores it there).
        if case .observe(let k, _, _) = action.op { tokenHandles.insert(k) }
    }

    private mutating func deinitialized(_ object: RefObject, at index: Int) -> ModelFailure? {
        guard !dead.contains(object) else { return harness(index, "\(object) deinitialized twice") }
        let references = referenceCount(object)
        if references > 0 {
            return ModelFailure(
                kind: .prematureDeinit, opIndex: index,
                message: "\(object) deinitialized while \(references) reference(s) to it remain")
        }
        dead.insert(object)
        if case .node(let n) = object { lingeringCollections.insert(n) }
        for (k, token) in tokens where !token.ended {
            let rootGone = token.root == object && !token.rootIsCollection
            if rootGone || token.destination == object || token.otherSources.contains(object) {
                tokens[k]!.ended = true
            }
        }
        return nil
    }

    // MARK: Messages

    /// A failure, or nil when its kind is ignored (`OBSERVATION_TOKENS_MODEL_IGNORE`, a
    /// diagnostic to see past one known failure); the check then goes on as if it had passed.
    mutating func fail(
        _ kind: ModelFailure.Kind, _ index: Int, _ message: String, _ token: RefToken?
    ) -> ModelFailure? {
        guard !ModelBasedConfig.ignoredKinds.contains(kind) else {
            ignoredFailures += 1
            return nil
        }
        return ModelFailure(kind: kind, opIndex: index, message: message, subject: token?.spec.kindName ?? "")
    }

    private func harness(_ index: Int, _ message: String) -> ModelFailure {
        ModelFailure(kind: .harness, opIndex: index, message: message)
    }

    func dueReason(_ token: RefToken) -> String {
        if token.comparesValue {
            return
                "its value went from \(token.comparedSeen.map(String.init) ?? "nil") to \(evaluate(token.spec).compared.map(String.init) ?? "nil")"
        }
        if token.dirty { return "a stored value it watches changed" }
        let changes = token.seen.compactMap { dependency, seen -> String? in
            let now = value(of: dependency)!
            return now == seen ? nil : "\(name(dependency)) went from \(seen) to \(now)"
        }
        return changes.sorted().joined(separator: ", ")
    }

    private func seenText(_ token: RefToken) -> String {
        guard !token.seen.isEmpty else { return "" }
        let parts = token.seen.map { "\(name($0.key)) = \($0.value)" }.sorted()
        return "; computed values it saw: " + parts.joined(separator: ", ")
    }

    func name(_ dependency: Dependency) -> String {
        switch dependency {
        case .stored(let object, let key): "\(object).\(key)"
        case .computed(let object, let key): "\(object).\(key)"
        }
    }

    private func show(_ values: [Int]) -> String {
        "(" + values.map { $0 == ModelEvent.absent ? "nil" : String($0) }.joined(separator: ", ") + ")"
    }
}

extension NodeField {
    var key: StoredKey {
        switch self {
        case .x: .x
        case .y: .y
        case .z: .z
        }
    }
}

extension NodeComputedField {
    var key: ComputedKey {
        switch self {
        case .s: .s
        case .t: .t
        case .u: .u
        case .nt: .nt
        case .cc: .cc
        case .ev: .ev
        case .hf: .hf
        }
    }
}

extension RefNode {
    subscript(field: NodeField) -> Int {
        get {
            switch field {
            case .x: x
            case .y: y
            case .z: z
            }
        }
        set {
            switch field {
            case .x: x = newValue
            case .y: y = newValue
            case .z: z = newValue
            }
        }
    }
}
