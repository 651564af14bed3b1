import Synchronization
import Testing

@testable import ObservationTokens

/// `sum` and `tens` read `a` under `inputLock`, as the rules ask of a property set on one thread
/// and read on another. `@unchecked Sendable`: see ``CorePerson``.
private final class SettledSum: ObservableModel, @unchecked Sendable {
    let inputLock = RelLock(0)
    @Observed var a = 0
    @Computed({ (model: SettledSum) in model.inputLock.withLock { _ in model.a } + 1 }) var sum: Int
    @Hybrid({ (model: SettledSum) in model.inputLock.withLock { _ in model.a } * 10 }) var tens: Int

    /// Whether `a`'s settled mark bit is its own among the observed properties here (serials are
    /// global: tests running in parallel may interleave them).
    var markBitIsOwn: Bool {
        let bit = SettledMark.bit(_a.serial)
        return [_sum.state.serial, _sum.state.invalidationSerial, _tens.state.serial, _tens.state.invalidationSerial]
            .allSatisfy { SettledMark.bit($0) != bit }
    }

    /// Whether a further set of `a` would skip the registry now (its property is marked).
    var aIsMarked: Bool {
        guard let registry = existingRegistry else { return false }
        return registry.settledMark.load(ordering: .sequentiallyConsistent) & SettledMark.bit(_a.serial) != 0
    }
}

/// A computed value's dependencies on its own object, while the value is invalid and nothing
/// computes it (stale), have nothing to invalidate: they no longer keep a further set of their
/// property from being marked settled (`SettledMark`). Whatever makes the value valid again — a
/// computation, a `@Hybrid` set, `forceSyntheticPropertiesValid()` — breaks the mark first, so
/// the set after it invalidates the value again.
@Suite(.threadStress, .serialized) struct SettledComputedTests {
    @Test func aReadOfTheStaleValueBreaksTheMarkSoTheNextSetInvalidatesIt() {
        let queue = CoalescingQueue(target: .manual)
        let model = SettledSum()
        let seen = RelLock<[Int]>([])
        let tokens = [
            model.observe(\.a, queue: queue) { _ in },
            model.observe(\.sum, queue: queue) { model in
                let sum = model.sum
                seen.withLock { $0.append(sum) }
            },
        ]
        #expect(model.sum == 1)
        model.a = 1  // invalidates `sum`; both tokens pending
        model.a = 2  // everything pending or stale: the registry learns the queue, and marks
        if model.markBitIsOwn { #expect(model.aIsMarked) }
        model.a = 3  // skipped
        #expect(model.sum == 4)  // computed again: the mark is broken
        model.a = 10
        #expect(model.sum == 11)
        #expect(queue.drain() == 2)
        #expect(seen.withLock { $0 } == [11])
        withExtendedLifetime(tokens) {}
    }

    @Test func aHybridSetBreaksTheMarkSoTheNextSetInvalidatesIt() {
        let queue = CoalescingQueue(target: .manual)
        let model = SettledSum()
        let token = model.observe(\.a, queue: queue) { _ in }
        #expect(model.tens == 0)
        for value in 1...3 { model.a = value }
        if model.markBitIsOwn { #expect(model.aIsMarked) }
        model.tens = 99  // valid until the next change of `a`
        #expect(model.tens == 99)
        model.a = 5
        #expect(model.tens == 50)
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func forcingTheValueValidBreaksTheMarkSoTheNextSetInvalidatesIt() {
        let queue = CoalescingQueue(target: .manual)
        let model = SettledSum()
        let token = model.observe(\.a, queue: queue) { _ in }
        #expect(model.sum == 1)
        for value in 1...3 { model.a = value }
        if model.markBitIsOwn { #expect(model.aIsMarked) }
        model.forceSyntheticPropertiesValid()
        #expect(model.sum == 1)  // the value it had: forced valid
        model.a = 7
        #expect(model.sum == 8)
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    /// The value stays valid across ticks: a drain (an odd epoch) meanwhile, then marks again.
    @Test func eachTickMarksAgainAndEachReadBreaksIt() {
        let queue = CoalescingQueue(target: .manual)
        let model = SettledSum()
        let sums = RelLock<[Int]>([])
        let token = model.observe(\.sum, queue: queue) { model in
            let sum = model.sum
            sums.withLock { $0.append(sum) }
        }
        let plain = model.observe(\.a, queue: queue) { _ in }
        for tick in 1...4 {
            for value in 1...4 { model.a = tick * 100 + value }
            #expect(model.sum == tick * 100 + 5)
            model.a = tick * 100 + 50
            #expect(queue.drain() == 2)
        }
        #expect(sums.withLock { $0 } == [151, 251, 351, 451])
        withExtendedLifetime((token, plain)) {}
    }

    /// One thread sets `a` (tokens pending, never drained: the marks' epoch stays even, so the
    /// reads move it), another reads `sum`. Whatever the interleaving, the value at the end is
    /// the last set's, and each token is delivered exactly once.
    @Test(.timeLimit(.minutes(1)))
    func setsRacingComputationsNeverLeaveAStaleValueValid() {
        let queue = CoalescingQueue(target: .manual)
        let model = SettledSum()
        let delivered = Atomic<Int>(0)
        let tokens = [
            model.observe(\.a, queue: queue) { _ in delivered.add(1, ordering: .relaxed) },
            model.observe(\.sum, queue: queue) { _ in delivered.add(1, ordering: .relaxed) },
        ]
        #expect(model.sum == 1)
        let total = RelScale.iterations(20_000, tsanDivisor: 10)
        let done = Atomic<Bool>(false)
        let malformed = Atomic<Int>(0)
        let finished = RelThreads.run(count: 2, timeout: 50) { thread in
            if thread == 0 {
                for value in 1...total { model.inputLock.withLock { _ in model.a = value } }
                done.store(true, ordering: .sequentiallyConsistent)
            } else {
                var last = 0
                while !done.load(ordering: .sequentiallyConsistent) {
                    let sum = model.sum
                    // Never older than a value read before (the sets only count up).
                    if sum < last { malformed.add(1, ordering: .relaxed) }
                    last = sum
                }
            }
        }
        #expect(finished)
        #expect(malformed.load(ordering: .relaxed) == 0)
        #expect(model.sum == total + 1)
        #expect(queue.drain() == 2)
        #expect(delivered.load(ordering: .relaxed) == 2)
        withExtendedLifetime(tokens) {}
    }
}
