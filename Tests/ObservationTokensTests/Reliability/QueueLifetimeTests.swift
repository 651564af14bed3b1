import Foundation
import Testing

@testable import ObservationTokens

/// What the two threads of a round share: thread 0 sets `person`'s property, thread 1 owns
/// `queue` and `token` and lets go of both.
///
/// `@unchecked Sendable`: `person` is only read (its property writes are the library's own
/// business, under test), `queue` and `token` belong to thread 1, and the test reads them only
/// after both threads have joined.
private final class QueueLifetimeRound: @unchecked Sendable {
    let person = CorePerson()
    var queue: CoalescingQueue?
    var token: ObservationToken?
    weak var weakQueue: CoalescingQueue?

    /// Whether the queue has been freed, once nobody else holds its subscription.
    ///
    /// Both threads have let go of it when this is asked, but another test running at the same
    /// time may hold the subscription for a moment: a debugging census retains every live
    /// subscription of the process while it builds its report (seen in 2 to 5 of 20,000 rounds
    /// with the Debugging suites running beside this one), and then the census frees it. So a
    /// queue still alive is given up to 10 s to go; one that stays is leaked.
    func isFreed() -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while weakQueue != nil {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    init(delivered: RelLock<Int>) {
        let queue = CoalescingQueue(target: .manual)
        self.queue = queue
        weakQueue = queue
        token = person.observe(\.firstName, queue: queue) { _ in delivered.withLock { $0 += 1 } }
    }
}

@Suite(.threadStress, .serialized) struct QueueLifetimeTests {
    /// A set's first enqueue borrows the queue from its subscription instead of retaining it, so
    /// a drain on another thread may deliver the item, and the last owners of the token and the
    /// queue may let go of both, while the setting thread is still leaving the queue's lock.
    /// Nothing may touch the queue after that unlock: under the thread sanitizer a touch is a
    /// use after free; without it, a crash in some rounds.
    @Test func aQueueFreedOnAnotherThreadRightAfterASetEnqueuedOnItLeavesTheSetUnharmed() {
        // Given rounds in which the only owners of a manual queue are a box and the queue's one token
        let rounds = RelScale.iterations(2_000, tsanDivisor: 10)
        let delivered = RelLock(0)
        var freedQueues = 0
        var finishedRounds = 0
        for round in 0..<rounds {
            let box = QueueLifetimeRound(delivered: delivered)

            // When one thread sets the property (the tick's first set: it enqueues), and another
            // drains as soon as the item is there, then drops the token and the queue
            let finished = RelThreads.run(count: 2, timeout: 20) { index in
                if index == 0 {
                    box.person.firstName = "set \(round)"
                } else {
                    // Spins until the set's item is in the queue; the set always comes.
                    while box.queue!.drain() == 0 {}
                    box.token = nil
                    box.queue = nil
                }
            }
            guard finished else { break }
            finishedRounds += 1
            if box.isFreed() { freedQueues += 1 }
        }

        // Then every round finished with one delivery, and its queue was freed
        #expect(finishedRounds == rounds)
        #expect(delivered.withLock { $0 } == rounds)
        #expect(freedQueues == rounds)
    }
}
