import AppWorkloads
import ObservationTokens

/// W20 "derived fan-in": 1,000 models, each with two `@Observed` inputs `a`, `b` and a 3-deep
/// `@Computed` chain over them (`sum = a + b`, `scaled = sum * 3`, `parity = scaled % 7`); one
/// view-model per model with one token on `[\.a, \.b, \.parity]` (`observe(_:observer:)` +
/// `store(in:)`). 5,000 random input sets per tick (SplitMix64, fixed seed, precomputed, values
/// 0–15), then delivery; 200 ticks. Reported per set, delivery included. The code is in
/// `AppWorkloads` (shared with ProfileTarget and PeerProfile for callgrind).
/// - ours: `.manual` queue, `drain()` after each tick;
/// - OpenCombine: `CombineLatest($a, $b)` + `map` (the chain) + `removeDuplicates` + `sink`,
///   synchronous on every set that changes a value;
/// - Observation: the same chain as plain computed properties of an `@Observable` model; one
///   `withObservationTracking` per model over `a`, `b` and `parity`, re-armed after its render at
///   the end of the tick.
/// Every side's callbacks are checked tick by tick against `DerivedPlan` (exit 2 on a wrong
/// count), and every render checks that the `parity` it read belongs to the `a` and `b` it read.
func runW20(_ settings: Settings) -> [Row] {
    let models = 1_000
    let perTick = 5_000
    let ticks = settings.size(full: 200, quick: 10)
    let plan = DerivedPlan(models: models, perTick: perTick, ticks: ticks)
    let sets = Double(plan.sets.count)
    let title =
        "derived fan-in: \(grouped(models)) models × 2 inputs + a 3-deep computed chain, one token each, \(grouped(perTick)) random sets per tick, deliver"
    let rounds = settings.quick ? 3 : 5

    var oursCallbacks = 0
    let oursNs = medianOfRounds(settings, rounds: rounds) {
        let state = W20Ours(models: models)
        let elapsed = time { state.measuredTicks(plan) }
        let report = state.report
        verifyW20(derivedMismatch(report, expected: plan.changedModels, side: "ours"))
        blackHole(report.hits)
        oursCallbacks = report.callbacks
        return elapsed.nanoseconds / sets
    }

    var combineCallbacks = 0
    let combineNs = medianOfRounds(settings, rounds: rounds) {
        let state = W20Combine(models: models)
        let elapsed = time { state.measuredTicks(plan) }
        let report = state.report
        verifyW20(derivedMismatch(report, expected: plan.changingSets, side: "OpenCombine"))
        blackHole(report.hits)
        combineCallbacks = report.callbacks
        return elapsed.nanoseconds / sets
    }

    var appleNs: Double?
    var appleCallbacks = 0
    var appleRule = ""
    #if canImport(Observation)
        let expected = observationSkipsEqualSets ? plan.changedModels : plan.touchedModels
        appleRule =
            observationSkipsEqualSets
            ? "one per model with a changing set per tick, as ours"
            : "one per model with any set per tick: this toolchain's `@Observable` notifies equal sets"
        appleNs = medianOfRounds(settings, rounds: rounds) {
            let state = W20Apple(models: models)
            let elapsed = time { state.measuredTicks(plan) }
            verifyW20(derivedMismatch(state.report, expected: expected, side: "Observation"))
            blackHole(state.report.hits)
            appleCallbacks = state.report.callbacks
            return elapsed.nanoseconds / sets
        }
    #endif

    let affected = plan.changedModels.reduce(0, +)
    let counts =
        "callbacks over \(grouped(plan.sets.count)) sets, each side checked tick by tick against the plan: "
        + "ours \(grouped(oursCallbacks)) (one per model with a set that changed an input, per tick: "
        + "\(grouped(affected)) planned; \(grouped(plan.parityChangedModels.reduce(0, +))) of them also changed `parity`), "
        + "OpenCombine \(grouped(combineCallbacks)) sink calls (one per set that changed a value), "
        + "Observation \(grouped(appleCallbacks)) renders (\(appleRule))"
    return [
        Row(
            workload: "W20", title: title, ours: oursNs,
            peer: "OpenCombine `CombineLatest` + `map` + `removeDuplicates` + `sink`", peerValue: combineNs,
            target: .ratioAtLeast(5), note: "ns per set, delivery included; " + counts,
            counted: appCounts("W20", peer: "W20-combine")),
        Row(
            workload: "W20", title: title, ours: oursNs, peer: "Observation, re-armed per tick", peerValue: appleNs,
            target: .ratioAtLeast(5), note: appleNs == nil ? appleUnavailable : nil,
            counted: appCounts("W20", peer: "W20-observation")),
    ]
}

/// Aborts the run (exit 2) when a side's callbacks differ from the plan.
private func verifyW20(_ mismatch: String?) {
    verify(mismatch == nil, mismatch ?? "")
}
