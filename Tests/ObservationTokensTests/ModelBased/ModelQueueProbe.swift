import Testing

@testable import ObservationTokens

// Which bindings that write a model wait in their queue: the one thing the model-based test
// reads from inside the library.
//
// The binding rules decide whether a binding's turn in a drain pushes; a turn that pushes
// nothing (its destination holds a later change, or its computed source turned out unchanged)
// runs no code of the program's, so nothing tells the reference model where in the drain it
// was, and what happened before it decides its outcome. The order of turns is the library's
// (the order tokens first became pending); the model checks the outcome of each turn at the
// place the library gave it, found by looking at this probe at every event.

/// The subscriptions of the bindings that write a model, by token label.
final class ModelQueueProbe: Sendable {
    private struct Entry: @unchecked Sendable {  // subscriptions are immutable references, read atomically
        let main: Subscription
        let inputs: [Subscription]
    }

    private let entries = RelLock<[Int: Entry]>([:])

    /// Watches the binding `token` (label `k`): its own subscription and, for a
    /// `combineLatest` binding, its inputs' subscriptions in order.
    func watch(_ k: Int, _ token: ObservationToken) {
        let main = token.subscription
        var inputs: [Subscription] = []
        if let link = main as? LinkSubscription, let group = link.group {
            for part in group.debugMembers.parts {
                guard let part = part as? LinkSubscription, case .source = part.role else { continue }
                inputs.append(part)
            }
        }
        entries.withLock { $0[k] = Entry(main: main, inputs: inputs) }
    }

    func removeAll() {
        entries.withLock { $0 = [:] }
    }

    /// Which of the watched bindings wait in their queue now.
    func snapshot() -> ModelQueuedBindings {
        let entries = entries.withLock { $0 }
        var queued: ModelQueuedBindings = [:]
        for (k, entry) in entries where entry.main.isActive {
            var bits: UInt8 = entry.main.modelIsQueued ? 1 : 0
            for (index, input) in entry.inputs.enumerated() where input.modelIsQueued { bits |= 2 << index }
            if bits != 0 { queued[k] = bits }
        }
        return queued
    }
}

extension Subscription {
    /// Whether the subscription is in its queue, waiting for its turn in a drain (pending, or
    /// checking a computed value it watches): the `queued` bit of its flag word
    /// (`Subscription.Flag.queued`). `ModelQueueProbeTests` fails if that bit moves.
    fileprivate var modelIsQueued: Bool {
        flags.load(ordering: .acquiring) & (1 << 5) != 0
    }
}

/// The probe the model-based test relies on sees bindings wait for their turn, and sees them
/// leave the queue when it comes.
@Suite(.serialized) struct ModelQueueProbeTests {
    @Test func theProbeSeesABindingWaitUntilItsTurn() {
        // Given a binding of a stored property, a binding of a computed one and a combined one
        let log = ModelEventLog()
        let source = MNode(label: 0, log: log)
        let destination = MNode(label: 1, log: log)
        let hub = MHub(label: 0, log: log)
        let queue = CoalescingQueue(target: .manual)
        let probe = ModelQueueProbe()
        let stored = source.pipeline(of: \.x).bind(to: destination, \.z, options: [], queue: queue)
        let computed = source.pipeline(of: \.t).bind(to: hub, \.w, options: [], queue: queue)
        let combined = ValuePipeline.combineLatest(source.pipeline(of: \.x), destination.pipeline(of: \.y)) { $0 + $1 }
            .bind(to: destination, \.z, options: [], queue: queue)
        probe.watch(0, stored)
        probe.watch(1, computed)
        probe.watch(2, combined)
        #expect(probe.snapshot().isEmpty)

        // When the source changes
        source.x = 1

        // Then each waits for its turn (the combined one at its input), and none after the drain
        #expect(probe.snapshot() == [0: 1, 1: 1, 2: 2])
        queue.drain()
        #expect(probe.snapshot().isEmpty)
        #expect(queue.pendingCount == 0)
        withExtendedLifetime((stored, computed, combined)) {}
    }
}
