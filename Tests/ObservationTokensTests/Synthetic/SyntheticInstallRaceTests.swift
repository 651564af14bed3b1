import Synchronization
import Testing

@testable import ObservationTokens

/// A computed property whose computation can make a change to its own input right after reading
/// it: the change lands exactly where another thread's set would in the install race (after
/// the first computation read the input, before its dependency edges existed).
final class SynthRacer: ObservableModel, @unchecked Sendable {  // one thread at a time in these tests
    @Observed var input = 1
    /// Set by the test: the value to give `input` right after the computation reads it, once.
    let interleave = Atomic<Int>(0)
    let computations = Atomic<Int>(0)

    @Computed({ (model: SynthRacer) in
        model.computations.add(1, ordering: .relaxed)
        let read = model.input
        let next = model.interleave.exchange(0, ordering: .relaxed)
        if next != 0 { model.input = next }  // "another thread" sets it now
        return read * 2
    })
    var doubled: Int
}

/// Issue 12, the first-compute install race: a dependency set between the computation's read
/// and the wiring of its dependency edges must still invalidate the value.
@Suite("Synthetic: the first-compute install race")
struct SyntheticInstallRaceTests {
    @Test func aSetRightAfterTheFirstComputationsReadInvalidatesTheValue() {
        let racer = SynthRacer()
        racer.interleave.store(5, ordering: .relaxed)

        // The first computation reads 1, then the input becomes 5 before it returns
        #expect(racer.doubled == 2)

        // Then the value is not left valid: the next read computes again, from 5
        #expect(racer.doubled == 10)
        #expect(racer.computations.load(ordering: .relaxed) == 2)
        #expect(racer.doubled == 10)
        #expect(racer.computations.load(ordering: .relaxed) == 2)  // valid from then on
    }

    @Test func aSetDuringALaterComputationInvalidatesThroughTheEdgeThatExists() {
        let racer = SynthRacer()
        #expect(racer.doubled == 2)
        racer.input = 2  // invalidates through the edge that exists now
        racer.interleave.store(7, ordering: .relaxed)
        #expect(racer.doubled == 4)
        #expect(racer.doubled == 14)
    }
}
