import Testing

@testable import ObservationTokens

/// A box the two threads of a round share: each touches only its own field.
///
/// `@unchecked Sendable`: `person` belongs to thread 0, `tokens` to thread 1, and the test reads
/// neither until both have joined.
private final class DeinitRaceRound: @unchecked Sendable {
    var person: CorePerson?
    var tokens: [ObservationToken]

    init(person: CorePerson, tokens: [ObservationToken]) {
        self.person = person
        self.tokens = tokens
    }
}

/// A `weak` reference to a probe, to tell when the last callback capturing it was released.
private struct WeakProbe {
    weak var object: CoreProbe?
    init(_ object: CoreProbe) { self.object = object }
}

@Suite(.threadStress, .serialized) struct DeinitRaceTests {
    /// A model's deinit takes its tokens' subscriptions out under its registry's lock and tells
    /// them after; a token ending at that moment on another thread skips the lock once the model
    /// is dead, and its subscription may be freed at once. The deinit must hold every one it took
    /// before it says so (a token that saw it first freed a subscription the deinit was about to
    /// retain: a crash).
    @Test func tokensDroppedOnAnotherThreadWhileTheirObjectDeinitializesEndSafely() {
        // Given objects with few tokens (taken out onto the stack) and many (into a list)
        let rounds = RelScale.iterations(400, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        var released = 0
        var finishedRounds = 0
        for round in 0..<rounds {
            let (box, weakProbe) = Self.makeRound(tokens: round.isMultiple(of: 2) ? 12 : 96, queue: queue)

            // When one thread drops the object while another drops its tokens
            let finished = RelThreads.run(count: 2, timeout: 20) { index in
                if index == 0 { box.person = nil } else { box.tokens.removeAll() }
            }
            guard finished else { break }
            finishedRounds += 1
            if weakProbe.object == nil { released += 1 }
        }

        // Then every round finished, and released every callback (no token outlived both)
        #expect(finishedRounds == rounds)
        #expect(released == rounds)
        #expect(queue.drain() == 0)
    }

    /// An object with `count` tokens whose callbacks capture one probe, owned by the box alone.
    private static func makeRound(tokens count: Int, queue: CoalescingQueue) -> (DeinitRaceRound, WeakProbe) {
        let probe = CoreProbe()
        let person = CorePerson()
        let tokens = (0..<count).map { index in
            index.isMultiple(of: 2)
                ? person.observe(\.firstName, queue: queue) { [probe] _ in probe.touch() }
                : person.observe(\.lastName, queue: queue) { [probe] _ in probe.touch() }
        }
        return (DeinitRaceRound(person: person, tokens: tokens), WeakProbe(probe))
    }
}
