import Dispatch
import Synchronization
import Testing

@testable import ObservationTokens

/// Four copies of one number: a torn read (words from two different values) shows up as
/// fields that differ. 32 bytes, the most a lock-free read covers.
struct SynthQuad: Equatable {
    var a = 0, b = 0, c = 0, d = 0
    init(_ value: Int) { (a, b, c, d) = (value, value, value, value) }
    var isWhole: Bool { a == b && b == c && c == d }
}

/// The queue of `SynthCounter`'s eager recomputations and of the tokens in the serialized suite
/// below (the only tests that observe a `SynthCounter`).
let synthCounterQueue = CoalescingQueue(target: .manual)

/// `@unchecked Sendable`: see ``CorePerson``. Threads set `input` under `inputLock`, and the
/// computations read it under that lock too, as the rules ask of properties set on one thread
/// and read on another (`docs/Tracking.md`, "Threading"): a set and its invalidation are then
/// one step for every computation.
final class SynthCounter: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    let inputLock = RelLock(0)
    @Observed var input = 0
    /// `input`, read under `inputLock`.
    var lockedInput: Int { inputLock.withLock { _ in input } }
    @Computed({ (model: SynthCounter) in
        model.counts.tick("quad")
        return SynthQuad(model.lockedInput)
    })
    var quad: SynthQuad
    @Computed(
        { (model: SynthCounter) in
            model.counts.tick("doubled")
            return model.lockedInput &* 2
        })
    var doubled: Int
    /// Reads `doubled`: invalidated through it.
    @Computed({ (model: SynthCounter) in
        model.counts.tick("label")
        return "\(model.doubled)"
    })
    var label: String
    var quadState: ComputedState<SynthCounter, SynthQuad> { _quad.state }
}

/// Valid values of plain types (up to 32 bytes) are read without a lock (`PublishedWords`):
/// these tests fail if that read returns a torn, stale or unrecorded value.
@Suite("Synthetic: lock-free reads of valid values", .threadStress, .serialized)
struct PublishedValueTests {
    @Test func plainValuesUpToThirtyTwoBytesArePublished() {
        #expect(PublishedWords.covers(Int.self))
        #expect(PublishedWords.covers(Double?.self))
        #expect(PublishedWords.covers(SynthRect.self))
        #expect(PublishedWords.covers(SynthQuad.self))
        #expect(!PublishedWords.covers(String.self))
        #expect(!PublishedWords.covers(SynthCounter.self))
        #expect(!PublishedWords.covers((SynthQuad, Int).self))
    }

    @Test func aPublishedValueIsWithdrawnByAnInvalidationAndReplacedByTheNextRead() {
        let model = SynthCounter()
        let state = model.quadState
        #expect(state.cachedIfValid() == nil)
        #expect(model.quad == SynthQuad(0))
        #expect(state.cachedIfValid() == SynthQuad(0))
        model.input = 7
        #expect(state.cachedIfValid() == nil)
        #expect(model.counts["quad"] == 1)
        #expect(model.quad == SynthQuad(7))
        #expect(model.quad == SynthQuad(7))
        #expect(model.counts["quad"] == 2)
        model.invalidate(\.quad)
        #expect(state.cachedIfValid() == nil)
        state.forceValid()
        #expect(state.cachedIfValid() == SynthQuad(7))
    }

    @Test func aTrackingClosureRecordsAValueItReadsWithoutTheLock() {
        // Given a valid, published value
        let queue = synthCounterQueue
        let model = SynthCounter()
        #expect(model.doubled == 0)
        // When a tracking closure reads it, and its input changes
        let seen = CoreRecorder<Int>()
        let token = model.observe(queue: queue) { model in seen.append(model.doubled) }
        model.input = 4
        #expect(queue.drain() == 1)  // the token (recomputing is not a callback)
        // Then the read was recorded as a dependency: the closure ran again
        #expect(seen.entries.last == 8)
        withExtendedLifetime(token) {}
    }

    @Test func readsRacingSetsNeverSeeATornOrOlderValue() {
        let sets = RelScale.iterations(20_000, tsanDivisor: 20)
        let model = SynthCounter()
        _ = model.quad
        let failures = Atomic<Int>(0)
        let reports = RelLock<[String]>([])
        // Thread 0 sets the input 1…sets; the others read and check each value is whole and
        // no older than the one they read before.
        let finished = RelThreads.run(count: 3, timeout: 60) { index in
            if index == 0 {
                for value in 1...sets { model.inputLock.withLock { _ in model.input = value } }
                return
            }
            var last = 0
            var lastDoubled = 0
            var lastLabel = 0
            for _ in 0..<(sets * 2) {
                let quad = model.quad
                let doubled = model.doubled
                // A string goes through the lock: a computation invalidated while it ran must
                // not replace the newer value another thread cached meanwhile.
                let label = Int(model.label) ?? -1
                // `doubled` (one word) is read without the second look at the sequence that
                // the four-word `quad` needs: it must not go back either.
                var failed: [String] = []
                if !quad.isWhole { failed.append("torn \(quad)") }
                if quad.a < last { failed.append("quad \(quad.a) after \(last)") }
                if doubled % 2 != 0 || doubled < lastDoubled {
                    failed.append("doubled \(doubled) after \(lastDoubled)")
                }
                if label < lastLabel { failed.append("label \(label) after \(lastLabel)") }
                if !failed.isEmpty {
                    failures.add(1, ordering: .relaxed)
                    reports.withLock { $0.append(contentsOf: failed) }
                }
                last = quad.a
                lastDoubled = doubled
                lastLabel = label
            }
        }
        #expect(finished)
        #expect(failures.load(ordering: .relaxed) == 0, "\(reports.withLock { $0.prefix(5) })")
        #expect(model.quad == SynthQuad(sets))
        #expect(model.doubled == sets * 2)
        #expect(model.label == "\(sets * 2)")
    }
}

/// A computed string whose first computation waits for the test's go-ahead: the test decides
/// what happens while it runs. `@unchecked Sendable`: see ``CorePerson``.
final class SynthGatedLabel: ObservableModel, @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let gateFirst = Atomic<Bool>(true)
    @Observed var input = 1
    @Computed({ (model: SynthGatedLabel) in
        let input = model.input
        if model.gateFirst.exchange(false, ordering: .relaxed) {
            model.started.signal()
            model.proceed.wait()
        }
        return "\(input)"
    })
    var label: String
}

/// `label` reads `doubled`, whose first computation waits like ``SynthGatedLabel``'s.
/// `@unchecked Sendable`: see ``CorePerson``.
final class SynthGatedChain: ObservableModel, @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let gateFirst = Atomic<Bool>(true)
    @Observed var input = 1
    @Computed({ (model: SynthGatedChain) in
        let input = model.input
        if model.gateFirst.exchange(false, ordering: .relaxed) {
            model.started.signal()
            model.proceed.wait()
        }
        return input &* 2
    })
    var doubled: Int
    @Computed({ (model: SynthGatedChain) in "\(model.doubled)" }) var label: String
}

@Suite("Synthetic: a computation invalidated while it runs")
struct SyntheticStaleComputationTests {
    @Test func itNeverReplacesTheNewerValueCachedMeanwhile() {
        // Given a computation that read input 1 and is still running
        let model = SynthGatedLabel()
        let done = DispatchSemaphore(value: 0)
        let slowResult = RelLock<String?>(nil)
        DispatchQueue.global().async {
            slowResult.withLock { $0 = model.label }
            done.signal()
        }
        model.started.wait()
        // When the input changes and another read caches the current value
        model.input = 2
        #expect(model.label == "2")
        model.proceed.signal()
        done.wait()
        // Then the slow computation returned what it computed, but the cache kept the newer
        // value, still valid
        #expect(slowResult.withLock { $0 } == "1")
        #expect(model.validSyntheticPropertyNames.contains("label"))
        #expect(model.label == "2")
    }

    @Test func aDependantReadingItIsInvalidatedToo() {
        // Given `label` computing, inside `doubled`'s first computation (which read input 1)
        let model = SynthGatedChain()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = model.label
            done.signal()
        }
        model.started.wait()
        // When the input changes then (`doubled` has no valid value to withdraw)
        model.input = 2
        model.proceed.signal()
        done.wait()
        // Then `label`, built from the stale "2", is not left valid
        #expect(!model.validSyntheticPropertyNames.contains("label"))
        #expect(model.label == "4")
    }
}
