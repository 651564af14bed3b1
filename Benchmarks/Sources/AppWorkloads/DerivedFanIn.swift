// W20, "derived fan-in": 1,000 models, each with two stored inputs `a` and `b` and a 3-deep chain
// of derived values over them (`sum = a + b`, `scaled = sum * 3`, `parity = scaled % 7`); one
// observer per model watches the two inputs and the last derived value. 5,000 random input sets
// per tick, then the tick is delivered. Shared by PeerBench (timed), ProfileTarget (ours, under
// callgrind) and PeerProfile (the peers, under callgrind), like W17.
//
// Every side verifies its callbacks against a plan computed from the same sets before anything
// runs (`DerivedPlan`), tick by tick: one callback per affected observer per tick, where
// "affected" is defined by each side's own rules (see `DerivedPlan`).

import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

// MARK: - The sets and the plan

/// One set of W20: which model, which input (0 = `a`, 1 = `b`), and the new value.
public struct DerivedSet {
    public var model: Int32
    public var input: UInt8
    public var value: Int32
}

/// The values W20's inputs take: `0..<16`, so that about one set in sixteen stores the value the
/// input already has (an equal set, which no side reports as a change) and two different inputs
/// often give the same `parity`.
public let derivedValueRange: UInt64 = 16

/// `parity` of inputs `a` and `b`: the end of the chain, computed the same way by every side.
@inline(__always)
public func derivedParity(_ a: Int, _ b: Int) -> Int { ((a &+ b) &* 3) % 7 }

/// `count` sets over `models` models, with a fixed seed (SplitMix64, as W17).
public func derivedSets(models: Int, count: Int, seed: UInt64 = 20) -> [DerivedSet] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in
        let bits = random.next()
        return DerivedSet(
            model: Int32(truncatingIfNeeded: (bits >> 32) % UInt64(models)),
            input: UInt8(truncatingIfNeeded: bits & 1),
            value: Int32(truncatingIfNeeded: (bits >> 8) % derivedValueRange))
    }
}

/// What each side must report, tick by tick, for a list of sets applied to models whose inputs
/// start at 0. Computed by plain Swift from the sets alone, before any side runs.
///
/// A set *changes* its input when the new value differs from the value just before the set.
/// - `changedModels[t]`: models of tick `t` with at least one changing set. Ours (rule 1 of the
///   propagation rules: a change is delivered once in the next drain, even if a later set of the
///   tick puts the value back) and Observation (`@Observable` setters skip equal values; the
///   first notifying set fires the model's `onChange`, which is re-armed at the end of the tick)
///   run one callback per such model.
/// - `parityChangedModels[t]`: models whose `parity` at the end of tick `t` differs from its
///   value at the end of the previous tick. Our token also runs for these (rule 2), but each of
///   them is in `changedModels[t]` too (`parity` only moves when an input changed), so the
///   expected count stays `changedModels[t]`; the plan checks that inclusion.
/// - `touchedModels[t]`: models with any set in tick `t`: what Observation fires for on a
///   toolchain whose `@Observable` setters notify equal values too (see `observationSkipsEqualSets`).
/// - `changingSets[t]`: OpenCombine's sink calls in tick `t`: `@Published` publishes every set,
///   `CombineLatest` forwards it (see `CombineDerived.latestInputs`), and `removeDuplicates`
///   drops exactly the equal ones (the mapped `(a, b, parity)` only repeats when the input kept
///   its value). OpenCombine has no ticks.
public struct DerivedPlan {
    public let models: Int
    public let perTick: Int
    public let sets: [DerivedSet]
    public private(set) var changedModels: [Int] = []
    public private(set) var parityChangedModels: [Int] = []
    public private(set) var touchedModels: [Int] = []
    public private(set) var changingSets: [Int] = []

    public init(models: Int, perTick: Int, ticks: Int, seed: UInt64 = 20) {
        self.models = models
        self.perTick = perTick
        sets = derivedSets(models: models, count: perTick * ticks, seed: seed)
        var a = [Int](repeating: 0, count: models)
        var b = [Int](repeating: 0, count: models)
        var changedStamp = [Int](repeating: -1, count: models)
        var touchedStamp = [Int](repeating: -1, count: models)
        for tick in 0..<ticks {
            let tickSets = sets[(tick * perTick)..<((tick + 1) * perTick)]
            let parityBefore = (0..<models).map { derivedParity(a[$0], b[$0]) }
            var changed = 0
            var touched = 0
            var changing = 0
            for set in tickSets {
                let model = Int(set.model)
                let value = Int(set.value)
                if touchedStamp[model] != tick {
                    touchedStamp[model] = tick
                    touched += 1
                }
                let old = set.input == 0 ? a[model] : b[model]
                guard value != old else { continue }
                if set.input == 0 { a[model] = value } else { b[model] = value }
                changing += 1
                if changedStamp[model] != tick {
                    changedStamp[model] = tick
                    changed += 1
                }
            }
            var parityChanged = 0
            for model in 0..<models where derivedParity(a[model], b[model]) != parityBefore[model] {
                precondition(changedStamp[model] == tick, "W20 plan: parity moved without an input change")
                parityChanged += 1
            }
            changedModels.append(changed)
            parityChangedModels.append(parityChanged)
            touchedModels.append(touched)
            changingSets.append(changing)
        }
    }

    public var ticks: Int { changedModels.count }
}

/// What one side reported: callbacks per tick, renders whose values were not mutually consistent
/// (a `parity` that does not belong to the `a` and `b` read with it), and a value sum that keeps
/// the renders from being optimized away.
public struct DerivedReport {
    public var callbacksPerTick: [Int] = []
    /// Renders counted where they ran (in the callbacks); must equal `callbacks`.
    public var renders = 0
    public var inconsistentRenders = 0
    public var hits = 0
    public init() {}
    public var callbacks: Int { callbacksPerTick.reduce(0, +) }
}

/// Counts one render: `a`, `b` and `parity` as a view would show them.
@inline(__always)
func render(_ a: Int, _ b: Int, _ parity: Int, into report: inout DerivedReport) {
    report.hits &+= a &+ b &* 16 &+ parity &* 256
    report.renders &+= 1
    if parity != derivedParity(a, b) { report.inconsistentRenders &+= 1 }
}

// MARK: - ObservationTokens

public final class OTDerived: ObservableModel {
    @Observed public var a = 0
    @Observed public var b = 0
    @Computed({ (model: OTDerived) in model.a &+ model.b }) public var sum: Int
    @Computed({ (model: OTDerived) in model.sum &* 3 }) public var scaled: Int
    @Computed({ (model: OTDerived) in model.scaled % 7 }) public var parity: Int
    public override init() {}
}

/// The README idiom: a view-model owning its token, on the inputs and the last derived value.
public final class OTDerivedViewModel {
    public var tokens = Set<ObservationToken>()
    public var report = DerivedReport()

    public init(model: OTDerived, queue: CoalescingQueue) {
        model.observe([\.a, \.b, \.parity], observer: self, queue: queue) { viewModel, model in
            render(model.a, model.b, model.parity, into: &viewModel.report)
        }
        .store(in: &tokens)
    }
}

/// W20, ours: `.manual` queue, `drain()` at the end of each tick.
public final class W20Ours {
    public let models: [OTDerived]
    public let viewModels: [OTDerivedViewModel]
    public let queue: CoalescingQueue
    public private(set) var callbacksPerTick: [Int] = []

    public init(models count: Int) {
        let queue = CoalescingQueue(target: .manual)
        models = (0..<count).map { _ in OTDerived() }
        viewModels = models.map { OTDerivedViewModel(model: $0, queue: queue) }
        self.queue = queue
    }

    @inline(never)
    public func measuredTicks(_ plan: DerivedPlan) {
        callbacksPerTick.reserveCapacity(callbacksPerTick.count + plan.ticks)
        var start = 0
        while start < plan.sets.count {
            let end = min(start + plan.perTick, plan.sets.count)
            for index in start..<end {
                let set = plan.sets[index]
                let model = models[Int(set.model)]
                if set.input == 0 { model.a = Int(set.value) } else { model.b = Int(set.value) }
            }
            callbacksPerTick.append(queue.drain())
            start = end
        }
    }

    /// The report over all view-models; `callbacksPerTick` is what `drain()` returned.
    public var report: DerivedReport {
        var report = DerivedReport()
        report.callbacksPerTick = callbacksPerTick
        for viewModel in viewModels {
            report.hits &+= viewModel.report.hits
            report.renders &+= viewModel.report.renders
            report.inconsistentRenders &+= viewModel.report.inconsistentRenders
        }
        return report
    }
}

// MARK: - OpenCombine

public final class CombineDerived {
    @OpenCombine.Published public var a = 0
    @OpenCombine.Published public var b = 0
    public init() {}
}

/// What W20's Combine pipeline delivers: both inputs and the end of the chain.
public struct DerivedValues: Equatable {
    public var a: Int
    public var b: Int
    public var parity: Int
}

/// One input's new value, for the merged stream of both inputs.
enum DerivedInput {
    case a(Int)
    case b(Int)
}

extension CombineDerived {
    /// The latest `(a, b)` on every set of either input: Combine's `CombineLatest($a, $b)`.
    ///
    /// OpenCombine 0.14.0 has no `CombineLatest` (nor `Merge`), so this is the same operator made
    /// of the ones it has: both inputs merged by `flatMap` over the sequence of the two
    /// publishers, and `scan` keeping the latest value of each. Like `CombineLatest`, it emits
    /// once per emission of either input (here: per set, as `@Published` publishes every set) with
    /// the latest of both. (The other way, `$a.map { a in $b.map { (a, $0) } }.switchToLatest()`,
    /// subscribes anew on every set of `a`: it would charge OpenCombine for a subscription per
    /// set.) The seed is the current values; the subscription's two initial emissions are equal,
    /// and `removeDuplicates` passes one.
    var latestInputs: AnyPublisher<(a: Int, b: Int), Never> {
        [$a.map(DerivedInput.a).eraseToAnyPublisher(), $b.map(DerivedInput.b).eraseToAnyPublisher()]
            .publisher
            .flatMap { $0 }
            .scan((a: a, b: b)) { latest, input in
                switch input {
                case .a(let value): (a: value, b: latest.b)
                case .b(let value): (a: latest.a, b: value)
                }
            }
            .eraseToAnyPublisher()
    }
}

/// `CombineLatest` of the two inputs (see `latestInputs`), `map` for the chain,
/// `removeDuplicates`, one sink.
public final class CombineDerivedViewModel {
    public var cancellables = Set<AnyCancellable>()
    public var report = DerivedReport()

    /// `calls` counts the sink calls of every view-model (so a tick's count is one subtraction),
    /// including the one each sink receives at subscription.
    public init(model: CombineDerived, calls: AppTally) {
        model.latestInputs
            .map { inputs -> DerivedValues in
                let sum = inputs.a &+ inputs.b
                let scaled = sum &* 3
                return DerivedValues(a: inputs.a, b: inputs.b, parity: scaled % 7)
            }
            .removeDuplicates()
            .sink { [unowned self] values in
                render(values.a, values.b, values.parity, into: &self.report)
                calls.count &+= 1
            }
            .store(in: &cancellables)
    }
}

/// W20, OpenCombine: sinks run synchronously during the sets; there is no delivery step.
public final class W20Combine {
    public let models: [CombineDerived]
    public let viewModels: [CombineDerivedViewModel]
    /// Sink calls of all view-models; 0 after the subscriptions' initial calls.
    public let calls = AppTally()
    public private(set) var callbacksPerTick: [Int] = []

    public init(models count: Int) {
        let calls = calls
        models = (0..<count).map { _ in CombineDerived() }
        viewModels = models.map { CombineDerivedViewModel(model: $0, calls: calls) }
        precondition(calls.count == count, "W20 OpenCombine: each sink receives the current values once")
        calls.count = 0
        for viewModel in viewModels { viewModel.report = DerivedReport() }
    }

    @inline(never)
    public func measuredTicks(_ plan: DerivedPlan) {
        callbacksPerTick.reserveCapacity(callbacksPerTick.count + plan.ticks)
        var start = 0
        while start < plan.sets.count {
            let end = min(start + plan.perTick, plan.sets.count)
            let before = calls.count
            for index in start..<end {
                let set = plan.sets[index]
                let model = models[Int(set.model)]
                if set.input == 0 { model.a = Int(set.value) } else { model.b = Int(set.value) }
            }
            callbacksPerTick.append(calls.count &- before)
            start = end
        }
    }

    public var report: DerivedReport {
        var report = DerivedReport()
        report.callbacksPerTick = callbacksPerTick
        for viewModel in viewModels {
            report.hits &+= viewModel.report.hits
            report.renders &+= viewModel.report.renders
            report.inconsistentRenders &+= viewModel.report.inconsistentRenders
        }
        return report
    }
}

// MARK: - Observation

#if canImport(Observation)
    @Observable
    public final class AppleDerived {
        public var a = 0
        public var b = 0
        public var sum: Int { a &+ b }
        public var scaled: Int { sum &* 3 }
        public var parity: Int { scaled % 7 }
        public init() {}
    }

    /// Whether this toolchain's `@Observable` setters skip a set of an equal value (Swift 6.2's
    /// macro compares `Equatable` values before notifying; earlier ones notify every set).
    public let observationSkipsEqualSets: Bool = {
        let probe = AppleDerived()
        let fired = AppTally()
        withObservationTracking {
            appBlackHole(probe.a)
        } onChange: {
            fired.count &+= 1
        }
        probe.a = 0
        let skips = fired.count == 0
        probe.a = 1  // fire it, so nothing stays registered
        return skips
    }()

    /// W20, Observation: one `withObservationTracking` per model over `a`, `b` and `parity` (whose
    /// getter reads `scaled`, `sum`, `a` and `b`); `onChange` records the model; the end of the
    /// tick renders each recorded model and re-arms it (the SwiftUI pattern, as W17).
    public final class W20Apple {
        public let models: [AppleDerived]
        public let fired = AppTally()
        public private(set) var callbacksPerTick: [Int] = []
        public var report = DerivedReport()

        public init(models count: Int) {
            models = (0..<count).map { _ in AppleDerived() }
            for index in models.indices { arm(index) }
        }

        func arm(_ index: Int) {
            let model = models[index]
            let fired = fired
            withObservationTracking {
                appBlackHole(model.a)
                appBlackHole(model.b)
                appBlackHole(model.parity)
            } onChange: {
                fired.fired.append(index)
            }
        }

        @inline(never)
        public func measuredTicks(_ plan: DerivedPlan) {
            callbacksPerTick.reserveCapacity(callbacksPerTick.count + plan.ticks)
            var start = 0
            while start < plan.sets.count {
                let end = min(start + plan.perTick, plan.sets.count)
                for index in start..<end {
                    let set = plan.sets[index]
                    let model = models[Int(set.model)]
                    if set.input == 0 { model.a = Int(set.value) } else { model.b = Int(set.value) }
                }
                for index in fired.fired {
                    let model = models[index]
                    render(model.a, model.b, model.parity, into: &report)
                    arm(index)
                }
                callbacksPerTick.append(fired.fired.count)
                fired.fired.removeAll(keepingCapacity: true)
                start = end
            }
            report.callbacksPerTick = callbacksPerTick
        }
    }
#endif

// MARK: - Checking a side against the plan

/// Nil when `report` is what `plan` demands of the side, else what is wrong.
public func derivedMismatch(_ report: DerivedReport, expected: [Int], side: String) -> String? {
    if report.inconsistentRenders != 0 {
        return "W20 \(side): \(report.inconsistentRenders) renders read a parity that does not match their inputs"
    }
    guard report.renders == report.callbacks else {
        return "W20 \(side): \(report.renders) renders ran, \(report.callbacks) callbacks counted"
    }
    guard report.callbacksPerTick.count == expected.count else {
        return "W20 \(side): \(report.callbacksPerTick.count) ticks reported, \(expected.count) planned"
    }
    for (tick, (got, want)) in zip(report.callbacksPerTick, expected).enumerated() where got != want {
        return "W20 \(side): tick \(tick) ran \(got) callbacks, the plan says \(want)"
    }
    return nil
}
