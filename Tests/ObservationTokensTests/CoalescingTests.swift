import Dispatch
import Foundation
import Testing

@testable import ObservationTokens

/// Issue 2, §5: the central coalescing queue, rules a–e, plus the pending-delivery retain.
@Suite struct CoalescingTests {
    // MARK: Rule a — at most once per token per tick

    @Test func thousandSetsInOneTickMakeOneCallback() {
        // Given a token
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in seen.append(person.age) }

        // When the property is set 1,000 times in one tick
        for age in 1...1_000 { person.age = age }

        // Then one callback runs, seeing the last value
        #expect(queue.pendingCount == 1)
        #expect(queue.drain() == 1)
        #expect(seen.entries == [1_000])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func severalPropertiesOfOneTokenMakeOneCallbackPerTick() {
        // Given tokens over several properties, in the array, variadic and observer forms
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        let arrayCalls = CoreCounter()
        let variadicCalls = CoreCounter()
        let array = person.observe([\.firstName, \.lastName, \.age], queue: queue) { _ in arrayCalls.increment() }
        let variadic = person.observe([\.firstName, \.lastName, \.age], queue: queue) { _ in variadicCalls.increment() }
        let withObserver = person.observe([\.firstName, \.lastName, \.age], observer: observer, queue: queue) {
            observer, _ in observer.calls.append("call")
        }

        // When all of them change, many times, in one tick
        for index in 1...100 {
            person.firstName = "first \(index)"
            person.lastName = "last \(index)"
            person.age = index
        }

        // Then each token is delivered once
        #expect(queue.drain() == 3)
        #expect(arrayCalls.value == 1)
        #expect(variadicCalls.value == 1)
        #expect(observer.calls.count == 1)

        // And again once in the next tick
        person.lastName = "Lovelace"
        person.age = 36
        #expect(queue.drain() == 3)
        #expect(arrayCalls.value == 2)
        withExtendedLifetime((array, variadic, withObserver)) {}
    }

    @Test func aSteadyTickOfManyDeliveriesReusesItsListAndABurstsListIsFreed() {
        // Given 2,000 tokens on one queue, each on an object of its own
        let queue = CoalescingQueue(target: .manual)
        let people = (0..<2_000).map { _ in CorePerson() }
        let tokens = people.map { $0.observe(\.age, queue: queue) { _ in } }

        // When a tick sets every object, and drains
        for person in people { person.age += 1 }
        #expect(queue.drain() == 2_000)

        // Then the next tick's list has room for as many deliveries already
        #expect(queue.itemsCapacity >= 2_000)

        // When a tick sets ten of them, and drains
        for person in people.prefix(10) { person.age += 1 }
        #expect(queue.drain() == 10)

        // Then the big list is freed, not kept for the next tick
        #expect(queue.itemsCapacity <= CoalescingQueue.keptCapacityAlways)
        withExtendedLifetime(tokens) {}
    }

    @Test func aQueueReleasedWithItemsPendingReleasesThem() {
        // Given a queue that goes away with a notice pending, and a list grown past its first size
        final class Captured: Sendable {}
        weak var weakCaptured: Captured?
        weak var weakQueue: CoalescingQueue?
        do {
            let queue = CoalescingQueue(target: .manual)
            let captured = Captured()
            for _ in 0..<40 { queue.enqueueNotice { withExtendedLifetime(captured) {} } }
            #expect(queue.pendingCount == 40)
            weakCaptured = captured
            weakQueue = queue
        }

        // Then the queue's list (storage managed by hand) released what its items held
        #expect(weakQueue == nil)
        #expect(weakCaptured == nil)
    }

    @Test func aDeliveryDeferredToTheNextTickComesFirstInIt() {
        // Given 40 tokens on one queue, and one more that sets the first one's object when delivered
        let queue = CoalescingQueue(target: .manual)
        let people = (0..<40).map { _ in CorePerson() }
        let order = CoreRecorder<Int>()
        var tokens = people.indices.map { index in
            people[index].observe(\.age, queue: queue) { _ in order.append(index) }
        }
        tokens.append(people[1].observe(\.age, queue: queue) { _ in people[0].age += 100 })

        // When two ticks set every object, and drain, and a third tick drains
        for _ in 0..<2 {
            for person in people { person.age += 1 }
            #expect(queue.drain() == 41)
            #expect(queue.pendingCount == 1)
        }
        #expect(queue.drain() == 1)

        // Then each tick delivered every token once; the one set again after it fired waited
        // for the next tick, where it came first
        #expect(order.entries == Array(0..<40) + Array(0..<40) + [0])
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(tokens) {}
    }

    @Test func changeTokenReportsTheValueBeforeTheTicksFirstChangeAndAtDelivery() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.firstName = "start"
        let changes = CoreRecorder<PropertyChange<String>>()
        let token = person.observe(.changes(\.firstName), queue: queue) { _, change in changes.append(change) }

        for name in ["a", "b", "c"] { person.firstName = name }
        #expect(queue.drain() == 1)

        person.firstName = "d"
        person.firstName = "c"
        #expect(queue.drain() == 1)

        #expect(changes.entries == [PropertyChange(old: "start", new: "c"), PropertyChange(old: "c", new: "c")])
        withExtendedLifetime(token) {}
    }

    // MARK: Rule b — changes made by callbacks

    @Test func callbackChangingAPropertyOfATokenNotYetFiredFiresItInTheSameDrain() {
        // Given token A whose callback sets a property watched by token B
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let tokenA = person.observe(\.firstName, queue: queue) { person in
            log.append("A")
            person.lastName = "Lovelace"
        }
        let tokenB = person.observe(\.lastName, queue: queue) { person in log.append("B \(person.lastName)") }

        // When only A's property changes
        person.firstName = "Ada"

        // Then B fires after A in the same drain, and nothing is left for the next tick
        #expect(queue.drain() == 2)
        #expect(log.entries == ["A", "B Lovelace"])
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test func callbackChangingAPropertyOfATokenThatAlreadyFiredFiresItInTheNextTick() {
        // Given token B pending before token A, and A's callback sets B's property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let tokenB = person.observe(\.lastName, queue: queue) { person in log.append("B \(person.lastName)") }
        let tokenA = person.observe(\.firstName, queue: queue) { person in
            log.append("A")
            person.lastName = "Lovelace"
        }
        person.lastName = "Byron"
        person.firstName = "Ada"

        // When the tick ends
        let firstDrain = queue.drain()

        // Then B (already fired) waits for the next tick — not lost
        #expect(firstDrain == 2)
        #expect(log.entries == ["B Byron", "A"])
        #expect(queue.pendingCount == 1)
        #expect(queue.drain() == 1)
        #expect(log.entries == ["B Byron", "A", "B Lovelace"])
        #expect(queue.drain() == 0)
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test func callbackSettingItsOwnPropertyFiresOncePerTickAndNeverLoops() {
        // Given a token whose callback changes the property it watches (bounded, so that a
        // broken rule shows up as a wrong count instead of a hang)
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in
            seen.append(person.age)
            if person.age < 100 { person.age += 1 }
        }
        person.age = 1

        // When the queue drains three times
        let delivered = [queue.drain(), queue.drain(), queue.drain()]

        // Then each drain delivered exactly once, and the latest change is always pending
        #expect(delivered == [1, 1, 1])
        #expect(seen.entries == [1, 2, 3])
        #expect(queue.pendingCount == 1)

        // And ending the token stops it
        token.invalidate()
        #expect(queue.drain() == 0)
        #expect(seen.count == 3)
    }

    @Test func callbacksSettingEachOthersPropertiesNeverLoop() {
        // Given two tokens that keep setting each other's property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let tokenA = person.observe(\.age, queue: queue) { person in
            log.append("A\(person.age)")
            person.lastName = "\(person.age)"
        }
        let tokenB = person.observe(\.lastName, queue: queue) { person in
            log.append("B\(person.lastName)")
            if person.age < 100 { person.age += 1 }
        }
        person.age = 1

        // When the queue drains twice
        let delivered = [queue.drain(), queue.drain()]

        // Then each drain ran each token once; the re-triggered one waits for the next tick
        #expect(delivered == [2, 2])
        #expect(log.entries == ["A1", "B1", "A2", "B2"])
        #expect(queue.pendingCount == 1)
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test func changeMadeByACallbackIsNeverLostEvenIfTheTokenIsMidDelivery() {
        // Given a change token whose own callback changes its property back and forth
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let changes = CoreRecorder<PropertyChange<Int>>()
        let token = person.observe(.changes(\.age), queue: queue) { person, change in
            changes.append(change)
            if change.new == 1 { person.age = 2 }
        }

        person.age = 1
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 1)

        #expect(changes.entries == [PropertyChange(old: 0, new: 1), PropertyChange(old: 1, new: 2)])
        withExtendedLifetime(token) {}
    }

    // MARK: Rule c — order

    @Test func deliveryOrderIsTheOrderTokensFirstBecamePending() {
        // Given tokens created in one order
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let address = CoreAddress()
        let log = CoreRecorder<String>()
        let ageToken = person.observe(\.age, queue: queue) { _ in log.append("age") }
        let firstToken = person.observe(\.firstName, queue: queue) { _ in log.append("first") }
        let lastToken = person.observe(\.lastName, queue: queue) { _ in log.append("last") }
        let zipToken = address.observe(\.zip, queue: queue) { _ in log.append("zip") }

        // When they become pending in another order, some of them repeatedly
        person.lastName = "Lovelace"
        address.zip = "W1"
        person.firstName = "Ada"
        ageToken.schedule()
        person.lastName = "Byron"
        address.zip = "W2"

        // Then they are delivered in the order they first became pending
        #expect(queue.drain() == 4)
        #expect(log.entries == ["last", "zip", "first", "age"])

        // And the next tick has its own order
        person.age = 36
        person.firstName = "Augusta"
        #expect(queue.drain() == 2)
        #expect(log.entries.suffix(2) == ["age", "first"])
        withExtendedLifetime((firstToken, lastToken, zipToken)) {}
    }

    @Test func tokenDeferredToTheNextTickComesBeforeTokensPendingAfterTheDrain() {
        // Given B already fired in this drain when A's callback re-triggers it
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let tokenB = person.observe(\.lastName, queue: queue) { _ in log.append("B") }
        let tokenA = person.observe(\.firstName, queue: queue) { person in
            log.append("A")
            person.lastName = "\(person.firstName) set by A"
        }
        let tokenC = person.observe(\.age, queue: queue) { _ in log.append("C") }
        person.lastName = "Byron"
        person.firstName = "Ada"
        #expect(queue.drain() == 2)

        // When C becomes pending after the drain
        person.age = 36

        // Then B, which became pending first (during the drain), is delivered first
        #expect(queue.drain() == 2)
        #expect(log.entries == ["B", "A", "B", "C"])
        withExtendedLifetime((tokenA, tokenB, tokenC)) {}
    }

    // MARK: Rule e — no lock held while a callback runs

    @Test func callbackMayCreateTokensAndSetTheirProperties() {
        // Given a callback that creates a token and sets the property it watches
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let created = CoreBox<ObservationToken?>(nil)
        let token = person.observe(\.firstName, queue: queue) { person in
            created.value = person.observe(\.lastName, queue: queue) { _ in log.append("created") }
            person.lastName = "Lovelace"
            log.append("first")
        }

        // When it runs
        person.firstName = "Ada"

        // Then the new token works, and fires in the same drain
        #expect(queue.drain() == 2)
        #expect(log.entries == ["first", "created"])
        #expect(created.value?.isValid == true)
        withExtendedLifetime(token) {}
    }

    @Test func callbackMayInvalidateItsOwnTokenAndAnother() {
        // Given two pending tokens; the first invalidates itself and the second
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let own = CoreBox<ObservationToken?>(nil)
        let other = CoreBox<ObservationToken?>(nil)
        own.value = person.observe(\.firstName, queue: queue) { _ in
            log.append("own")
            own.value?.invalidate()
            other.value?.invalidate()
        }
        other.value = person.observe(\.lastName, queue: queue) { _ in log.append("other") }
        person.firstName = "Ada"
        person.lastName = "Lovelace"

        // When the queue drains
        let delivered = queue.drain()

        // Then only the first ran, and both ended
        #expect(delivered == 1)
        #expect(log.entries == ["own"])
        #expect(own.value?.isValid == false)
        #expect(other.value?.isValid == false)
    }

    @Test func callbackMayDropItsOwnToken() {
        // Given a token held only by a box its callback empties
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let box = CoreBox<ObservationToken?>(nil)
        box.value = person.observe(\.firstName, queue: queue) { _ in
            calls.increment()
            _ = box.take(replacingWith: nil)
        }
        weak let weakToken = box.value

        // When it runs
        person.firstName = "Ada"
        let delivered = queue.drain()

        // Then the token is gone and never fires again
        #expect(delivered == 1)
        #expect(weakToken == nil)
        person.firstName = "Grace"
        #expect(queue.drain() == 0)
        #expect(calls.value == 1)
    }

    @Test func callbackMayReleaseObservedObjects() {
        // Given a person held only by a box, an address held only by another box, and a
        // callback on the person that empties both boxes
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        let personBox = CoreBox<CorePerson?>(CorePerson())
        let addressBox = CoreBox<CoreAddress?>(CoreAddress())
        weak let weakPerson = personBox.value
        weak let weakAddress = addressBox.value
        let log = CoreRecorder<String>()
        let personToken = personBox.value!.observe(\.firstName, queue: queue) { person in
            _ = addressBox.take(replacingWith: nil)
            _ = personBox.take(replacingWith: nil)
            log.append("person \(person.firstName)")
        }
        let addressToken = addressBox.value!.observe(\.zip, observer: listener, queue: queue) { _, _ in
            log.append("address")
        }
        personBox.value!.firstName = "Ada"
        addressBox.value!.zip = "W1"

        // When the queue drains
        let delivered = queue.drain()

        // Then the person's callback ran; the address's pending delivery kept the address
        // alive and ran too; afterwards both objects are gone and their tokens ended
        #expect(delivered == 2)
        #expect(log.entries == ["person Ada", "address"])
        #expect(weakPerson == nil)
        #expect(weakAddress == nil)
        #expect(!personToken.isValid)
        #expect(!addressToken.isValid)
        queue.drain()
        #expect(listener.notices.count == 1)
    }

    @Test func callbackMayUseIntrospectionAndTellWithoutDeadlock() {
        // Given a callback that calls into every locked part of the library
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        let report = CoreRecorder<String>()
        let tokenBox = CoreBox<ObservationToken?>(nil)
        let scheduleOnce = CoreOnce()
        tokenBox.value = person.observe(\.firstName, queue: queue) { person in
            report.append("count \(person.observerCount(of: \.firstName))")
            report.append("properties \(person.observedProperties)")
            report.append("pending \(queue.pendingCount)")
            report.append("valid \(tokenBox.value?.isValid == true)")
            report.append(tokenBox.value?.debugDescription.contains("firstName") == true ? "described" : "undescribed")
            person.tell(observer, when: \.lastName, queue: queue) { observer, _ in observer.calls.append("told") }
            person.lastName = "Lovelace"
            person.stopTelling(observer)
            person.propertyDidChange(\.age)
            if scheduleOnce.claim() { tokenBox.value?.schedule() }
        }

        // When it runs
        person.firstName = "Ada"
        let delivered = queue.drain()

        // Then it completed with consistent answers
        #expect(delivered == 1)
        #expect(
            report.entries == [
                "count 1", "properties [\"firstName\"]", "pending 0", "valid true", "described",
            ]
        )
        #expect(observer.calls.count == 0)
        #expect(queue.pendingCount == 1)
    }

    @Test func immediateCallbackMayCreateInvalidateTokensAndSetProperties() {
        // Given an immediate-mode callback (it runs inside the setter) that touches tokens
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let other = CoreBox<ObservationToken?>(nil)
        let own = CoreBox<ObservationToken?>(nil)
        own.value = person.observe(\.firstName, options: .immediate, queue: queue) { person in
            log.append("immediate \(person.firstName)")
            other.value?.invalidate()
            other.value = person.observe(\.lastName, options: .immediate, queue: queue) { person in
                log.append("nested \(person.lastName)")
            }
            person.lastName = person.firstName
            if person.firstName == "stop" { own.value?.invalidate() }
        }

        // When the property is set from this thread
        person.firstName = "Ada"
        person.firstName = "stop"
        person.firstName = "ignored"

        // Then each set ran the callback inside the setter, without deadlock
        #expect(log.entries == ["immediate Ada", "nested Ada", "immediate stop", "nested stop"])
        #expect(own.value?.isValid == false)
        #expect(person.observerCount(of: \.lastName) == 1)
        #expect(queue.drain() == 0)
    }

    // MARK: Nested and concurrent drains

    @Test func drainCalledFromACallbackReturnsZero() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let nested = CoreRecorder<Int>()
        let log = CoreRecorder<String>()
        let first = person.observe(\.firstName, queue: queue) { person in
            log.append("first")
            person.lastName = "Lovelace"
            nested.append(queue.drain())
        }
        let second = person.observe(\.lastName, queue: queue) { _ in log.append("second") }
        person.firstName = "Ada"

        let delivered = queue.drain()

        // The nested drain delivered nothing (not even the change made just before it); the
        // outer one delivered both, in order
        #expect(nested.entries == [0])
        #expect(delivered == 2)
        #expect(log.entries == ["first", "second"])
        withExtendedLifetime((first, second)) {}
    }

    @Test func drainFromAnotherThreadDuringADrainReturnsZero() {
        // Given a callback that, mid-drain, has another thread drain the same queue
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let concurrent = CoreRecorder<Int>()
        let log = CoreRecorder<String>()
        let first = person.observe(\.firstName, queue: queue) { person in
            log.append("first")
            person.lastName = "Lovelace"
            let done = DispatchSemaphore(value: 0)
            Thread {
                concurrent.append(queue.drain())
                done.signal()
            }
            .start()
            done.wait()
        }
        let second = person.observe(\.lastName, queue: queue) { _ in log.append("second") }
        person.firstName = "Ada"

        let delivered = queue.drain()

        // The other thread's drain returned 0 at once; the running drain delivered both
        #expect(concurrent.entries == [0])
        #expect(delivered == 2)
        #expect(log.entries == ["first", "second"])
        withExtendedLifetime((first, second)) {}
    }

    // MARK: The pending delivery retains the observed object

    @Test func pendingDeliveryKeepsTheObservedObjectAliveUntilDelivered() {
        // Given a token on an object that only this test holds
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        weak let weakPerson = person
        let seen = CoreRecorder<String>()
        let token = person!.observe(\.firstName, queue: queue) { person in seen.append(person.firstName) }

        // When a property is set and the last outside reference is dropped
        person!.firstName = "Ada"
        person = nil

        // Then the object lives until its change is delivered, the callback sees it, and then
        // it goes away, ending the token
        #expect(weakPerson != nil)
        #expect(token.isValid)
        #expect(queue.drain() == 1)
        #expect(seen.entries == ["Ada"])
        #expect(weakPerson == nil)
        #expect(!token.isValid)
    }

    @Test func pendingDeliveryOfAnInvalidatedTokenNoLongerRetainsTheObservedObject() {
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        weak let weakPerson = person
        let token = person!.observe(\.firstName, queue: queue) { _ in }
        person!.firstName = "Ada"
        person = nil
        #expect(weakPerson != nil)

        token.invalidate()

        #expect(weakPerson == nil)
        #expect(queue.drain() == 0)
    }

    @Test func endingManyPendingTokensReleasesTheirObjectsWithoutADrain() {
        // Given 100 objects, each with one token and a pending delivery
        let queue = CoalescingQueue(target: .manual)
        var people: [CorePerson] = (0..<100).map { _ in CorePerson() }
        var tokens = people.map { $0.observe(\.age, queue: queue) { _ in } }
        // (Explicit lifetime: optimized builds may release a value after its last use.)
        withExtendedLifetime(tokens) {
            for person in people { person.age = 1 }
            #expect(queue.pendingCount == 100)
        }
        weak let first = people.first
        weak let last = people.last
        people = []

        // When every token ends before the queue drains
        tokens.removeAll()

        // Then the deliveries are gone and the objects they kept alive are freed
        #expect(queue.pendingCount == 0)
        #expect(first == nil)
        #expect(last == nil)
        #expect(queue.drain() == 0)
    }
}
