import Dispatch
import Foundation
import Testing

@testable import ObservationTokens

/// Issue 2, §5 rule d: where and when callbacks run for each delivery target.
@Suite struct DeliveryTargetTests {
    /// What a callback saw about where it ran.
    struct Delivery: Sendable, Equatable {
        var isOnTargetQueue: Bool
        var value: Int
    }

    /// Marks the main queue, so a callback can tell that it runs there.
    ///
    /// On Linux, a process that runs the main queue with `dispatchMain()` (as `swift test` and
    /// any async `main` do) services it from a worker thread, so `Thread.isMainThread` is false
    /// inside main-queue blocks there; the main queue, not the thread, is what the library
    /// promises. `MainActor` code may run in such callbacks (the main actor is the main queue).
    static let mainQueueKey: DispatchSpecificKey<String> = {
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        return key
    }()

    @Test func defaultQueueDeliversOnTheMainQueueWhenSetFromABackgroundThread() async {
        // Given a token on the default queue
        let mainQueueKey = Self.mainQueueKey
        let person = CorePerson()
        let tokenBox = CoreBox<ObservationToken?>(nil)
        let setOnMainQueue = CoreBox<Bool?>(nil)

        // When a background thread sets the property
        let delivery = await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
            let once = CoreOnce()
            tokenBox.value = person.observe(\.age) { person in
                let onMainQueue = DispatchQueue.getSpecific(key: mainQueueKey) == "main"
                let delivery = Delivery(isOnTargetQueue: onMainQueue, value: person.age)
                if once.claim() { continuation.resume(returning: delivery) }
            }
            Thread {
                setOnMainQueue.value = DispatchQueue.getSpecific(key: mainQueueKey) == "main"
                person.age = 42
            }
            .start()
        }
        _ = tokenBox.take(replacingWith: nil)

        // Then the callback ran on the main queue
        #expect(setOnMainQueue.value == false)
        #expect(delivery == Delivery(isOnTargetQueue: true, value: 42))
    }

    @Test func mainQueueCallbacksRunOnTheMainActor() async {
        // Given a token on the default queue whose callback uses main-actor state
        let person = CorePerson()
        let tokenBox = CoreBox<ObservationToken?>(nil)

        // When a background thread sets the property
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let once = CoreOnce()
            tokenBox.value = person.observe(\.age) { person in
                // Traps if the callback is not isolated to the main actor.
                let age = MainActor.assumeIsolated { CoreMainActorState.shared.record(person.age) }
                if once.claim() { continuation.resume(returning: age) }
            }
            Thread { person.age = 7 }.start()
        }
        _ = tokenBox.take(replacingWith: nil)

        // Then it ran isolated to the main actor
        #expect(seen == 7)
    }

    @Test func mainQueueCoalescesSetsMadeInOneTurnOfTheMainQueue() async {
        // Given a token on the main queue
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.age, queue: .main) { _ in calls.increment() }

        // When the property is set 100 times within one main-queue turn, and the queue turns
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async {
                for age in 1...100 { person.age = age }
                continuation.resume()
            }
        }
        await coreMainQueueTurn()
        await coreMainQueueTurn()

        // Then the tick delivered once
        #expect(calls.value == 1)
        withExtendedLifetime(token) {}
    }

    @Test func dispatchTargetDeliversOnItsQueue() async {
        // Given a token delivering to a private queue, recognizable by a specific key
        let key = DispatchSpecificKey<String>()
        let target = DispatchQueue(label: "CoreDeliveryTargetTests.dispatch")
        target.setSpecific(key: key, value: "target")
        let queue = CoalescingQueue(target: .dispatch(target))
        let person = CorePerson()
        let tokenBox = CoreBox<ObservationToken?>(nil)

        // When another thread sets the property
        let delivery = await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
            let once = CoreOnce()
            tokenBox.value = person.observe(\.age, queue: queue) { person in
                let delivery = Delivery(
                    isOnTargetQueue: DispatchQueue.getSpecific(key: key) == "target", value: person.age)
                if once.claim() { continuation.resume(returning: delivery) }
            }
            Thread { person.age = 7 }.start()
        }
        _ = tokenBox.take(replacingWith: nil)

        // Then the callback ran on that queue
        #expect(delivery == Delivery(isOnTargetQueue: true, value: 7))
    }

    @Test func dispatchTargetCoalescesSetsMadeInOneTurnOfItsQueue() async {
        let target = DispatchQueue(label: "CoreDeliveryTargetTests.coalescing")
        let queue = CoalescingQueue(target: .dispatch(target))
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.age, queue: queue) { _ in calls.increment() }

        // When the property is set 100 times within one turn of the target queue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            target.async {
                for age in 1...100 { person.age = age }
                continuation.resume()
            }
        }
        // and the target queue turns (the drain was enqueued behind the block above)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            target.async { continuation.resume() }
        }

        // Then one callback ran
        #expect(calls.value == 1)
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func manualTargetDeliversOnlyWhenDrainedOnTheDrainingThread() async {
        // Given a token on a manual queue
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let threads = CoreRecorder<UInt>()
        let token = person.observe(\.age, queue: queue) { _ in threads.append(coreThreadID()) }

        // When the property is set and the main queue and a dispatch queue both turn
        person.age = 1
        await coreMainQueueTurn()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { continuation.resume() }
        }

        // Then nothing was delivered yet
        #expect(threads.count == 0)
        #expect(queue.pendingCount == 1)

        // When another thread drains
        let drainer = CoreBox<UInt>(0)
        let delivered = CoreBox<Int>(0)
        await coreOnAnotherThread {
            drainer.value = coreThreadID()
            delivered.value = queue.drain()
        }

        // Then the callback ran there, once
        #expect(delivered.value == 1)
        #expect(threads.entries == [drainer.value])
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }
}

/// State only the main actor may touch.
@MainActor
final class CoreMainActorState {
    static let shared = CoreMainActorState()
    private(set) var values: [Int] = []

    func record(_ value: Int) -> Int {
        values.append(value)
        return value
    }
}
