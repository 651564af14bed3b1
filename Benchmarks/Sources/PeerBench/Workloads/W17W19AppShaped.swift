import AppWorkloads
import ObservationTokens

/// W17 "many models": 1,000 models × 8 properties (Int, String, Double, Bool, an optional model
/// reference, …), one view-model per model with 3 tokens (two properties and the 2-segment path
/// `owner.count` through the optional), created with the README idiom
/// (`observe(_:observer:)` + `store(in:)`); 5,000 random sets per tick (fixed seed), then
/// delivery; 200 ticks. Reported per set, delivery included. The code is in `AppWorkloads`
/// (shared with ProfileTarget and PeerProfile for callgrind).
/// - ours: `.manual` queue, `drain()` after each tick: one callback per changed token per tick;
/// - OpenCombine: `@Published` + `sink` (and `switchToLatest` for the path): sinks run on every
///   set, so many more callbacks;
/// - Observation: one `withObservationTracking` per view-model, re-armed at the end of the tick
///   after its update ran (the SwiftUI pattern): one callback per changed view-model per tick.
func runW17(_ settings: Settings) -> [Row] {
    let models = 1_000
    let perTick = 5_000
    let ticks = settings.size(full: 200, quick: 10)
    let sets = appSets(models: models, count: perTick * ticks)
    let title =
        "many models: \(grouped(models)) models × 8 properties, 3 tokens each, \(grouped(perTick)) random sets per tick, deliver"
    let rounds = settings.quick ? 3 : 5

    var oursCallbacks = 0
    let oursNs = medianOfRounds(settings, rounds: rounds) {
        let state = W17Ours(models: models)
        let elapsed = time { state.measuredTicks(sets, perTick: perTick) }
        oursCallbacks = state.callbacks
        verify(state.callbacks > 0, "W17 ours: callbacks ran")
        state.tearDown()
        return elapsed.nanoseconds / Double(sets.count)
    }

    var combineCallbacks = 0
    let combineNs = medianOfRounds(settings, rounds: rounds) {
        let state = W17Combine(models: models)
        let before = state.callbacks
        let elapsed = time { state.measuredTicks(sets, perTick: perTick) }
        combineCallbacks = state.callbacks - before
        verify(combineCallbacks > 0, "W17 OpenCombine: sinks ran")
        state.tearDown()
        return elapsed.nanoseconds / Double(sets.count)
    }

    var appleNs: Double?
    var appleCallbacks = 0
    #if canImport(Observation)
        appleNs = medianOfRounds(settings, rounds: rounds) {
            let state = W17Apple(models: models)
            let elapsed = time { state.measuredTicks(sets, perTick: perTick) }
            appleCallbacks = state.callbacks
            verify(state.callbacks > 0, "W17 Observation: callbacks ran")
            state.tearDown()
            return elapsed.nanoseconds / Double(sets.count)
        }
    #endif

    let counts =
        "callbacks over \(grouped(sets.count)) sets: ours \(grouped(oursCallbacks)) (one per changed token per tick), "
        + "OpenCombine \(grouped(combineCallbacks)) sink calls (one per set per subscriber), "
        + "Observation \(grouped(appleCallbacks)) view-model updates (one per changed view-model per tick)"
    return [
        Row(
            workload: "W17", title: title, ours: oursNs, peer: "OpenCombine `@Published` + `sink`",
            peerValue: combineNs,
            target: .ratioAtLeast(10), note: "ns per set, delivery included; " + counts,
            counted: appCounts("W17", peer: "W17-combine")),
        Row(
            workload: "W17", title: title, ours: oursNs, peer: "Observation, re-armed per tick", peerValue: appleNs,
            target: .ratioAtLeast(10), note: appleNs == nil ? appleUnavailable : nil,
            counted: appCounts("W17", peer: "W17-observation")),
    ]
}

/// The counted sides of W17 or W20: 4 ticks of 5,000 sets (20,000 sets; PeerBench times 200
/// ticks), ours in `ProfileTarget`, the peer's in `PeerProfile` `peer`.
func appCounts(_ workload: String, peer: String) -> CountPair {
    CountPair(ours: .ours(workload, "4", operations: 20_000), peer: .peer(peer, "4", operations: 20_000))
}

/// W18: one token per object across 100,000 fresh objects: create the token, set the object
/// once, deliver, end the token. Reported per object (objects are created outside the timing).
/// - ours: `observe(\.value, queue:)`, one `drain()`, tokens released;
/// - OpenCombine: `$value.dropFirst().sink`, the set runs the sink, cancellables released;
/// - Observation: `withObservationTracking` per object; the set fires `onChange`; the
///   "delivery" reads the values; there is no end (a registration ends when it fires).
func runW18(_ settings: Settings) -> [Row] {
    let count = settings.size(full: 100_000, quick: 10_000)
    let title = "one token on each of \(grouped(count)) fresh objects: create, set, deliver, end"

    let queue = CoalescingQueue(target: .manual)
    let tally = AppTally()
    let oursNs = medianOfRounds(settings) {
        let cells = (0..<count).map { _ in OTCell() }
        let elapsed = time {
            verify(measuredW18Ours(cells, queue: queue, tally: tally) == count, "W18 ours: one callback per object")
        }
        return elapsed.nanoseconds / Double(count)
    }
    let combineNs = medianOfRounds(settings) {
        let cells = (0..<count).map { _ in CombineCell() }
        let elapsed = time {
            verify(measuredW18Combine(cells, tally: tally) == count, "W18 OpenCombine: one sink call per object")
        }
        return elapsed.nanoseconds / Double(count)
    }
    var appleNs: Double?
    #if canImport(Observation)
        appleNs = medianOfRounds(settings) {
            let cells = (0..<count).map { _ in AppleCell() }
            let elapsed = time {
                verify(measuredW18Apple(cells, tally: tally) == count, "W18 Observation: one onChange per object")
            }
            return elapsed.nanoseconds / Double(count)
        }
    #endif
    return [
        Row(
            workload: "W18", title: title, ours: oursNs, peer: "OpenCombine `@Published` + `sink`",
            peerValue: combineNs,
            note: "ns per object: token created, one set, delivered, token ended",
            counted: CountPair(
                ours: .ours("W18", "20000", operations: 20_000),
                peer: .peer("W18-combine", "20000", operations: 20_000))),
        Row(
            workload: "W18", title: title, ours: oursNs, peer: "Observation (no end step)", peerValue: appleNs,
            target: .ratioAtLeast(5), note: appleNs == nil ? appleUnavailable : nil,
            counted: CountPair(
                ours: .ours("W18", "20000", operations: 20_000),
                peer: .peer("W18-observation", "20000", operations: 20_000))),
    ]
}

/// W19: teardown of 10,000 W17-shaped models (8 properties) each with a view-model holding 3
/// live tokens (two properties and the path `owner.count`): models released first, then the
/// view-models (and tokens); then the reverse order. Reported per model, both releases timed.
func runW19(_ settings: Settings) -> [Row] {
    let count = settings.size(full: 10_000, quick: 2_000)
    let queue = CoalescingQueue(target: .manual)

    let oursModelsFirst = medianOfRounds(settings) {
        var state = W19Ours(models: count, queue: queue)
        return time { W19Ours.measuredModelsFirst(&state) }.nanoseconds / Double(count)
    }
    let oursTokensFirst = medianOfRounds(settings) {
        var state = W19Ours(models: count, queue: queue)
        return time { W19Ours.measuredTokensFirst(&state) }.nanoseconds / Double(count)
    }
    verify(queue.drain() == 0, "W19 ours: teardown delivers nothing")
    let combineModelsFirst = medianOfRounds(settings) {
        var state = W19Combine(models: count)
        return time { W19Combine.measuredModelsFirst(&state) }.nanoseconds / Double(count)
    }
    let combineTokensFirst = medianOfRounds(settings) {
        var state = W19Combine(models: count)
        return time { W19Combine.measuredTokensFirst(&state) }.nanoseconds / Double(count)
    }
    var appleNs: Double?
    #if canImport(Observation)
        appleNs = medianOfRounds(settings) {
            var state = W19Apple(models: count)
            return time { W19Apple.measuredModels(&state) }.nanoseconds / Double(count)
        }
    #endif
    let first = "teardown of \(grouped(count)) models with 3 live tokens each: models first, then tokens"
    let second = "teardown of \(grouped(count)) models with 3 live tokens each: tokens first, then models"
    return [
        Row(
            workload: "W19", title: first, ours: oursModelsFirst, peer: "OpenCombine (models, then cancellables)",
            peerValue: combineModelsFirst, note: "ns per model, both releases timed",
            counted: CountPair(
                ours: .ours("W19", function: "*measuredModelsFirst*", operations: 10_000),
                peer: .peer("W19-combine", function: "*measuredModelsFirst*", operations: 10_000))),
        Row(
            workload: "W19", title: first, ours: oursModelsFirst,
            peer: "Observation (models; registrations die with them)",
            peerValue: appleNs, target: .ratioAtLeast(1), note: appleNs == nil ? appleUnavailable : nil,
            counted: CountPair(
                ours: .ours("W19", function: "*measuredModelsFirst*", operations: 10_000),
                peer: .peer("W19-observation", function: "*measuredModels*", operations: 10_000))),
        Row(
            workload: "W19", title: second, ours: oursTokensFirst, peer: "OpenCombine (cancellables, then models)",
            peerValue: combineTokensFirst,
            counted: CountPair(
                ours: .ours("W19", function: "*measuredTokensFirst*", operations: 10_000),
                peer: .peer("W19-combine", function: "*measuredTokensFirst*", operations: 10_000))),
    ]
}
