import Synchronization
import Testing

@testable import ObservationTokens

final class SynthStressInput: ObservableModel {
    @Observed var y = 0
}

/// `pair` reads `x` here and `y` on another object; `label` reads `pair`. Counts every
/// computation. `@unchecked Sendable`: see ``CorePerson``. The inputs are set and read under
/// `inputLock`, as the rules ask of properties set on one thread and read on another.
final class SynthStressModel: ObservableModel, @unchecked Sendable {
    let pairComputations = Atomic<Int>(0)
    let labelComputations = Atomic<Int>(0)
    let inputLock = RelLock(0)
    let other = SynthStressInput()
    @Observed var x = 0
    @Computed({ (model: SynthStressModel) in
        model.pairComputations.add(1, ordering: .relaxed)
        return model.inputLock.withLock { _ in SynthPoint(x: Double(model.x), y: Double(model.other.y)) }
    })
    var pair: SynthPoint
    @Computed({ (model: SynthStressModel) in
        model.labelComputations.add(1, ordering: .relaxed)
        let pair = model.pair
        return "\(Int(pair.x)),\(Int(pair.y))"
    })
    var label: String
}

@Suite("Synthetic: randomized stress", .threadStress, .serialized)
struct SyntheticStressTests {
    /// Four threads, each with its own fixed seed, set inputs on two objects, read both computed
    /// properties and invalidate by hand, in random order. Run under the thread sanitizer by
    /// CI. During the run, every computation was caused by a read: `pair` computed at most once
    /// per read of `pair` or computation of `label`, `label` at most once per read of it. At
    /// the end, the values are exactly those of the last inputs, a read computes nothing, and
    /// an invalidation costs exactly one computation of each.
    @Test func randomOperationsKeepValuesCurrentAndComputationsCausedByReads() {
        let rounds = RelScale.iterations(20_000, tsanDivisor: 20)
        let model = SynthStressModel()
        let pairReads = Atomic<Int>(0)
        let labelReads = Atomic<Int>(0)
        let malformed = Atomic<Int>(0)
        let finished = RelThreads.run(count: 4, timeout: 120) { index in
            var random = SplitMix(seed: 0x5EED_0000 &+ UInt64(index))
            for _ in 0..<rounds {
                switch random.next() % 8 {
                case 0:
                    let value = Int(random.next() % 1_000)
                    model.inputLock.withLock { _ in model.x = value }
                case 1:
                    let value = Int(random.next() % 1_000)
                    model.inputLock.withLock { _ in model.other.y = value }
                case 2: model.invalidate(\.pair)
                case 3, 4:
                    pairReads.add(1, ordering: .relaxed)
                    let pair = model.pair
                    let isWhole = pair.x == pair.x.rounded() && (0..<1_000).contains(pair.x)
                    if !isWhole { malformed.add(1, ordering: .relaxed) }
                default:
                    labelReads.add(1, ordering: .relaxed)
                    if model.label.split(separator: ",").count != 2 { malformed.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(finished)
        #expect(malformed.load(ordering: .relaxed) == 0)
        let labels = model.labelComputations.load(ordering: .relaxed)
        #expect(labels <= labelReads.load(ordering: .relaxed) + 1)
        #expect(model.pairComputations.load(ordering: .relaxed) <= pairReads.load(ordering: .relaxed) + labels + 1)

        // Quiescent: exact values and exact counts
        #expect(model.label == "\(model.x),\(model.other.y)")
        let (pairs, labelsNow) = (
            model.pairComputations.load(ordering: .relaxed), model.labelComputations.load(ordering: .relaxed)
        )
        _ = model.label
        _ = model.pair
        #expect(model.pairComputations.load(ordering: .relaxed) == pairs)
        #expect(model.labelComputations.load(ordering: .relaxed) == labelsNow)
        model.invalidate(\.pair)
        #expect(model.label == "\(model.x),\(model.other.y)")
        #expect(model.pairComputations.load(ordering: .relaxed) == pairs + 1)
        #expect(model.labelComputations.load(ordering: .relaxed) == labelsNow + 1)
    }
}
