import Dispatch
import Testing

@testable import ObservationTokens

/// Issue 14 §1: callbacks isolated to the main actor, for every observe form, with no
/// `MainActor.assumeIsolated` in user code.
@MainActor @Suite struct IsolationTests {
    @Test func everyObserveFormRunsItsCallbackOnTheMainActorInsideAMainActorDrain() throws {
        // Given one main-actor token of each form on a manual queue
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        person.address = ConcAddress()
        let viewModel = ConcViewModel()
        let main = MainActor.shared
        let zipCode = KeyPathChain(\ConcPerson.address).then(\.zipCode)
        var tokens: [ObservationToken] = []
        tokens.append(person.observe(\.name, queue: queue, isolation: main) { _ in viewModel.record("property") })
        tokens.append(
            person.observe(\.name, observer: viewModel, queue: queue, isolation: main) { vm, person in
                vm.record("observer " + person.name)
            })
        tokens.append(person.observe([\.name, \.age], queue: queue, isolation: main) { _ in viewModel.record("keys") })
        tokens.append(
            person.observe([\.name, \.age], observer: viewModel, queue: queue, isolation: main) { vm, _ in
                vm.record("keys observer")
            })
        tokens.append(
            person.observe([\.name, \.age], queue: queue, isolation: main) { _ in viewModel.record("variadic") })
        tokens.append(
            person.observe(.changes(\.name), queue: queue, isolation: main) { _, change in
                viewModel.record("change \(change.old)->\(change.new)")
            })
        tokens.append(
            person.observe(.chain(zipCode), queue: queue, isolation: main) { _, zip in
                viewModel.record("chain \(zip ?? "nil")")
            })
        tokens.append(
            person.observe(.chain(zipCode), observer: viewModel, queue: queue, isolation: main) { vm, _, _ in
                vm.record("chain observer")
            })
        tokens.append(
            person.observe(.chains([AnyKeyPathChain(zipCode)]), queue: queue, isolation: main) { _ in
                viewModel.record("chains")
            })
        tokens.append(
            try person.observe(.path("address.zipCode"), queue: queue, isolation: main) { _ in viewModel.record("path")
            }
        )
        tokens.append(
            try person.observe(.paths(["name", "address.zipCode"]), queue: queue, isolation: main) { _ in
                viewModel.record("paths")
            })
        tokens.append(
            try person.observe(.path("name"), observer: viewModel, queue: queue, isolation: main) { vm, _ in
                vm.record("path observer")
            })
        person.tell(viewModel, when: \.name, queue: queue, isolation: main) { vm, _ in vm.record("tell") }
        person.tell(viewModel, whenAnyOf: [\.name, \.age], queue: queue, isolation: main) { vm, _ in
            vm.record("tell any")
        }

        // When the watched properties change and the main actor drains the queue
        person.name = "Ada"
        person.address?.zipCode = "97210"
        let delivered = queue.drain()

        // Then every callback ran once, synchronously, inside the drain
        #expect(delivered == 14)
        #expect(viewModel.calls == 14)
        #expect(
            Set(viewModel.log)
                == [
                    "property", "observer Ada", "keys", "keys observer", "variadic", "change ->Ada", "chain 97210",
                    "chain observer", "chains", "path", "paths", "path observer", "tell", "tell any",
                ])
        person.stopTelling(viewModel)
        withExtendedLifetime(tokens) {}
    }

    @Test func mainQueueDeliveryCoalescesAndRunsOnTheMainActor() async {
        // Given a main-actor token on the default `.main` queue
        let person = ConcPerson()
        let viewModel = ConcViewModel()
        let token = person.observe(\.age, observer: viewModel, isolation: MainActor.shared) { vm, person in
            vm.record("\(person.age)")
        }

        // When the property changes 100 times in this main-queue turn, and the queue turns
        for age in 1...100 { person.age = age }
        await concMainQueueTurn()

        // Then one callback saw the last value
        #expect(viewModel.log == ["100"])
        withExtendedLifetime(token) {}
    }

    @Test func aDrainOffTheMainActorHopsToTheMainQueue() async {
        // Given a main-actor token on a manual queue
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        let viewModel = ConcViewModel()
        let ran = Counter()
        let token = person.observe(\.name, observer: viewModel, queue: queue, isolation: MainActor.shared) {
            vm, person in
            #expect(MainActorDelivery.isOnMainActor)
            ran.increment()
            vm.record(person.name)
        }
        person.name = "hop"

        // When another thread drains the queue while the main queue is busy (this test waits)
        let seen = concOnOtherThread {
            let delivered = queue.drain()
            return [delivered, ran.value]
        }

        // Then the drain counted the delivery and only scheduled it; the main queue runs it
        #expect(seen == [1, 0])
        await concMainQueueTurn()
        #expect(viewModel.log == ["hop"])
        withExtendedLifetime(token) {}
    }

    @Test func aHoppedDeliveryIsSkippedWhenTheTokenEndedBeforeItRan() async {
        // Given a main-actor token on a manual queue
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        let viewModel = ConcViewModel()
        let token = person.observe(\.name, observer: viewModel, queue: queue, isolation: MainActor.shared) {
            vm, person in vm.record(person.name)
        }
        person.name = "late"

        // When another thread drains (scheduling the hop) and ends the token before the main
        // queue can run it
        _ = concOnOtherThread {
            queue.drain()
            token.invalidate()
            return [Int]()
        }
        await concMainQueueTurn()

        // Then the callback never runs
        #expect(viewModel.calls == 0)
    }

    @Test func aDispatchQueueDeliveryCoalescesThenHopsToTheMainActor() async {
        // Given a main-actor token delivering through a private dispatch queue
        let target = DispatchQueue(label: "IsolationTests.dispatch")
        let queue = CoalescingQueue(target: .dispatch(target))
        let person = ConcPerson()
        let viewModel = ConcViewModel()
        let token = person.observe(\.age, observer: viewModel, queue: queue, isolation: MainActor.shared) {
            vm, person in vm.record("\(person.age)")
        }

        // When the property changes 50 times in one tick (inside a block on the target queue, so
        // the drain the first set schedules runs after all 50), the target drains, and the main
        // queue turns
        target.sync {
            for age in 1...50 { person.age = age }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            target.async { continuation.resume() }  // runs after the scheduled drain
        }
        await concMainQueueTurn()

        // Then the tick coalesced on the dispatch queue and the callback ran once, on the main actor
        #expect(viewModel.log == ["50"])
        withExtendedLifetime(token) {}
    }

    @Test func initialDeliveryFromTheMainActorIsSynchronous() {
        // Given a model with a value
        let person = ConcPerson()
        person.name = "now"
        let viewModel = ConcViewModel()

        // When a main-actor token with `.initial` is created on the main actor
        let token = person.observe(\.name, observer: viewModel, options: .initial, isolation: MainActor.shared) {
            vm, person in vm.record(person.name)
        }

        // Then it delivered before `observe` returned
        #expect(viewModel.log == ["now"])
        withExtendedLifetime(token) {}
    }

    @Test func theCallbackIsReleasedWhenTheTokenEnds() {
        // Given a main-actor token whose callback holds an object
        let person = ConcPerson()
        weak var weakHeld: ConcViewModel?
        var token: ObservationToken?
        do {
            let held = ConcViewModel()
            weakHeld = held
            token = person.observe(\.name, isolation: MainActor.shared) { _ in held.record("x") }
        }
        #expect(weakHeld != nil)

        // When the token ends
        token?.invalidate()
        token = nil

        // Then the callback and what it captured are gone (no cycle through the gate)
        #expect(weakHeld == nil)
    }

    @Test func nonisolatedCallbacksStillChooseTheNonisolatedForm() {
        // Given a plain callback without `isolation:`
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        let calls = Counter()
        let token = person.observe(\.age, queue: queue) { _ in calls.increment() }

        // When a background-safe drain delivers it
        person.age = 1
        queue.drain()

        // Then it ran as before
        #expect(calls.value == 1)
        withExtendedLifetime(token) {}
    }
}

/// A thread-safe counter for nonisolated callbacks.
final class Counter: Sendable {
    private let storage = RelLock(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.withLock { $0 } }
}
