import Testing

@testable import ObservationTokens

/// Issue 17: a "prior" (before-change) notification, as KVO's `.prior`: `observeWillChange`.
@Suite("Will-change observations")
struct WillChangeTests {
    @Test func runsBeforeTheStoreWithTheOldValueInPlaceThenTheChangeIsDelivered() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.firstName = "Ada"
        let events = CoreRecorder<String>()
        let before = person.observeWillChange(\.firstName) { person in events.append("will: \(person.firstName)") }
        let after = person.observe(\.firstName, options: .immediate, queue: queue) { person in
            events.append("did: \(person.firstName)")
        }
        person.firstName = "Grace"
        #expect(events.entries == ["will: Ada", "did: Grace"])

        // Every set through the setter, also one that stores an equal value; other properties
        // don't call it
        person.firstName = "Grace"
        person.lastName = "Hopper"
        #expect(events.entries == ["will: Ada", "did: Grace", "will: Grace"])
        withExtendedLifetime((before, after)) {}
    }

    @Test func endsWithItsTokenAndWithTheObject() {
        weak var weakPerson: CorePerson?
        let calls = CoreCounter()
        var token: ObservationToken?
        do {
            let person = CorePerson()
            weakPerson = person
            token = person.observeWillChange(\.age) { _ in calls.increment() }
            person.age = 1
            #expect(calls.value == 1)
            let registry = person.existingRegistry
            #expect(registry?.willChangeCount.load(ordering: .relaxed) == 1)
            let second = person.observeWillChange(\.age) { _ in calls.increment() }
            person.age = 2
            #expect(calls.value == 3)
            second.invalidate()
            #expect(registry?.willChangeCount.load(ordering: .relaxed) == 1)
            person.age = 3
            #expect(calls.value == 4)
        }
        #expect(weakPerson == nil)  // the observation doesn't keep its object alive
        #expect(token?.isValid == false)  // and ends with it
        withExtendedLifetime(token) {}
    }

    @Test func droppingTheTokenStopsItAndStorageWritesDontCallIt() {
        let person = CorePerson()
        let calls = CoreCounter()
        var token: ObservationToken? = person.observeWillChange(\.age) { _ in calls.increment() }
        person.setAgeSilently(5)
        #expect(calls.value == 0)
        token = nil
        person.age = 6
        #expect(calls.value == 0)
        #expect(person.existingRegistry?.willChangeCount.load(ordering: .relaxed) == 0)
        _ = token
    }

    @Test func aKeyPathThatIsNotAnObservedPropertyStopsADebugBuild() async {
        #if DEBUG
            await #expect(processExitsWith: .failure) {
                let token = CorePerson().observeWillChange(\.nickname) { _ in }
                _ = token
            }
        #else
            let token = CorePerson().observeWillChange(\.nickname) { _ in }
            #expect(!token.isValid)
        #endif
    }
}
