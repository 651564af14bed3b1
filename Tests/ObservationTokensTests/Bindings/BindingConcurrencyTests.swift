import Testing

@testable import ObservationTokens

/// Issue 13: bindings are created, dropped and ended from several threads at once; totals are
/// exact and the thread sanitizer sees no race in the library's bookkeeping.
@Suite(.threadStress, .serialized) struct BindingConcurrencyTests {
    /// What one racing thread keeps; read after the threads end.
    ///
    /// `@unchecked Sendable`: each slot is touched by its one thread only while they run (one
    /// object per thread: threads mutating elements of one shared array would race on the array).
    final class Slot: @unchecked Sendable {
        var labels: [BindLabel] = []
        var kept: [ObservationToken] = []
    }

    @Test func bindingsCreatedAndDroppedOnManyThreadsDeliverExactlyToTheLiveOnes() {
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson()
        // The first token on a property reads it; make that happen before the race.
        let warmUp = source.pipeline(of: \.age).post(options: [], queue: queue) { _ in }
        let threads = 4
        let perThread = RelScale.iterations(400, tsanDivisor: 8)
        let slots = (0..<threads).map { _ in Slot() }

        let finished = RelThreads.run(count: threads, timeout: 60) { index in
            for step in 0..<perThread {
                let label = BindLabel()
                let token = source.pipeline(of: \.age).map { $0 + 1 }.bind(
                    to: label, \.count, options: [], queue: queue)
                if step % 2 == 0 {
                    slots[index].labels.append(label)
                    slots[index].kept.append(token)
                } else if step % 4 == 1 {
                    token.invalidate()
                }
            }
        }
        #expect(finished)
        source.age = 41
        let delivered = queue.drain()

        let keptCount = threads * ((perThread + 1) / 2)
        #expect(delivered == keptCount + 1)  // + the warm-up posting
        #expect(slots.flatMap(\.labels).allSatisfy { $0.count == 42 })
        #expect(source.observerCount(of: \.age) == keptCount + 1)
        for slot in slots { slot.kept = [] }
        #expect(source.observerCount(of: \.age) == 1)
        withExtendedLifetime(warmUp) {}
    }

    @Test func destinationDeinitRacingTokenDropEndsOnceAndLeaksNothing() {
        let queue = CoalescingQueue(target: .manual)
        let rounds = RelScale.iterations(200, tsanDivisor: 4)
        for _ in 0..<rounds {
            final class Round: @unchecked Sendable {  // each field is dropped by one thread
                var source: BindPerson? = BindPerson(name: "a")
                var destination: BindPerson? = BindPerson()
                var token: ObservationToken?
            }
            let round = Round()
            round.token = round.source!.bindTwoWay(\.name, with: round.destination!, \.name, queue: queue)
            weak let weakToken = round.token
            weak let weakDestination = round.destination
            let finished = RelThreads.run(count: 3, timeout: 10) { index in
                switch index {
                case 0: round.destination = nil
                case 1: round.token = nil
                default: round.source!.name = "b"
                }
            }
            #expect(finished)
            queue.drain()
            #expect(weakToken == nil)
            #expect(weakDestination == nil)
            #expect(round.source!.attachedEdgeCount == 0)
        }
    }
}
