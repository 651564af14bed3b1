import Testing

@testable import ObservationTokens

/// Issue 17: a "prior" (before-change) notification, as KVO's `.prior` and Combine's
/// `objectWillChange`: `observeWillChange`.
@Suite("Will-change observations")
struct WillChangeTests {
    @Test func runsBeforeTheStoreWithTheOldValueInPlaceThenTheChangeIsDelivered() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.firstName = "Ada"
        let events = CoreRecorder<String>()
        let before = person.observe(.willChange) { person in events.append("will: \(person.firstName) \(person.age)") }
        let after = person.observe(\.firstName, options: .immediate, queue: queue) { person in
            events.append("did: \(person.firstName)")
        }
        person.firstName = "Grace"
        #expect(events.entries == ["will: Ada 0", "did: Grace"])

        // Every set through a setter of the object, also one that stores an equal value
        person.firstName = "Grace"
        person.age = 3
        #expect(events.entries == ["will: Ada 0", "did: Grace", "will: Grace 0", "will: Grace 0"])
        withExtendedLifetime((before, after)) {}
    }

    @Test func endsWithItsTokenAndWithTheObject() {
        weak var weakPerson: CorePerson?
        let calls = CoreCounter()
        var token: ObservationToken?
        do {
            let person = CorePerson()
            weakPerson = person
            token = person.observe(.willChange) { _ in calls.increment() }
            person.age = 1
            #expect(calls.value == 1)
            let registry = person.existingRegistry
            #expect(registry?.willChangeCount.load(ordering: .relaxed) == 1)
            let second = person.observe(.willChange) { _ in calls.increment() }
            person.age = 2
            #expect(calls.value == 3)
            second.invalidate()
            #expect(registry?.willChangeCount.load(ordering: .relaxed) == 1)
            person.lastName = "x"
            #expect(calls.value == 4)
        }
        #expect(weakPerson == nil)  // the observation doesn't keep its object alive
        #expect(token?.isValid == false)  // and ends with it
        withExtendedLifetime(token) {}
    }

    @Test func droppingTheTokenStopsItAndStorageWritesDontCallIt() {
        let person = CorePerson()
        let calls = CoreCounter()
        var token: ObservationToken? = person.observe(.willChange) { _ in calls.increment() }
        person.setAgeSilently(5)
        #expect(calls.value == 0)
        token = nil
        person.age = 6
        #expect(calls.value == 0)
        #expect(person.existingRegistry?.willChangeCount.load(ordering: .relaxed) == 0)
        _ = token
    }

    @Test func otherObjectsAndPathReadsDontCallIt() throws {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(name: "a"))
        let calls = CoreCounter()
        let token = cache.currentUser!.observe(.willChange) { _ in calls.increment() }
        // A path token reads the user's properties (under the same bit setters take): no call
        let path = try cache.observe(.path("currentUser.address.zipCode"), queue: queue) { _ in }
        cache.currentUser = PathUser()
        queue.drain()
        #expect(calls.value == 0)
        withExtendedLifetime((token, path)) {}
    }
}
