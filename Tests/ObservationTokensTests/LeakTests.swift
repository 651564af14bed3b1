import Testing

@testable import ObservationTokens

/// Issue 2, §9: for every way an observation ends, nothing it involved stays alive — not the
/// token, its subscription, the closure's captures, the observer, or the observed object.
///
/// Each test checks `weak` references to objects it owns, so tests running in parallel can't
/// disturb it. The process-wide `LiveCounters.liveSubscriptions` is checked in a child process
/// (an exit test), where no other test creates subscriptions.
@Suite struct LeakTests {
    /// Weak references to everything one observation involves.
    struct Refs {
        weak var token: ObservationToken?
        weak var subscription: Subscription?
        weak var probe: CoreProbe?
        weak var observer: CoreObserver?
        weak var observed: CorePerson?

        var everythingIsGone: Bool {
            token == nil && subscription == nil && probe == nil && observer == nil && observed == nil
        }
    }

    /// The only strong references to one observation's objects, so a test can drop each.
    final class Held {
        var person: CorePerson?
        var observer: CoreObserver?
        var token: ObservationToken?

        init(person: CorePerson, observer: CoreObserver, token: ObservationToken) {
            self.person = person
            self.observer = observer
            self.token = token
        }
    }

    /// Creates an observed object, an observer, and a token whose closure captures a probe.
    /// Only the returned `Held` holds them strongly.
    static func makeObservation(
        queue: CoalescingQueue,
        options: ObservationOptions = []
    ) -> (held: Held, refs: Refs) {
        let person = CorePerson()
        let observer = CoreObserver()
        let probe = CoreProbe()
        let token = person.observe(\.firstName, observer: observer, options: options, queue: queue) {
            [probe] observer, _ in
            probe.touch()
            observer.calls.append("call")
        }
        var refs = Refs()
        refs.token = token
        refs.subscription = token.subscription
        refs.probe = probe
        refs.observer = observer
        refs.observed = person
        return (Held(person: person, observer: observer, token: token), refs)
    }

    @Test func droppingTheTokenFreesEverything() {
        // Given an observation
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)
        #expect(refs.token != nil && refs.subscription != nil && refs.probe != nil)

        // When the token is dropped
        held.token = nil

        // Then the token, its subscription and the closure are gone, and the object has no edges
        #expect(refs.token == nil)
        #expect(refs.subscription == nil)
        #expect(refs.probe == nil)
        #expect(held.person?.observedPropertyCount == 0)

        // And the observer and observed object were never retained by the library
        held.observer = nil
        held.person = nil
        #expect(refs.everythingIsGone)
    }

    @Test func droppingTheTokenWithADeliveryPendingFreesEverythingByTheNextDrain() {
        // Given an observation with a change pending
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)
        held.person!.firstName = "Ada"

        // When the token is dropped and the other references go
        held.token = nil
        held.observer = nil
        held.person = nil

        // Then closure, observer and observed object are gone at once (the pending delivery
        // no longer retains the object), and the queue lets go of the subscription at its drain
        #expect(refs.token == nil)
        #expect(refs.probe == nil)
        #expect(refs.observer == nil)
        #expect(refs.observed == nil)
        #expect(queue.drain() == 0)
        #expect(refs.everythingIsGone)
    }

    /// One, two and three tokens on a property made pending by one set (a lone pending token
    /// is queued without a list, several with one): every subscription is freed once its token
    /// is dropped and the queue drained.
    @Test(arguments: [1, 2, 3])
    func pendingTokensOfOnePropertyAreFreedAfterTheirDelivery(count: Int) {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var tokens: [ObservationToken]? = (0..<count).map { _ in person.observe(\.firstName, queue: queue) { _ in } }
        weak let first = tokens?.first?.subscription
        weak let last = tokens?.last?.subscription
        // Alive until here (an optimized build may otherwise release them after their last use).
        withExtendedLifetime(tokens) {
            person.firstName = "Ada"
            #expect(queue.drain() == count)
            person.firstName = "Grace"
        }
        tokens = nil
        #expect(queue.drain() == 0)
        #expect(first == nil)
        #expect(last == nil)
        #expect(person.observedPropertyCount == 0)
    }

    /// The same for tracked tokens (a closure reading two properties), which a set makes
    /// pending through the candidates' route: one alone is kept without a list.
    @Test(arguments: [1, 2, 3])
    func pendingTrackedTokensAreFreedAfterTheirDelivery(count: Int) {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var tokens: [ObservationToken]? = (0..<count).map { _ in
            person.observe(queue: queue) { person in _ = person.firstName + person.lastName }
        }
        weak let first = tokens?.first?.subscription
        weak let last = tokens?.last?.subscription
        withExtendedLifetime(tokens) {
            person.firstName = "Ada"
            person.lastName = "Lovelace"
            #expect(queue.drain() == count)
            person.firstName = "Grace"
        }
        tokens = nil
        #expect(queue.drain() == 0)
        #expect(first == nil)
        #expect(last == nil)
        #expect(person.observedPropertyCount == 0)
    }

    @Test func invalidateFreesEverythingButTheTokenItself() {
        // Given an observation
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)

        // When the token is invalidated but kept
        held.token!.invalidate()

        // Then the closure is gone and the object has no edges
        #expect(refs.probe == nil)
        #expect(held.person?.observedPropertyCount == 0)

        // And the ends go as soon as their owners let go
        held.observer = nil
        held.person = nil
        #expect(refs.observer == nil)
        #expect(refs.observed == nil)

        // And the token and its subscription go with the last reference to the token
        #expect(refs.token != nil)
        held.token = nil
        #expect(refs.everythingIsGone)
    }

    @Test func invalidateWithADeliveryPendingFreesEverythingByTheNextDrain() {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)
        held.person!.firstName = "Ada"

        held.token!.invalidate()
        held.token = nil
        held.observer = nil
        held.person = nil

        #expect(refs.probe == nil)
        #expect(refs.observed == nil)
        #expect(queue.drain() == 0)
        #expect(refs.everythingIsGone)
    }

    @Test func releasingTheObservedObjectFreesEverything() {
        // Given an observation
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)

        // When the observed object is released
        held.person = nil

        // Then it is gone, the token ended, and the closure is gone
        #expect(refs.observed == nil)
        #expect(held.token?.isValid == false)
        #expect(refs.probe == nil)

        // And the observer and token go with their owners
        held.observer = nil
        held.token = nil
        #expect(queue.drain() == 0)
        #expect(refs.everythingIsGone)
    }

    @Test func releasingTheObservedObjectAfterADeliveredChangeFreesEverything() {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)
        held.person!.firstName = "Ada"
        held.person = nil
        #expect(refs.observed != nil)

        // The pending delivery was the last owner of the object
        #expect(queue.drain() == 1)
        #expect(refs.observed == nil)
        #expect(refs.probe == nil)
        #expect(held.token?.isValid == false)

        held.observer = nil
        held.token = nil
        #expect(refs.everythingIsGone)
    }

    @Test func releasingTheObserverFreesEverythingByTheNextDelivery() {
        // Given an observation
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue)

        // When the observer is released
        held.observer = nil

        // Then it is gone at once (the token holds it weakly)
        #expect(refs.observer == nil)

        // And the next delivery ends the token and frees the closure
        held.person!.firstName = "Ada"
        #expect(queue.drain() == 0)
        #expect(held.token?.isValid == false)
        #expect(refs.probe == nil)
        #expect(held.person?.observedPropertyCount == 0)

        held.person = nil
        held.token = nil
        #expect(refs.everythingIsGone)
    }

    @Test func releasingTheObserverOfAnImmediateTokenFreesEverythingAtTheNextSet() {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.makeObservation(queue: queue, options: .immediate)

        held.observer = nil
        held.person!.firstName = "Ada"

        #expect(held.token?.isValid == false)
        #expect(refs.probe == nil)
        held.person = nil
        held.token = nil
        #expect(refs.everythingIsGone)
    }

    @Test func observerObservingItselfMakesNoCycle() {
        // Given an object that is both the observed object and the observer
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        weak let weakPerson = person
        let token = person!.observe(\.firstName, observer: person!, queue: queue) { observer, observed in
            observer.lastName = observed.firstName
        }
        person!.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(person?.lastName == "Ada")

        // When the outside reference goes
        person = nil

        // Then it is freed
        #expect(weakPerson == nil)
        #expect(!token.isValid)
    }

    @Test func invalidateBreaksACycleThroughTheClosure() {
        // Given a token reachable only through its own closure (a cycle the user made)
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        weak var weakToken: ObservationToken?
        weak var weakBox: CoreBox<ObservationToken?>?
        do {
            let box = CoreBox<ObservationToken?>(nil)
            let token = person.observe(\.firstName, queue: queue) { [box] _ in _ = box.value?.isValid }
            box.value = token
            weakToken = token
            weakBox = box
        }
        #expect(weakToken != nil)
        #expect(weakBox != nil)

        // When it is invalidated
        weakToken?.invalidate()

        // Then releasing the closure broke the cycle
        #expect(weakToken == nil)
        #expect(weakBox == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func objectCountsItsObservedPropertiesNotItsTokens() {
        // The counter is what lets setters of unobserved objects skip all bookkeeping; it
        // changes only when a property gains its first edge or loses its last.
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        // (Explicit lifetimes: optimized builds may release a value after its last use.)
        var ageTokens = (0..<100).map { _ in person.observe(\.age, queue: queue) { _ in } }
        withExtendedLifetime(ageTokens) {
            #expect(person.observedPropertyCount == 1)
            #expect(person.attachedEdgeCount == 100)
        }

        let nameToken = person.observe(\.firstName, queue: queue) { _ in }
        withExtendedLifetime(ageTokens) {
            #expect(person.observedPropertyCount == 2)
        }

        ageTokens.removeLast(99)
        withExtendedLifetime(ageTokens) {
            #expect(person.observedPropertyCount == 2)
            #expect(person.attachedEdgeCount == 2)
        }

        ageTokens.removeAll()
        #expect(person.observedPropertyCount == 1)
        nameToken.invalidate()
        #expect(person.observedPropertyCount == 0)
        #expect(person.attachedEdgeCount == 0)

        // And a property observed again counts again
        let again = person.observe(\.age, queue: queue) { _ in }
        person.age = 7
        #expect(person.observedPropertyCount == 1)
        #expect(queue.drain() == 1)
        withExtendedLifetime(again) {}
    }

    @Test(.enabled(if: LiveCounters.isCounting, "subscriptions are counted in debug builds only"))
    func liveSubscriptionCountReturnsToBaselineForEveryEnding() async {
        // Runs in a child process, where no other test creates subscriptions.
        await #expect(processExitsWith: .success) {
            let queue = CoalescingQueue(target: .manual)
            let baseline = LiveCounters.liveSubscriptions

            // Token dropped, with a delivery pending
            do {
                let person = CorePerson()
                let token = person.observe(\.firstName, queue: queue) { _ in }
                person.firstName = "Ada"
                withExtendedLifetime(token) {}
            }
            queue.drain()
            precondition(LiveCounters.liveSubscriptions == baseline, "token dropped")

            // invalidate()
            do {
                let person = CorePerson()
                let token = person.observe(\.firstName, queue: queue) { _ in }
                person.firstName = "Ada"
                token.invalidate()
            }
            queue.drain()
            precondition(LiveCounters.liveSubscriptions == baseline, "invalidate")

            // Observed object released
            do {
                var person: CorePerson? = CorePerson()
                let token = person!.observe(\.firstName, queue: queue) { _ in }
                person = nil
                precondition(!token.isValid)
            }
            queue.drain()
            precondition(LiveCounters.liveSubscriptions == baseline, "observed released")

            // Observer released
            do {
                let person = CorePerson()
                var observer: CoreObserver? = CoreObserver()
                let token = person.observe(\.firstName, observer: observer!, queue: queue) { _, _ in }
                observer = nil
                person.firstName = "Ada"
                queue.drain()
                precondition(!token.isValid)
            }
            precondition(LiveCounters.liveSubscriptions == baseline, "observer released")

            // tell, ended by stopTelling and by the observed object's deinit
            do {
                let person = CorePerson()
                let observer = CoreObserver()
                person.tell(observer, when: \.firstName, queue: queue) { _, _ in }
                person.tell(observer, when: \.lastName, queue: queue) { _, _ in }
                person.stopTelling(observer, about: [\.firstName])
                precondition(LiveCounters.liveSubscriptions == baseline + 1, "stopTelling(about:)")
            }
            queue.drain()
            precondition(LiveCounters.liveSubscriptions == baseline, "tell")

            // 1,000 tokens created and dropped
            do {
                let person = CorePerson()
                var tokens: [ObservationToken] = []
                for _ in 0..<1_000 { tokens.append(person.observe(\.firstName, queue: queue) { _ in }) }
                precondition(LiveCounters.liveSubscriptions == baseline + 1_000, "created")
                tokens.removeAll()
            }
            precondition(LiveCounters.liveSubscriptions == baseline, "1,000 tokens")
        }
    }
}
