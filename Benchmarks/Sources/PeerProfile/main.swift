// The peers' side (OpenCombine, Observation, NotificationCenter, a plain property) of PeerBench's
// workloads, for instruction counts beside ProfileTarget's (ours):
//
//   swift build -c release --package-path Benchmarks --product PeerProfile
//   valgrind --tool=callgrind --toggle-collect='*measured*' --callgrind-out-file=/tmp/cg.W17c \
//       Benchmarks/.build/release/PeerProfile W17-combine 20
//
// W17–W20 run the code PeerBench times (AppWorkloads); the others (Simple.swift) are shaped like
// PeerBench's loops. Cases (an optional number after the case scales it):
// - W1-observation, W1-plain [sets]: 1,000,000 sets of an untracked `@Observable` / a plain
//   stored property through a non-inlined setter;
// - W2-combine [sets]: 1,000,000 sets of a `@Published` property with one sink;
// - W3-notification, W3-combine [batches] (the same as W4-…): 100 batches of 100 registrations
//   created (`*w3measuredCreate*`) and ended (`*w4measuredEnd*`);
// - W5-combine [ticks]: 5 sends to 10,000 sinks of a `PassthroughSubject`;
// - W9-observation [changes]: `withObservationTracking` re-armed after each of 1,000 changes;
// - W14-combine [ticks]: 50 ticks of 1,000 appends to a `@Published` array with one sink;
// - W15-combine-sets [sets] (`*w15measuredSetsCombine*`): 1,000,000 sets through
//   `$value.map { $0 &* 2 }.assign(to: \.value, on: target)`; W15-combine [batches]
//   (`*w15measuredCreateCombine*`): 100 batches of 100 of those created and released;
// - W17-combine, W17-observation [ticks]; W18-combine, W18-observation [count]; W19-combine,
//   W19-observation; W20-combine, W20-observation [ticks].

import AppWorkloads
import OpenCombine

final class ProfileCombineCounter {
    @Published var value = 0
}

final class ProfilePlainTarget {
    var value = 0
}

/// W15's creation peer, shaped like `ProfileTarget`'s `w15measuredCreate`.
@inline(never)
func w15measuredCreateCombine(_ model: ProfileCombineCounter, _ target: ProfilePlainTarget, batches: Int) {
    var cancellables: [AnyCancellable] = []
    cancellables.reserveCapacity(100)
    for _ in 0..<batches {
        for _ in 0..<100 {
            cancellables.append(model.$value.map { $0 &* 2 }.assign(to: \.value, on: target))
        }
        cancellables.removeAll(keepingCapacity: true)
    }
}

#if canImport(Observation)
    import Observation

    @Observable
    final class ProfileAppleSum {
        var a = 0
        var b = 0
        var c = 0
        var sum: Int { a + b + c }
    }

    /// `@unchecked Sendable`: `onChange` runs synchronously inside the setter, on this thread.
    final class ProfileFired: @unchecked Sendable {
        var count = 0
    }

    /// Registers W9's tracking. Not nested in `measuredW9Apple`: a nested function's symbol
    /// contains its parent's name, and callgrind's `--toggle-collect='*measured*'` would toggle
    /// collection off on entering it.
    @inline(never)
    func armW9(_ model: ProfileAppleSum, _ fired: ProfileFired) {
        withObservationTracking {
            _ = model.sum
        } onChange: {
            fired.count &+= 1
        }
    }

    /// W9's peer: set one of three inputs, `onChange` fires, read the value, re-arm.
    @inline(never)
    func measuredW9Apple(_ model: ProfileAppleSum, changes: Int) -> Int {
        let fired = ProfileFired()
        var total = 0
        armW9(model, fired)
        for next in 1...changes {
            switch next % 3 {
            case 0: model.a = next
            case 1: model.b = next
            default: model.c = next
            }
            precondition(fired.count == 1)
            fired.count = 0
            total &+= model.sum | 1
            armW9(model, fired)
        }
        return total
    }
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let argument = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) }

switch CommandLine.arguments.dropFirst().first?.lowercased() {
case "w17-combine":
    let ticks = argument ?? 200
    let sets = appSets(models: 1_000, count: 5_000 * ticks)
    let state = W17Combine(models: 1_000)
    state.measuredTicks(sets, perTick: 5_000)
    print("sink calls: \(state.callbacks)")
    state.tearDown()
case "w18-combine":
    let count = argument ?? 100_000
    let cells = (0..<count).map { _ in CombineCell() }
    precondition(measuredW18Combine(cells, tally: AppTally()) == count)
case "w19-combine":
    var modelsFirst = W19Combine(models: 10_000)
    W19Combine.measuredModelsFirst(&modelsFirst)
    var tokensFirst = W19Combine(models: 10_000)
    W19Combine.measuredTokensFirst(&tokensFirst)
case "w20-combine":
    let plan = DerivedPlan(models: 1_000, perTick: 5_000, ticks: argument ?? 200)
    let state = W20Combine(models: 1_000)
    state.measuredTicks(plan)
    if let mismatch = derivedMismatch(state.report, expected: plan.changingSets, side: "OpenCombine") {
        fatalError(mismatch)
    }
    print("sink calls: \(state.report.callbacks)")
case "w1-plain":
    let model = PlainValue()
    w1measuredPlain(model, sets: argument ?? 1_000_000)
    appBlackHole(model.value)
case "w2-combine":
    let model = ProfileCombineCounter()
    let tally = ProfileTally()
    let cancellable = model.$value.sink { _ in tally.count &+= 1 }
    w2measuredCombine(model, sets: argument ?? 1_000_000, tally: tally)
    withExtendedLifetime(cancellable) {}
case "w3-notification", "w4-notification":
    w3w4Notification(batches: argument ?? 100)
case "w3-combine", "w4-combine":
    w3w4Combine(batches: argument ?? 100)
case "w5-combine":
    w5Combine(ticks: argument ?? 5)
case "w14-combine":
    w14Combine(ticks: argument ?? 50)
case "w15-combine-sets":
    let model = ProfileCombineCounter()
    let target = ProfilePlainTarget()
    let cancellable = model.$value.map { $0 &* 2 }.assign(to: \.value, on: target)
    w15measuredSetsCombine(model, target, sets: argument ?? 1_000_000)
    withExtendedLifetime(cancellable) {}
case "w15-combine":
    w15measuredCreateCombine(ProfileCombineCounter(), ProfilePlainTarget(), batches: argument ?? 100)
#if canImport(Observation)
    case "w17-observation":
        let ticks = argument ?? 200
        let sets = appSets(models: 1_000, count: 5_000 * ticks)
        let state = W17Apple(models: 1_000)
        state.measuredTicks(sets, perTick: 5_000)
        print("view-model updates: \(state.callbacks)")
        state.tearDown()
    case "w18-observation":
        let count = argument ?? 100_000
        let cells = (0..<count).map { _ in AppleCell() }
        precondition(measuredW18Apple(cells, tally: AppTally()) == count)
    case "w19-observation":
        var state = W19Apple(models: 10_000)
        W19Apple.measuredModels(&state)
    case "w20-observation":
        let plan = DerivedPlan(models: 1_000, perTick: 5_000, ticks: argument ?? 200)
        let state = W20Apple(models: 1_000)
        state.measuredTicks(plan)
        let expected = observationSkipsEqualSets ? plan.changedModels : plan.touchedModels
        if let mismatch = derivedMismatch(state.report, expected: expected, side: "Observation") {
            fatalError(mismatch)
        }
        print("renders: \(state.report.callbacks)")
    case "w1-observation":
        let model = ProfileAppleCounter()
        w1measuredApple(model, sets: argument ?? 1_000_000)
        appBlackHole(model.value)
    case "w9-observation":
        print("total: \(measuredW9Apple(ProfileAppleSum(), changes: argument ?? 1_000))")
#endif
default:
    let usage =
        "usage: PeerProfile W1-observation|W1-plain|W2-combine [sets] | W3-notification|W3-combine [batches] | W5-combine [ticks] | W9-observation [changes] | W14-combine [ticks] | W15-combine-sets [sets] | W15-combine [batches] | W17-combine|W17-observation [ticks] | W18-combine|W18-observation [count] | W19-combine|W19-observation | W20-combine|W20-observation [ticks]\n"
    _ = usage.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(64)
}
