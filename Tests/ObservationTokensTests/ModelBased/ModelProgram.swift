// A program of the model-based random test: a list of operations over nodes (`n0`, `n1`, …),
// hubs (`h0`, …) and tokens (`k0`, …), named by labels. An operation whose labels are not
// there (never made, released, dropped) is skipped, by the runner and by the reference model
// alike, so every sub-list of a program is a program: that is what lets a failure shrink.

/// A stored `Int` of a node.
enum NodeField: String, CaseIterable, Sendable {
    case x, y, z
}

/// A `@Computed` property of a node (`ev` is a `Bool` and `hf` a `Double`; the others are `Int`s).
enum NodeComputedField: String, CaseIterable, Sendable {
    case s, t, u, nt, cc, ev, hf

    /// The fields a program picks when collections are not in play (`cc` reads them).
    static let withoutCollections: [NodeComputedField] = [.s, .t, .u, .nt, .ev, .hf]
}

/// What a binding or posting reads from its source node (`s`, `t`, `u`, `nt` are computed).
enum BindSource: String, CaseIterable, Sendable {
    case x, y, z, s, t, u, nt

    var isComputed: Bool {
        switch self {
        case .x, .y, .z: false
        case .s, .t, .u, .nt: true
        }
    }
}

/// What a callback of a `.actor` token does after logging, from inside the drain.
enum CallbackAction: Equatable, Sendable {
    case set(node: Int, NodeField, Int)
    case setNext(node: Int, to: Int?)
    case invalidate(token: Int)
    case drop(token: Int)
    case release(node: Int)
    /// Makes a property token `node.observe(\.field)` on `modelQueue`, from inside the drain.
    case observe(token: Int, node: Int, NodeField, initial: Bool)

    /// The same thing as an operation of the program.
    var op: ModelOp {
        switch self {
        case .set(let n, let field, let value): .set(node: n, field, value)
        case .setNext(let n, let to): .setNext(node: n, to: to)
        case .invalidate(let k): .invalidateToken(k)
        case .drop(let k): .dropToken(k)
        case .release(let n): .releaseNode(n)
        case .observe(let k, let n, let field, let initial):
            .observe(token: k, .property(node: n, field), TokenOptions(initial: initial))
        }
    }

    var source: String { op.lines()[0] }
}

/// The observations a program makes. Each one's callback logs what it read; the reference
/// model knows what it must read, and when it must run.
enum TokenSpec: Equatable, Sendable {
    // Base: property tokens.
    /// `node.observe(\.x)`
    case property(node: Int, NodeField)
    /// `node.observe([\.x, \.z])`
    case propertyList(node: Int)
    /// `node.observe(whichOf: [\.x, \.y, \.z]) { log($0.x, $0.y, $0.z, changed) }`: with the
    /// properties that changed since its last call (a bit each: x 1, y 2, z 4).
    case whichOf(node: Int)
    /// `hub.observe(\.w)`
    case hubW(hub: Int)
    /// `hub.observe(\.node)` (a reference: `===`)
    case hubNode(hub: Int)
    // Computed.
    /// `node.observe(\.t)` on a computed property.
    case computed(node: Int, NodeComputedField)
    /// `node.observe([\.y, \.u])`: a stored and a computed property.
    case mixedList(node: Int)
    /// `hub.observe(\.hw)`
    case hubComputed(hub: Int)
    // Paths and tracking.
    /// `node.observe(KeyPathChain(\.next).then(\.x))`
    case chainX(node: Int)
    /// `node.observe(KeyPathChain(\.next).then(\.x), observer: watcher) { watcher, node, x in … }`: a
    /// chain with an observer, which the runner keeps alive.
    case chainXObserver(node: Int)
    /// `node.observe(KeyPathChain(\.next).then(\.next).then(\.y))`
    case chainNextNextY(node: Int)
    /// `node.observe(path: "next.next.z")`
    case stringPath(node: Int)
    /// `node.observe(\.next?.x)` (tracked)
    case trackedX(node: Int)
    /// `node.observeChanges(\.next?.y)` (tracked, with the value last delivered as `old`)
    case trackedChanges(node: Int)
    /// `node.observe { $0.x > 1 ? $0.y : ($0.next?.z ?? -1) }` (a tracking closure that branches)
    case closure(node: Int)
    /// `hub.observe(KeyPathChain(\.node).then(\.next).then(\.x))`
    case hubChain(hub: Int)
    // Paths and computed.
    /// `node.observe(KeyPathChain(\.next).then(\.t))`: a chain ending in a computed property.
    case chainT(node: Int)
    /// `node.observe(\.next?.s)`
    case trackedS(node: Int)
    /// `node.observe { $0.u + ($0.next?.s ?? 0) }`
    case closureComputed(node: Int)
    /// `hub.observe(\.node?.t)`
    case hubTracked(hub: Int)
    // Value tokens.
    /// `node.observeValue({ $0.x + $0.y >= 3 ? 1 : 0 })`
    case value(node: Int)
    /// `node.observeValue({ $0.t % 2 })`
    case valueComputed(node: Int)
    // Collections.
    /// `node.observe(\.items.count)` (tracked, nested)
    case count(node: Int)
    /// `node.items.observeMutations { … }` (rooted at the array)
    case mutations(node: Int)
    /// `node.dict.observe(key:)` (rooted at the dictionary)
    case dictKey(node: Int, key: Int)
    /// `node.tags.observe(member:)` (rooted at the set)
    case member(node: Int, member: Int)
    /// `node.observe(\.cc)`: a computed property over the collections.
    case computedCollections(node: Int)
    // Bindings and pipelines.
    /// `source.pipeline(of: \.x)[.map { … }].onApply { … }.bind(to: destination, \.z)`
    case bind(source: Int, BindSource, destination: Int, mapped: Bool)
    /// `source.pipeline(of: \.t)[.map { … }].onApply { … }.bind(to: hub, \.w)`
    case bindToHub(source: Int, BindSource, hub: Int, mapped: Bool)
    /// `source.pipeline(of: \.y)[.map { … }].post { … }`
    case post(source: Int, BindSource, mapped: Bool)
    /// `hub.pipeline(of: KeyPathChain(\.node).then(\.x)).map { $0 ?? 0 }.onApply { … }.bind(to: destination, \.z)`
    case bindFromHub(hub: Int, destination: Int)
    /// `ValuePipeline.combineLatest(first.pipeline(of: \.x), second.pipeline(of: \.y)) { ($0 + 2 * $1) % 5 }`
    /// `.onApply { … }.bind(to: destination, \.z)`
    case combine(first: Int, second: Int, destination: Int)
    // Callbacks that change things.
    /// `node.observe(\.x) { log($0.x); <action> }`: a property token whose callback then sets a
    /// property, cuts a reference, invalidates or drops a token, or releases an object.
    case actor(node: Int, NodeField, action: CallbackAction)

    /// The binding map: small, not injective, non-negative.
    static func map(_ value: Int) -> Int { (value * 2 + 1) % 5 }
}

/// How a token is made.
struct TokenOptions: Equatable, Sendable {
    /// `.initial` (for pipelines: the default `.initial`, else `options: []`).
    var initial = false
    /// `.immediate`: the callback runs inside the setter, on each change (rule 7).
    var immediate = false
    /// 0: `modelQueue`; 1: `modelOtherQueue`.
    var queue = 0

    /// The `ObservationOptions` spelled out.
    func source(pipeline: Bool) -> String {
        var names: [String] = []
        if initial { names.append(".initial") }
        if immediate { names.append(".immediate") }
        if pipeline {
            return initial && !immediate ? "" : "[" + names.joined(separator: ", ") + "]"
        }
        return names.count == 1 ? names[0] : names.isEmpty ? "" : "[" + names.joined(separator: ", ") + "]"
    }
}

/// One operation of a program.
enum ModelOp: Equatable, Sendable {
    case newNode(Int)
    case newHub(Int)
    /// The program lets go of its reference (other objects may still hold the object).
    case releaseNode(Int)
    case releaseHub(Int)
    case set(node: Int, NodeField, Int)
    case setNext(node: Int, to: Int?)
    case setW(hub: Int, Int)
    case setHubNode(hub: Int, to: Int?)
    case append(node: Int, Int)
    /// Removes the first element if there is one.
    case removeFirst(node: Int)
    /// `items[index % count] = value` if there is an element.
    case replace(node: Int, index: Int, Int)
    case setKey(node: Int, key: Int, Int)
    case removeKey(node: Int, key: Int)
    case insertMember(node: Int, Int)
    case removeMember(node: Int, Int)
    /// `node.invalidate(\.t)`: the value recomputes equal, so nobody may hear of it.
    case invalidateComputed(node: Int, NodeComputedField)
    case invalidateHubComputed(hub: Int)
    case observe(token: Int, TokenSpec, TokenOptions)
    case invalidateToken(Int)
    case dropToken(Int)
    /// Only in a parallel phase: makes `n.observe(KeyPathChain(\.next).then(\.x))` on that
    /// thread, while other threads may set `n.next` and the `x` it reaches, and ends it there
    /// (`invalidate()` or a drop). It never runs: the phase has no drain, and a set on another
    /// thread may queue it, but a token that ended is not delivered.
    case churnChain(node: Int, invalidate: Bool)
    /// `drain()` of queue 0 (`modelQueue`) or 1 (`modelOtherQueue`).
    case drain(Int)
    /// Each inner list runs on a thread of its own, all started together; then they are joined.
    /// Each property (and collection) is set by one thread only.
    case parallel([[ModelOp]])
}

// MARK: - Printing

extension TokenSpec {
    /// Swift-like source of the observation, `options` already rendered.
    func source(options: String) -> String {
        let o = options.isEmpty ? "" : ", options: \(options)"
        switch self {
        case .property(let n, let field): return "n\(n).observe(\\.\(field)\(o)) { log($0.\(field)) }"
        case .propertyList(let n): return "n\(n).observe([\\.x, \\.z]\(o)) { log($0.x, $0.z) }"
        case .whichOf(let n):
            return "n\(n).observe(whichOf: [\\.x, \\.y, \\.z]\(o)) { log($0.x, $0.y, $0.z, bits($1)) }"
        case .hubW(let h): return "h\(h).observe(\\.w\(o)) { log($0.w) }"
        case .hubNode(let h): return "h\(h).observe(\\.node\(o)) { log($0.node?.label) }"
        case .computed(let n, let field): return "n\(n).observe(\\.\(field)\(o)) { log($0.\(field)) }"
        case .mixedList(let n): return "n\(n).observe([\\.y, \\.u]\(o)) { log($0.y, $0.u) }"
        case .hubComputed(let h): return "h\(h).observe(\\.hw\(o)) { log($0.hw) }"
        case .chainX(let n):
            return "n\(n).observe(KeyPathChain(\\.next).then(\\.x)\(o)) { log($1) }"
        case .chainXObserver(let n):
            return "n\(n).observe(KeyPathChain(\\.next).then(\\.x), observer: watcher\(o)) { log($2) }"
        case .chainNextNextY(let n):
            return "n\(n).observe(KeyPathChain(\\.next).then(\\.next).then(\\.y)\(o)) { log($1) }"
        case .stringPath(let n): return "n\(n).observe(path: \"next.next.z\"\(o)) { log($0.next?.next?.z) }"
        case .trackedX(let n): return "n\(n).observe(\\.next?.x\(o)) { log($0.next?.x) }"
        case .trackedChanges(let n): return "n\(n).observeChanges(\\.next?.y\(o)) { log($1.old, $1.new) }"
        case .closure(let n):
            return "n\(n).observe\(o.isEmpty ? "" : "(\(options))") { log($0.x > 1 ? $0.y : ($0.next?.z ?? -1)) }"
        case .hubChain(let h):
            return "h\(h).observe(KeyPathChain(\\.node).then(\\.next).then(\\.x)\(o)) { log($1) }"
        case .chainT(let n): return "n\(n).observe(KeyPathChain(\\.next).then(\\.t)\(o)) { log($1) }"
        case .trackedS(let n): return "n\(n).observe(\\.next?.s\(o)) { log($0.next?.s) }"
        case .closureComputed(let n):
            return "n\(n).observe\(o.isEmpty ? "" : "(\(options))") { log($0.u + ($0.next?.s ?? 0)) }"
        case .hubTracked(let h): return "h\(h).observe(\\.node?.t\(o)) { log($0.node?.t) }"
        case .value(let n): return "n\(n).observeValue({ $0.x + $0.y >= 3 ? 1 : 0 }\(o)) { log($1) }"
        case .valueComputed(let n): return "n\(n).observeValue({ $0.t % 2 }\(o)) { log($1) }"
        case .count(let n): return "n\(n).observe(\\.items.count\(o)) { log($0.items.count) }"
        case .mutations(let n):
            return
                "n\(n).items.observeMutations(\(options.isEmpty ? "" : "options: \(options)")) { log($0.count, sum($0)) }"
        case .dictKey(let n, let key): return "n\(n).dict.observe(key: \(key)\(o)) { log($0[\(key)]) }"
        case .member(let n, let member):
            return "n\(n).tags.observe(member: \(member)\(o)) { log($0.contains(\(member))) }"
        case .computedCollections(let n): return "n\(n).observe(\\.cc\(o)) { log($0.cc) }"
        case .bind(let source, let field, let destination, let mapped):
            return
                "n\(source).pipeline(of: \\.\(field))\(mapped ? ".map(f)" : "").onApply(log).bind(to: n\(destination), \\.z\(o))"
        case .bindToHub(let source, let field, let hub, let mapped):
            return
                "n\(source).pipeline(of: \\.\(field))\(mapped ? ".map(f)" : "").onApply(log).bind(to: h\(hub), \\.w\(o))"
        case .post(let source, let field, let mapped):
            return
                "n\(source).pipeline(of: \\.\(field))\(mapped ? ".map(f)" : "").post(\(options.isEmpty ? "" : "options: \(options)")) { log($0) }"
        case .bindFromHub(let hub, let destination):
            return
                "h\(hub).pipeline(of: KeyPathChain(\\.node).then(\\.x)).map { $0 ?? 0 }.onApply(log).bind(to: n\(destination), \\.z\(o))"
        case .combine(let first, let second, let destination):
            return
                "ValuePipeline.combineLatest(n\(first).pipeline(of: \\.x), n\(second).pipeline(of: \\.y)) { ($0 + 2 * $1) % 5 }.onApply(log).bind(to: n\(destination), \\.z\(o))"
        case .actor(let n, let field, let action):
            return "n\(n).observe(\\.\(field)\(o)) { log($0.\(field)); \(action.source) }"
        }
    }

    /// The case's name, as failures name the kind of token involved.
    var kindName: String {
        let text = String(describing: self)
        return String(text.prefix { $0 != "(" })
    }

    /// The kinds made with `.immediate` (feature group `immediate`).
    var canBeImmediate: Bool {
        switch self {
        case .property, .propertyList, .hubW, .hubNode, .computed, .mixedList, .hubComputed, .chainX, .chainXObserver,
            .trackedX,
            .closure, .trackedS, .closureComputed, .bind, .bindToHub, .post:
            true
        default: false
        }
    }

    /// Whether the token is a binding or posting (options default to `.initial`).
    var isPipeline: Bool {
        switch self {
        case .bind, .bindToHub, .post, .bindFromHub, .combine: true
        default: false
        }
    }
}

extension ModelOp {
    /// The operation as a line (or lines) of Swift-like code.
    func lines(indent: String = "") -> [String] {
        func one(_ text: String) -> [String] { [indent + text] }
        switch self {
        case .newNode(let n): return one("let n\(n) = MNode()")
        case .newHub(let h): return one("let h\(h) = MHub()")
        case .releaseNode(let n): return one("n\(n) = nil   // the program lets go of it")
        case .releaseHub(let h): return one("h\(h) = nil   // the program lets go of it")
        case .set(let n, let field, let value): return one("n\(n).\(field) = \(value)")
        case .setNext(let n, let to): return one("n\(n).next = \(to.map { "n\($0)" } ?? "nil")")
        case .setW(let h, let value): return one("h\(h).w = \(value)")
        case .setHubNode(let h, let to): return one("h\(h).node = \(to.map { "n\($0)" } ?? "nil")")
        case .append(let n, let value): return one("n\(n).items.append(\(value))")
        case .removeFirst(let n): return one("if !n\(n).items.isEmpty { n\(n).items.removeFirst() }")
        case .replace(let n, let index, let value):
            return one("if !n\(n).items.isEmpty { n\(n).items[\(index) % n\(n).items.count] = \(value) }")
        case .setKey(let n, let key, let value): return one("n\(n).dict[\(key)] = \(value)")
        case .removeKey(let n, let key): return one("n\(n).dict.removeValue(forKey: \(key))")
        case .insertMember(let n, let member): return one("n\(n).tags.insert(\(member))")
        case .removeMember(let n, let member): return one("n\(n).tags.remove(\(member))")
        case .invalidateComputed(let n, let field): return one("n\(n).invalidate(\\.\(field))")
        case .invalidateHubComputed(let h): return one("h\(h).invalidate(\\.hw)")
        case .observe(let k, let spec, let options):
            let source = spec.source(options: options.source(pipeline: spec.isPipeline))
            return one("let k\(k) = " + source + (options.queue == 0 ? "" : "   // on otherQueue"))
        case .invalidateToken(let k): return one("k\(k).invalidate()")
        case .dropToken(let k): return one("k\(k) = nil")
        case .churnChain(let n, let invalidate):
            return one(
                "do { let k = n\(n).observe(KeyPathChain(\\.next).then(\\.x)) { never() }; "
                    + (invalidate ? "k.invalidate() }" : "_ = k }   // dropped"))
        case .drain(let queue): return one(queue == 0 ? "modelQueue.drain()" : "otherQueue.drain()")
        case .parallel(let threads):
            var lines = [indent + "parallel {   // one thread per block, started together, then joined"]
            for (index, ops) in threads.enumerated() {
                lines.append(indent + "    thread \(index) {")
                for op in ops { lines += op.lines(indent: indent + "        ") }
                lines.append(indent + "    }")
            }
            lines.append(indent + "}")
            return lines
        }
    }

}

/// A whole program, printable as numbered Swift-like lines.
struct ModelProgram: Sendable {
    var features: ModelFeatures
    var ops: [ModelOp]

    /// The program's lines, numbered by operation.
    func listing() -> String {
        var lines: [String] = []
        for (index, op) in ops.enumerated() {
            let opLines = op.lines()
            let number = String(index).leftPadded(to: 3)
            lines.append("\(number)  " + opLines[0])
            for line in opLines.dropFirst() { lines.append("     " + line) }
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

// MARK: - Generation

/// SplitMix64: small, fast, good enough to pick operations.
struct ModelRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }

    /// The seed of program `index` of a run with `base`.
    static func programSeed(base: UInt64, index: Int) -> UInt64 {
        var random = ModelRandom(seed: base ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        return random.next()
    }
}

/// Writes random programs for a feature set. It keeps its own idea of which labels exist,
/// so most operations are executable (the rest are skipped at run time).
struct ModelProgramGenerator {
    let features: ModelFeatures
    var random: ModelRandom
    private var nodes: [Int] = []
    private var hubs: [Int] = []
    private var tokens: [Int] = []
    private var nextNode = 0
    private var nextHub = 0
    private var nextToken = 0
    /// The bindings that write a model made so far, by the property they write.
    private var writers: [Dependency: [ClockWriter]] = [:]

    init(seed: UInt64, features: ModelFeatures) {
        self.features = features
        random = ModelRandom(seed: seed)
    }

    static func program(seed: UInt64, features: ModelFeatures) -> ModelProgram {
        var generator = ModelProgramGenerator(seed: seed, features: features)
        return ModelProgram(features: features, ops: generator.generate())
    }

    mutating func generate() -> [ModelOp] {
        var ops: [ModelOp] = []
        for _ in 0..<(2 + random.below(3)) { ops.append(newNode()) }
        for _ in 0..<random.below(3) { ops.append(newHub()) }
        if features.contains(.threads) {
            // Set-up, a parallel phase, a drain; twice.
            for _ in 0..<2 {
                for _ in 0..<(8 + random.below(16)) { ops.append(sequentialOp()) }
                ops.append(parallelPhase())
                ops.append(.drain(0))
                if features.contains(.queues) { ops.append(.drain(1)) }
            }
        } else {
            for _ in 0..<ModelBasedConfig.operationsPerProgram { ops.append(sequentialOp()) }
        }
        ops.append(.drain(0))
        if features.contains(.queues) { ops.append(.drain(1)) }
        return ops
    }

    private mutating func newNode() -> ModelOp {
        nodes.append(nextNode)
        nextNode += 1
        return .newNode(nextNode - 1)
    }

    private mutating func newHub() -> ModelOp {
        hubs.append(nextHub)
        nextHub += 1
        return .newHub(nextHub - 1)
    }

    private mutating func anyNode() -> Int { nodes.isEmpty ? nextNode : random.pick(nodes) }
    private mutating func anyHub() -> Int { hubs.isEmpty ? nextHub : random.pick(hubs) }
    private mutating func value() -> Int { random.below(4) }

    private mutating func sequentialOp() -> ModelOp {
        let roll = random.below(100)
        switch roll {
        case 0..<30: return setInt()
        case 30..<38: return setReference()
        case 38..<48:
            return features.contains(.collections) ? collectionOp() : setInt()
        case 48..<51: return random.chance(75) || hubs.count > 2 ? newNode() : newHub()
        case 51..<55:
            if random.chance(80), !nodes.isEmpty {
                let n = random.pick(nodes)
                nodes.removeAll { $0 == n }
                return .releaseNode(n)
            }
            guard !hubs.isEmpty else { return setInt() }
            let h = random.pick(hubs)
            hubs.removeAll { $0 == h }
            return .releaseHub(h)
        case 55..<77: return observe()
        case 77..<81:
            guard !tokens.isEmpty else { return observe() }
            let k = random.pick(tokens)
            tokens.removeAll { $0 == k }
            return random.chance(50) ? .invalidateToken(k) : .dropToken(k)
        case 81..<84:
            guard features.contains(.computed) else { return setInt() }
            if random.chance(80) || hubs.isEmpty {
                let fields =
                    features.contains(.collections) ? NodeComputedField.allCases : NodeComputedField.withoutCollections
                return .invalidateComputed(node: anyNode(), random.pick(fields))
            }
            return .invalidateHubComputed(hub: anyHub())
        default: return .drain(features.contains(.queues) && random.chance(40) ? 1 : 0)
        }
    }

    private mutating func setInt() -> ModelOp {
        if !hubs.isEmpty, random.chance(15) { return .setW(hub: anyHub(), value()) }
        return .set(node: anyNode(), random.pick(NodeField.allCases), value())
    }

    private mutating func setReference() -> ModelOp {
        let target: Int? = random.chance(25) ? nil : anyNode()
        if !hubs.isEmpty, random.chance(30) { return .setHubNode(hub: anyHub(), to: target) }
        return .setNext(node: anyNode(), to: target)
    }

    private mutating func collectionOp() -> ModelOp {
        let n = anyNode()
        switch random.below(7) {
        case 0, 1: return .append(node: n, value())
        case 2: return .removeFirst(node: n)
        case 3: return .replace(node: n, index: random.below(4), value())
        case 4:
            return random.chance(70)
                ? .setKey(node: n, key: random.below(3), value()) : .removeKey(node: n, key: random.below(3))
        default:
            return random.chance(60) ? .insertMember(node: n, random.below(4)) : .removeMember(node: n, random.below(4))
        }
    }

    private mutating func observe() -> ModelOp {
        var choices: [TokenSpec] = []
        let n = anyNode()
        let field = random.pick(NodeField.allCases)
        choices += [.property(node: n, field), .property(node: n, field), .propertyList(node: n), .whichOf(node: n)]
        if !hubs.isEmpty {
            let h = anyHub()
            choices += [.hubW(hub: h), .hubNode(hub: h)]
            if features.contains(.computed) { choices.append(.hubComputed(hub: h)) }
            if features.contains(.paths) { choices.append(.hubChain(hub: h)) }
            if features.isSuperset(of: [.paths, .computed]) { choices.append(.hubTracked(hub: h)) }
            if features.contains(.bindings) {
                let source: [BindSource] = features.contains(.computed) ? BindSource.allCases : [.x, .y, .z]
                choices.append(.bindToHub(source: anyNode(), random.pick(source), hub: h, mapped: random.chance(50)))
                if features.contains(.paths) { choices.append(.bindFromHub(hub: h, destination: anyNode())) }
            }
        }
        if features.contains(.computed) {
            let fields = NodeComputedField.withoutCollections
            choices += [
                .computed(node: n, random.pick(fields)), .computed(node: n, random.pick(fields)), .mixedList(node: n),
            ]
        }
        if features.contains(.paths) {
            choices += [
                .chainX(node: n), .chainXObserver(node: n), .chainNextNextY(node: n), .stringPath(node: n),
                .trackedX(node: n),
                .trackedChanges(node: n), .closure(node: n),
            ]
            if features.contains(.computed) {
                choices += [.chainT(node: n), .trackedS(node: n), .closureComputed(node: n)]
            }
        }
        if features.contains(.valueTokens) {
            choices.append(.value(node: n))
            if features.contains(.computed) { choices.append(.valueComputed(node: n)) }
        }
        if features.contains(.collections) {
            choices += [
                .count(node: n), .mutations(node: n), .dictKey(node: n, key: random.below(3)),
                .member(node: n, member: random.below(4)),
            ]
            if features.contains(.computed) { choices.append(.computedCollections(node: n)) }
        }
        if features.contains(.bindings) {
            // Acyclic by construction: `z` is written only from x, y, s (which never read z),
            // a hub's `w` only from nodes (which never read hubs).
            let toZ: [BindSource] = features.contains(.computed) ? [.x, .y, .s] : [.x, .y]
            let any: [BindSource] = features.contains(.computed) ? BindSource.allCases : [.x, .y, .z]
            choices += [
                .bind(source: n, random.pick(toZ), destination: anyNode(), mapped: random.chance(50)),
                .bind(source: n, random.pick(toZ), destination: anyNode(), mapped: random.chance(50)),
                .post(source: n, random.pick(any), mapped: random.chance(50)),
            ]
        }
        if features.contains(.combineLatest) {
            choices += [
                .combine(first: n, second: anyNode(), destination: anyNode()),
                .combine(first: n, second: n, destination: anyNode()),
            ]
        }
        if features.contains(.reentrancy) {
            choices += [
                .actor(node: n, field, action: callbackAction()), .actor(node: n, field, action: callbackAction()),
                .actor(node: n, random.pick(NodeField.allCases), action: callbackAction()),
            ]
        }
        var spec = random.pick(choices)
        // Cases the library does not handle as documented yet, and that the model can't
        // follow (see `ModelBasedConfig`): pick again.
        for _ in 0..<8 where conflictsWithAWriter(spec) { spec = random.pick(choices) }
        if conflictsWithAWriter(spec) { spec = .property(node: n, field) }
        let k = nextToken
        nextToken += 1
        tokens.append(k)
        var options = TokenOptions()
        options.initial = spec.isPipeline ? random.chance(70) : random.chance(35)
        options.queue = features.contains(.queues) && random.chance(35) ? 1 : 0
        // Not in threaded programs: an immediate callback would run on a setting thread,
        // reading properties other threads are setting.
        if features.contains(.immediate), !features.contains(.threads), spec.canBeImmediate {
            options.immediate = random.chance(40)
            if options.immediate, conflictsWithAWriter(spec, immediate: true) { options.immediate = false }
        }
        if let writer = ClockWriter(spec, immediate: options.immediate),
            let destination = ReferenceModel.clockShape(of: spec)?.destination
        {
            writers[destination, default: []].append(writer)
        }
        return .observe(token: k, spec, options)
    }

    private mutating func callbackAction() -> CallbackAction {
        switch random.below(10) {
        case 0..<4: return .set(node: anyNode(), random.pick(NodeField.allCases), value())
        case 4: return .setNext(node: anyNode(), to: random.chance(40) ? nil : anyNode())
        case 5, 6: return .invalidate(token: tokens.isEmpty ? nextToken : random.pick(tokens + [nextToken]))
        case 7: return .drop(token: tokens.isEmpty ? nextToken : random.pick(tokens + [nextToken]))
        case 8:
            // A token made from inside the drain gets a label of its own.
            let k = nextToken
            nextToken += 1
            tokens.append(k)
            return .observe(token: k, node: anyNode(), random.pick(NodeField.allCases), initial: random.chance(35))
        default: return .release(node: anyNode())
        }
    }

    /// Whether `spec`, a binding that writes a model, meets another that writes the same
    /// property in a way the library does not handle as documented yet (see
    /// ``ModelBasedConfig/aChangeByTwoRoutesNeverStopsADebugBuild`` and
    /// ``ModelBasedConfig/pathSourcesNumberASetAsItsPropertyDoes``).
    private func conflictsWithAWriter(_ spec: TokenSpec, immediate: Bool = false) -> Bool {
        guard let writer = ClockWriter(spec, immediate: immediate),
            let destination = ReferenceModel.clockShape(of: spec)?.destination
        else { return false }
        // A path source numbers a set apart: a set that reaches a destination by a route
        // through a path binding and by another route is two changes there. Off, path bindings
        // write properties no binding reads, and no binding reads what one writes.
        if !ModelBasedConfig.pathSourcesNumberASetAsItsPropertyDoes {
            let everyWriter = writers.values.joined()
            if writer.isPath, everyWriter.contains(where: { $0.reads.contains(where: Self.read(destination).overlaps) })
            {
                return true
            }
            let pathDestinations = writers.filter { $0.value.contains(where: \.isPath) }.keys.map(Self.read)
            if writer.reads.contains(where: { read in pathDestinations.contains(where: read.overlaps) }) { return true }
        }
        return (writers[destination] ?? []).contains { other in
            // Two `.immediate` bindings of different computed values of one set: their order
            // decides (see `ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem`).
            if !ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem, writer.isImmediate, other.isImmediate,
                writer.isComputed, other.isComputed, writer.source != other.source,
                writer.reads.contains(where: { read in other.reads.contains(where: read.overlaps) })
            {
                return true
            }
            guard writer.clockReadsOverlap(other) else { return false }
            if !ModelBasedConfig.aChangeByTwoRoutesNeverStopsADebugBuild, writer.value != other.value { return true }
            if !ModelBasedConfig.pathSourcesNumberASetAsItsPropertyDoes, writer.isPath || other.isPath { return true }
            return false
        }
    }

    /// The read of a property a binding writes (always a stored one: `clockShape(of:)`).
    private static func read(_ destination: Dependency) -> ClockWriter.Read {
        switch destination {
        case .stored(.node(let n), let key): .node(n, key)
        case .stored(.hub(let h), let key): .hub(h, key)
        case .computed(.node(let n), _): .node(n, .z)
        case .computed(.hub(let h), _): .hub(h, .w)
        }
    }

    /// 2–4 threads; each owns a share of the properties and collections of the objects that
    /// exist now, and sets only those. A property a binding writes is written by bindings only;
    /// and the properties whose changes the binding rules compare — the sources of all the
    /// bindings that write one property — belong to one thread (the order of changes made on
    /// different threads at once is not known).
    private mutating func parallelPhase() -> ModelOp {
        let threadCount = 2 + random.below(3)
        enum Slot: Hashable {
            case int(Int, NodeField), next(Int), items(Int), dict(Int), tags(Int), w(Int), hubNode(Int)
        }
        func slots(_ read: ClockWriter.Read) -> [Slot] {
            func slot(_ n: Int, _ key: StoredKey) -> Slot? {
                switch key {
                case .x: .int(n, .x)
                case .y: .int(n, .y)
                case .z: .int(n, .z)
                case .next: .next(n)
                default: nil
                }
            }
            switch read {
            case .node(let n, let key): return slot(n, key).map { [$0] } ?? []
            case .anyNode(let key): return nodes.compactMap { slot($0, key) }
            case .hub(let h, .node): return [.hubNode(h)]
            case .hub(let h, _): return [.w(h)]
            }
        }
        var written: Set<Slot> = []
        var component: [Slot: Slot] = [:]
        func root(_ slot: Slot) -> Slot {
            var slot = slot
            while let parent = component[slot], parent != slot { slot = parent }
            return slot
        }
        for (destination, writersOfIt) in writers {
            var destinationSlot: Slot?
            switch destination {
            case .stored(.node(let n), .z): destinationSlot = .int(n, .z)
            case .stored(.hub(let h), .w): destinationSlot = .w(h)
            default: break
            }
            if let destinationSlot { written.insert(destinationSlot) }
            // With the property written: a change that reaches it goes on to what reads it, so
            // the sources of a chain of bindings are compared where the chain's changes meet.
            let reads = writersOfIt.flatMap { $0.reads.flatMap(slots) } + (destinationSlot.map { [$0] } ?? [])
            guard let first = reads.first else { continue }
            for slot in reads { component[root(slot)] = root(first) }
        }
        var slots: [Slot] = []
        for n in nodes {
            for field in NodeField.allCases { slots.append(.int(n, field)) }
            slots.append(.next(n))
            if features.contains(.collections) { slots += [.items(n), .dict(n), .tags(n)] }
        }
        for h in hubs { slots += [.w(h), .hubNode(h)] }
        slots.removeAll { written.contains($0) }
        var owned: [[Slot]] = Array(repeating: [], count: threadCount)
        var owners: [Slot: Int] = [:]
        for slot in slots {
            let owner = owners[root(slot)] ?? random.below(threadCount)
            owners[root(slot)] = owner
            owned[owner].append(slot)
        }
        var threads: [[ModelOp]] = []
        for mine in owned {
            var ops: [ModelOp] = []
            guard !mine.isEmpty else {
                threads.append(ops)
                continue
            }
            for _ in 0..<(4 + random.below(24)) {
                // Chain tokens made and ended while other threads set what the chain reads.
                if features.contains(.paths), random.chance(8) {
                    ops.append(.churnChain(node: anyNode(), invalidate: random.chance(50)))
                }
                switch random.pick(mine) {
                case .int(let n, let field): ops.append(.set(node: n, field, value()))
                case .next(let n): ops.append(.setNext(node: n, to: random.chance(25) ? nil : anyNode()))
                case .items(let n):
                    switch random.below(4) {
                    case 0, 1: ops.append(.append(node: n, value()))
                    case 2: ops.append(.removeFirst(node: n))
                    default: ops.append(.replace(node: n, index: random.below(4), value()))
                    }
                case .dict(let n):
                    ops.append(
                        random.chance(70)
                            ? .setKey(node: n, key: random.below(3), value())
                            : .removeKey(node: n, key: random.below(3)))
                case .tags(let n):
                    ops.append(
                        random.chance(60)
                            ? .insertMember(node: n, random.below(4)) : .removeMember(node: n, random.below(4)))
                case .w(let h): ops.append(.setW(hub: h, value()))
                case .hubNode(let h): ops.append(.setHubNode(hub: h, to: random.chance(25) ? nil : anyNode()))
                }
            }
            threads.append(ops)
        }
        return .parallel(threads)
    }
}

/// What a binding that writes a model reads, for the generator: which of them may carry the
/// same change, and which sets a parallel phase must make on one thread.
struct ClockWriter {
    enum Read: Hashable {
        case node(Int, StoredKey)
        /// The property of whichever node the binding reaches (through `next` or a hub).
        case anyNode(StoredKey)
        case hub(Int, StoredKey)

        func overlaps(_ other: Read) -> Bool {
            switch (self, other) {
            case (.anyNode(let a), .anyNode(let b)), (.anyNode(let a), .node(_, let b)),
                (.node(_, let a), .anyNode(let b)):
                a == b
            default: self == other
            }
        }
    }

    /// The stored properties it reads (a computed source's inputs, a path's steps).
    let reads: [Read]
    /// What it computes from them: two writers with the same value write the same value.
    let value: String
    /// What it reads, before its operators.
    let source: String
    let isPath: Bool
    let isComputed: Bool
    let isImmediate: Bool

    init?(_ spec: TokenSpec, immediate: Bool = false) {
        isImmediate = immediate
        func reads(_ n: Int, _ field: BindSource) -> [Read] {
            switch field {
            case .x: [.node(n, .x)]
            case .y: [.node(n, .y)]
            case .z: [.node(n, .z)]
            case .s: [.node(n, .x), .node(n, .y)]
            case .t, .u: [.node(n, .x), .node(n, .y), .node(n, .z)]
            case .nt: [.node(n, .next), .node(n, .x), .anyNode(.x), .anyNode(.y), .anyNode(.z)]
            }
        }
        switch spec {
        case .bind(let n, let field, _, let mapped), .bindToHub(let n, let field, _, let mapped):
            self.reads = reads(n, field)
            source = "n\(n).\(field)"
            value = source + (mapped ? ".map(f)" : "")
            isPath = false
            isComputed = field.isComputed
        case .bindFromHub(let h, _):
            self.reads = [.hub(h, .node), .anyNode(.x)]
            value = "h\(h).node.x"
            source = value
            isPath = true
            isComputed = false
        case .combine(let first, let second, _):
            self.reads = [.node(first, .x), .node(second, .y)]
            value = "combine(n\(first).x, n\(second).y)"
            source = value
            isPath = false
            isComputed = false
        default:
            return nil
        }
    }

    /// Whether the two may carry one change: they read a common property, and each numbers
    /// the changes it reads by the set that made them (today a computed source is numbered
    /// when it is delivered: see ``ModelBasedConfig/computedSourcesCountFromTheSetThatChangedThem``).
    func clockReadsOverlap(_ other: ClockWriter) -> Bool {
        let numbersBySet = ModelBasedConfig.computedSourcesCountFromTheSetThatChangedThem
        guard numbersBySet || (!isComputed && !other.isComputed) else { return false }
        return reads.contains { read in other.reads.contains(where: read.overlaps) }
    }
}
