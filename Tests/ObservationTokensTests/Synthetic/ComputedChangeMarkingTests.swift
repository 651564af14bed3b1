import Testing

@testable import ObservationTokens

/// `@unchecked Sendable`: set and read on the test's thread only.
private final class MarkedParity: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = 0
    @Computed({ (model: MarkedParity) in model.a + model.b }) var sum: Int
    @Computed({ (model: MarkedParity) in model.sum % 2 }) var parity: Int
}

/// `Registry.computedDidChange` marks the tokens on an invalidated value for their check: one
/// token alone on the value by the scan that checked it, several by a second scan. Either way
/// each token is queued once per tick and calls back only when the value it saw moved.
@Suite struct ComputedChangeMarkingTests {
    @Test func aLoneTokenOnTheValueIsQueuedByTheInvalidationAndComparesAtItsDelivery() {
        let queue = CoalescingQueue(target: .manual)
        let model = MarkedParity()
        let seen = RelLock<[Int]>([])
        let token = model.observe(\.parity, queue: queue) { model in
            let parity = model.parity
            seen.withLock { $0.append(parity) }
        }
        #expect(model.parity == 0)
        model.a = 1  // parity 1
        #expect(queue.drain() == 1)
        model.a = 3  // parity 1 again: checked, no callback
        #expect(queue.drain() == 0)
        model.a = 4
        model.b = 1  // parity 1: moved and back within the tick, no callback
        #expect(queue.drain() == 0)
        model.b = 2  // parity 0
        model.b = 4  // still 0: one callback for the tick
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)
        #expect(seen.withLock { $0 } == [1, 0])
        withExtendedLifetime(token) {}
    }

    @Test func severalTokensOnTheValueAreEachQueuedOncePerTick() {
        let queues = [CoalescingQueue(target: .manual), CoalescingQueue(target: .manual)]
        let model = MarkedParity()
        let counts = RelLock<[Int]>([0, 0, 0])
        let tokens = [
            model.observe(\.parity, queue: queues[0]) { _ in counts.withLock { $0[0] += 1 } },
            model.observe(\.parity, queue: queues[1]) { _ in counts.withLock { $0[1] += 1 } },
            model.observe(\.parity, queue: queues[1]) { _ in counts.withLock { $0[2] += 1 } },
        ]
        #expect(model.parity == 0)
        model.a = 1
        model.a = 2
        model.a = 5
        #expect(queues[0].drain() == 1)
        #expect(queues[1].drain() == 2)
        model.a = 7  // parity unchanged
        #expect(queues[0].drain() == 0)
        #expect(queues[1].drain() == 0)
        #expect(counts.withLock { $0 } == [1, 1, 1])
        withExtendedLifetime(tokens) {}
    }

    /// W20's shape: the token is also on the inputs, so the set has queued it already and the
    /// invalidation only marks its check.
    @Test func aTokenOnTheInputsAndTheValueCallsBackOncePerTick() {
        let queue = CoalescingQueue(target: .manual)
        let model = MarkedParity()
        let calls = RelLock(0)
        let token = model.observe([\.a, \.b, \.parity], queue: queue) { _ in calls.withLock { $0 += 1 } }
        #expect(model.parity == 0)
        model.a = 1
        model.b = 1
        model.a = 2
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)
        model.b = 5
        #expect(queue.drain() == 1)
        #expect(calls.withLock { $0 } == 2)
        withExtendedLifetime(token) {}
    }
}
