import Synchronization
import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The install race (swift#82774): a dependency set on another thread between an evaluation's
/// read and the wiring of its edge must still be delivered.
///
/// Each round forces the set into that window, without sleeping: the tracked closure, once per
/// round and after its reads, tells the setting thread it has read and waits until the set is
/// done. The library attaches each new edge as the read is recorded, before the value is read
/// (and re-evaluates if one could only be attached afterwards); an edge attached after the read
/// with nothing re-evaluated would lose the round's value, and the setting thread's bounded
/// wait would fail.
@Suite(.threadStress, .serialized) struct TrackingRaceTests {
    /// Shared between the setting thread and the draining thread. The models' values are read
    /// and written only under `lock`, as a user who sets properties on one thread and reads
    /// them on another must do.
    private final class Shared: @unchecked Sendable {  // models only touched under `lock`
        // An Int, not `()`: with a zero-sized state TSan once reported a "Swift access race" inside
        // `withLock` between two accesses made under the lock.
        let lock = RelLock(0)
        let queue = CoalescingQueue(target: .manual)
        /// The round the setting thread is in (0: none yet).
        let round = Atomic<Int>(0)
        /// The last round whose read the closure reported, and the last round whose set is done.
        let readDone = Atomic<Int>(0)
        let setDone = Atomic<Int>(0)
        let delivered = Atomic<Int>(-1)
        let settingDone = Atomic<Bool>(false)
        let stuck = Atomic<Int>(-1)

        static let spinLimit = 5_000_000

        /// In the tracked closure, after its reads: the first evaluation in a round hands over
        /// to the setting thread and waits for its set.
        func handOverOncePerRound() {
            let round = round.load(ordering: .acquiring)
            guard round > 0, readDone.load(ordering: .relaxed) < round else { return }
            readDone.store(round, ordering: .releasing)
            wait { setDone.load(ordering: .acquiring) >= round }
        }

        /// Spins (yielding) until `condition`; records the round and returns false past the limit.
        @discardableResult
        func wait(_ condition: () -> Bool) -> Bool {
            var spins = 0
            while !condition() {
                spins += 1
                if spins > Self.spinLimit || settingDone.load(ordering: .relaxed) && stuck.load(ordering: .relaxed) >= 0
                {
                    stuck.store(round.load(ordering: .relaxed), ordering: .relaxed)
                    return false
                }
                sched_yield()
            }
            return true
        }

        /// The draining thread: drains until the setting thread is done.
        func drainUntilDone() {
            while !settingDone.load(ordering: .acquiring) {
                _ = queue.drain()
                sched_yield()
            }
            _ = queue.drain()
        }
    }

    @Test func aNewDependencySetBetweenReadAndWiringIsDelivered() {
        // Given a value token on `hub.next?.value`, drained on another thread
        let rounds = RelScale.iterations(2_000, tsanDivisor: 10)
        let shared = Shared()
        let hub = TrackNode()
        let token = hub.observe(
            .value({ hub in
                let value = shared.lock.withLock { _ in hub.next?.value ?? 0 }
                shared.handOverOncePerRound()
                return value
            }), queue: shared.queue
        ) { _, value in shared.delivered.store(value, ordering: .releasing) }
        let lastNode = CoreBox<TrackNode?>(nil)

        // When each round points `hub.next` at a fresh node, and sets that node's value after
        // the drain's evaluation read it and before its edge is attached
        let finished = RelThreads.run(count: 2, timeout: 120) { index in
            guard index == 0 else { return shared.drainUntilDone() }
            defer { shared.settingDone.store(true, ordering: .releasing) }
            for round in 1...rounds {
                let node = TrackNode()
                shared.round.store(round, ordering: .releasing)
                shared.lock.withLock { _ in hub.next = node }
                guard shared.wait({ shared.readDone.load(ordering: .acquiring) >= round }) else { return }
                shared.lock.withLock { _ in node.value = round }
                shared.setDone.store(round, ordering: .releasing)
                lastNode.value = node
                guard shared.wait({ shared.delivered.load(ordering: .acquiring) == round }) else { return }
            }
        }

        // Then every round's value was delivered, and the token watches exactly the last node
        #expect(finished)
        #expect(shared.stuck.load(ordering: .relaxed) == -1)
        #expect(shared.delivered.load(ordering: .relaxed) == rounds)
        let last = lastNode.value!
        #expect(last.observerCount(of: \.value) == 1)
        #expect(hub.observerCount(of: \.next) == 1)
        last.value = 42
        #expect(shared.queue.drain() == 1)
        #expect(shared.delivered.load(ordering: .relaxed) == 42)
        withExtendedLifetime(token) {}
    }

    @Test func aBranchSwitchRacingASetOfTheNewBranchIsDelivered() {
        // Given a tracking closure that reads `lastName` or `firstName`, drained on another thread
        let rounds = RelScale.iterations(2_000, tsanDivisor: 10)
        let shared = Shared()
        let person = TrackPerson()
        let token = person.observe(queue: shared.queue) { person in
            let value = shared.lock.withLock { _ in person.showsLastName ? person.lastName : person.firstName }
            shared.handOverOncePerRound()
            shared.delivered.store(Int(value) ?? -1, ordering: .releasing)
        }

        // When each round switches the branch, and sets the newly read property after the
        // drain's run read it and before its edge is attached
        let finished = RelThreads.run(count: 2, timeout: 120) { index in
            guard index == 0 else { return shared.drainUntilDone() }
            defer { shared.settingDone.store(true, ordering: .releasing) }
            for round in 1...rounds {
                shared.round.store(round, ordering: .releasing)
                let showsLastName = shared.lock.withLock { _ in
                    person.showsLastName.toggle()
                    return person.showsLastName
                }
                guard shared.wait({ shared.readDone.load(ordering: .acquiring) >= round }) else { return }
                shared.lock.withLock { _ in
                    if showsLastName { person.lastName = "\(round)" } else { person.firstName = "\(round)" }
                }
                shared.setDone.store(round, ordering: .releasing)
                guard shared.wait({ shared.delivered.load(ordering: .acquiring) == round }) else { return }
            }
        }

        // Then no round's value was lost, and only the current branch is watched
        #expect(finished)
        #expect(shared.stuck.load(ordering: .relaxed) == -1)
        #expect(shared.delivered.load(ordering: .relaxed) == rounds)
        let watched = person.showsLastName ? \TrackPerson.lastName : \TrackPerson.firstName
        let other = person.showsLastName ? \TrackPerson.firstName : \TrackPerson.lastName
        #expect(person.observerCount(of: watched) == 1)
        #expect(person.observerCount(of: other) == 0)
        withExtendedLifetime(token) {}
    }
}
