import Foundation

// Configuration of the model-based random test: switches, budgets, and the environment
// variables that replay, lengthen or focus a run (see `ModelBasedTests.swift`).

/// The switches and budgets of the model-based random test.
enum ModelBasedConfig {
    /// Whether the propagation rework (computed values settle before anyone is told, tokens
    /// compare with what they last saw, `drain()` counts only user callbacks) has landed.
    ///
    /// It has: every feature group runs. Set it to `false` only to run a library from before the
    /// rework; the groups in ``ModelFeatures/gatedUntilPropagationLands`` are off then.
    static let propagationRulesLanded = true

    // MARK: Binding rules the library does not follow yet
    //
    // Each switch names one way today's library departs from docs/Bindings.md ("Cycles and
    // changes that meet"), found by this test, with the shortest program that shows it. Off,
    // the model expects exactly what the library does today in that case (or, where the library
    // stops a debug build, the programs avoid the case), so every other rule is still checked
    // there; **turn a switch on with the fix**, and the model then checks the documented rule.

    /// "Set the source and then the destination in one tick, and the destination keeps its own,
    /// later, change": for a binding from a `@Computed` value, the change is the set of an input
    /// that changed the value. Today the binding numbers its change when it is delivered, so it
    /// overwrites a destination changed after the input, and two bindings of one computed value
    /// to one destination both push:
    ///
    /// ```
    /// let k0 = n0.pipeline(of: \.s).onApply(log).bind(to: n1, \.z, options: [])
    /// n0.x = 1
    /// n1.z = 3
    /// modelQueue.drain()   // n1.z == 1, returns 1; the docs: n1.z == 3, returns 0
    /// ```
    static let computedSourcesCountFromTheSetThatChangedThem = false

    /// "A source set several times before its bindings deliver counts from its first set", for
    /// each binding alone. Today the bindings that read (or write) a property share one record
    /// of its change, which is numbered again at a later set whenever one of them is not
    /// waiting for its turn — a binding that writes the property, an `.immediate` one, one made
    /// since, one on another queue; a binding waiting for its turn then carries that later
    /// number, and overwrites a change made between the two sets:
    ///
    /// ```
    /// let k0 = n0.pipeline(of: \.x).onApply(log).bind(to: n1, \.z, options: [])
    /// n0.x = 1
    /// n1.z = 3
    /// let k1 = n0.pipeline(of: \.x).onApply(log).bind(to: h0, \.w, options: .immediate)
    /// n0.x = 2
    /// modelQueue.drain()   // n1.z == 2; without k1, n1.z == 3
    /// ```
    static let eachBindingCountsItsSourceFromItsFirstSet = false

    /// "Where two changes meet, the later one wins" for a destination set before the binding
    /// that writes it was made. Today a set is numbered only when a binding reads or writes the
    /// property at that moment; a binding made afterwards finds the destination holding no
    /// change, and a change from before the set that reaches it through other bindings in the
    /// next drain overwrites it:
    ///
    /// ```
    /// let k1 = n2.pipeline(of: \.x).map(f).onApply(log).bind(to: n0, \.z, options: [])
    /// n2.x = 3
    /// h0.w = 3
    /// let k2 = n0.pipeline(of: \.z).map(f).onApply(log).bind(to: h0, \.w, options: [])
    /// modelQueue.drain()   // by the rule h0.w == 3; today h0.w == 0, f(f(3)), carried on by k2
    /// ```
    static let destinationsKnowSetsMadeBeforeTheirBindings = false

    /// "A push that changes the source of another binding of the same queue pushes that binding
    /// right after, in the same drain — also when it already ran in this drain": also when that
    /// source is a `@Computed` value the push changed. Today such a binding is made pending, and
    /// one that ran in this drain already waits for the next:
    ///
    /// ```
    /// let k0 = n1.pipeline(of: \.t).onApply(log).bind(to: h0, \.w, options: [])
    /// let k1 = n0.pipeline(of: \.x).onApply(log).bind(to: n1, \.z, options: [])
    /// n1.x = 1
    /// n0.x = 2
    /// modelQueue.drain()   // returns 2 (k0 pushes t == 1, k1 sets n1.z = 2)
    /// modelQueue.drain()   // returns 1 (k0 pushes t == 3); the docs: 3, then 0
    /// ```
    static let pushesReachComputedSourcesInTheSameDrain = false

    /// A change that reaches one property by two routes with different values (two bindings
    /// of one source, one with a `map`) is written twice, as the docs say; a binding that reads
    /// that property pushed the first value and then meets the same change again, and writes
    /// nothing ("a change crosses each binding once"). The library follows this rule, and
    /// reports a cycle that can't settle only for a binding on a cycle
    /// (`aChangeThatReachesAPropertyByTwoRoutesCrossesTheBindingAfterItOnce`). The model does
    /// not follow it yet where the binding that meets the change again is `.immediate` and reads
    /// a computed value, so programs don't make two such bindings:
    ///
    /// ```
    /// let k0 = n0.pipeline(of: \.x).map(f).onApply(log).bind(to: n1, \.z, options: [])
    /// let k1 = n0.pipeline(of: \.x).onApply(log).bind(to: n1, \.z, options: [])
    /// let k2 = n1.pipeline(of: \.z).onApply(log).bind(to: h0, \.w, options: [])
    /// n0.x = 1
    /// modelQueue.drain()   // n1.z written twice, h0.w once
    /// ```
    static let aChangeByTwoRoutesNeverStopsADebugBuild = false

    /// "A binding writes nothing when its destination holds the change already — where it
    /// arrived by another route": also when one route reads the source through a path. Today a
    /// path source numbers a set apart from the bindings that read the property itself, so one
    /// set that reaches a destination through a binding of `n0.x` and one of `h0.node.x` (or two
    /// of the path) is two changes there: both push, or the second is held unseen — also when
    /// the routes meet further on (a binding reads what the path binding writes). Off, programs
    /// don't make such pairs, and a path binding writes a property no other binding reads:
    ///
    /// ```
    /// h0.node = n0
    /// let k0 = n0.pipeline(of: \.x).onApply(log).bind(to: n1, \.z, options: [])
    /// let k1 = h0.pipeline(of: KeyPathChain(\.node).then(\.x)).map { $0 ?? 0 }.onApply(log).bind(to: n1, \.z, options: [])
    /// n0.x = 2
    /// modelQueue.drain()   // returns 2, both onApply handlers run; the docs: 1
    /// ```
    static let pathSourcesNumberASetAsItsPropertyDoes = false

    /// Operations per single-threaded program (before the settling drains the runner adds).
    static let operationsPerProgram = 60

    /// Programs per feature group in a plain `swift test` run (a fixed seed: the default run is
    /// deterministic). `OBSERVATION_TOKENS_MODEL_SECONDS` replaces this count by a time budget.
    static let programsPerGroup = 100

    /// Programs per feature group in the multi-threaded mode of a plain `swift test` run.
    static let threadedProgramsPerGroup = 40

    /// The base seed of a plain `swift test` run.
    static let defaultBaseSeed: UInt64 = 0x0B5E_4A71_0E70_0C24

    // MARK: Environment

    /// `OBSERVATION_TOKENS_MODEL_SEED=<seed>` (decimal or 0x-hex): run exactly that program (in
    /// each selected test's feature group), shrink it if it fails, and print it.
    static var replaySeed: UInt64? {
        guard let text = environment("OBSERVATION_TOKENS_MODEL_SEED") else { return nil }
        return parseSeed(text)
    }

    /// `OBSERVATION_TOKENS_MODEL_SECONDS=<seconds>`: the whole model-based run takes about this
    /// long, shared equally by the enabled tests, with a random base seed (printed) unless
    /// `OBSERVATION_TOKENS_MODEL_BASE_SEED` gives one. CI's long run sets it.
    static var timeBudget: Double? {
        guard let text = environment("OBSERVATION_TOKENS_MODEL_SECONDS"), let seconds = Double(text),
            seconds > 0
        else { return nil }
        return seconds
    }

    /// `OBSERVATION_TOKENS_MODEL_BASE_SEED=<seed>`: the base seed of a run (programs are seeded
    /// from it in order).
    static var baseSeed: UInt64 {
        if let text = environment("OBSERVATION_TOKENS_MODEL_BASE_SEED"), let seed = parseSeed(text) {
            return seed
        }
        if timeBudget != nil { return UInt64.random(in: 1...UInt64.max) }
        return defaultBaseSeed
    }

    /// `OBSERVATION_TOKENS_MODEL_ALL_GROUPS=1`: run the groups gated by
    /// ``propagationRulesLanded`` too (to see today's failures without editing the switch).
    static var forcesAllGroups: Bool { environment("OBSERVATION_TOKENS_MODEL_ALL_GROUPS") == "1" }

    /// `OBSERVATION_TOKENS_MODEL_IGNORE=drainCount,missedDelivery,…` (names of
    /// `ModelFailure.Kind` cases): a diagnostic, to look past a known failure for the next one.
    /// Every run that ignores something says so.
    static let ignoredKinds: Set<ModelFailure.Kind> = {
        guard let text = environment("OBSERVATION_TOKENS_MODEL_IGNORE") else { return [] }
        let names = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        return Set(ModelFailure.Kind.allCases.filter { names.contains(String(describing: $0)) })
    }()

    /// `OBSERVATION_TOKENS_MODEL_KEEP_GOING=1`: a diagnostic run that goes on after a failure
    /// and reports (shrunk) the first failure of each kind of defect it meets.
    static var keepsGoing: Bool { environment("OBSERVATION_TOKENS_MODEL_KEEP_GOING") == "1" }

    /// Whether a test of `features` runs in this configuration.
    static func isEnabled(_ features: ModelFeatures) -> Bool {
        propagationRulesLanded || forcesAllGroups || features.isDisjoint(with: .gatedUntilPropagationLands)
    }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name]
    }

    static func parseSeed(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
        if trimmed.lowercased().hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }

    static func format(seed: UInt64) -> String { "0x" + String(seed, radix: 16, uppercase: true) }
}

/// The feature groups a program may use. The base (always on) is stored `Int` properties,
/// references between objects (`next`, `node`), objects released, property tokens (one key
/// path or a list) made with and without `.initial`, invalidated and dropped, and drains.
struct ModelFeatures: OptionSet, Hashable, CustomStringConvertible {
    let rawValue: Int

    /// `@Computed` properties: chains of computed-of-computed, computed values reading other
    /// objects through references, tokens on them, callbacks that read them, `invalidate(\.p)`.
    static let computed = ModelFeatures(rawValue: 1 << 0)
    /// `ObservedArray`/`ObservedDictionary`/`ObservedSet` properties, their mutations and tokens.
    static let collections = ModelFeatures(rawValue: 1 << 1)
    /// Key path chains through optional references, string paths, tracked key paths, tracking
    /// closures, `observeChanges`.
    static let paths = ModelFeatures(rawValue: 1 << 2)
    /// One-way bindings and pipelines (`map`, `onApply`, `post`), acyclic.
    static let bindings = ModelFeatures(rawValue: 1 << 3)
    /// Value-comparing tracked tokens (`observeValue`): delivered only when the value changed.
    static let valueTokens = ModelFeatures(rawValue: 1 << 4)
    /// Callbacks that change things from inside the drain: set properties, cut references,
    /// invalidate or drop tokens (their own included), release objects.
    static let reentrancy = ModelFeatures(rawValue: 1 << 6)
    /// Two `.manual` queues: tokens on either, drains of each (rules per queue).
    static let queues = ModelFeatures(rawValue: 1 << 7)
    /// `.immediate` tokens and bindings: callbacks inside the setter, on each change (rule 7).
    static let immediate = ModelFeatures(rawValue: 1 << 8)
    /// `ValuePipeline.combineLatest` bindings (acyclic).
    static let combineLatest = ModelFeatures(rawValue: 1 << 9)
    /// Several threads set properties (each the only writer of its own), then join and drain.
    static let threads = ModelFeatures(rawValue: 1 << 5)

    static let all: ModelFeatures = [
        .computed, .collections, .paths, .bindings, .valueTokens, .reentrancy, .queues, .immediate, .combineLatest,
    ]

    /// Every group but those gated by ``ModelBasedConfig/propagationRulesLanded``.
    static let everythingButComputed: ModelFeatures = [
        .collections, .paths, .bindings, .reentrancy, .queues, .immediate,
    ]

    /// The groups that fail on today's main (see ``ModelBasedConfig/propagationRulesLanded``):
    /// computed values (rules 2, 3, 4, 6), value tokens, which `drain()` counts though their
    /// callback did not run, and `combineLatest`, which `drain()` counts twice per push (rule 6).
    static let gatedUntilPropagationLands: ModelFeatures = [.computed, .valueTokens, .combineLatest]

    var description: String {
        var names: [String] = []
        if contains(.computed) { names.append("computed") }
        if contains(.collections) { names.append("collections") }
        if contains(.paths) { names.append("paths") }
        if contains(.bindings) { names.append("bindings") }
        if contains(.valueTokens) { names.append("valueTokens") }
        if contains(.reentrancy) { names.append("reentrancy") }
        if contains(.queues) { names.append("queues") }
        if contains(.immediate) { names.append("immediate") }
        if contains(.combineLatest) { names.append("combineLatest") }
        if contains(.threads) { names.append("threads") }
        return names.isEmpty ? "stored" : "stored+" + names.joined(separator: "+")
    }
}
