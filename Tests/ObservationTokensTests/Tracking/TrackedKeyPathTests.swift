import Testing

@testable import ObservationTokens

/// Typed key paths that are not one `@Observed` property of the root: computed, nested,
/// composed, through other objects. Each is a tracked token.
@Suite struct TrackedKeyPathTests {
    @Test func computedPropertyFiresOncePerTickWhateverItReadChanged() {
        // Given a token on a computed property over two @Observed properties
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(\.fullName, queue: queue) { person in seen.append(person.fullName) }
        #expect(token.isValid)
        #expect(person.observerCount(of: \.firstName) == 1)
        #expect(person.observerCount(of: \.lastName) == 1)

        // When both change in one tick, then a plain property changes
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        person.nickname = "Countess"
        person.showsLastName = false

        // Then one callback for the tick, none for what the key path doesn't read
        #expect(queue.drain() == 0)
        #expect(seen.entries == ["Ada Lovelace"])
        withExtendedLifetime(token) {}
    }

    @Test func computedOverComputedFollowsItsBranch() {
        // Given a token on a computed property that reads `fullName` or `firstName`
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(\.label, queue: queue) { person in seen.append(person.label) }
        #expect(person.observerCount(of: \.lastName) == 1)

        // When the branch switches away from `lastName`
        person.showsLastName = false
        #expect(queue.drain() == 1)

        // Then `lastName` is no longer watched, and its changes don't fire
        #expect(person.observerCount(of: \.lastName) == 0)
        person.lastName = "Byron"
        #expect(queue.drain() == 0)
        // ... while what the branch reads now still fires
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(seen.entries == ["", "Ada"])
        withExtendedLifetime(token) {}
    }

    @Test func composedOptionalKeyPathFollowsAReplacedMiddleObject() {
        // Given a token on \.next?.next?.value
        let queue = CoalescingQueue(target: .manual)
        let root = TrackNode()
        let oldLeaf = root.link(2)
        let seen = CoreRecorder<Int?>()
        let token = root.observe(\.next?.next?.value, queue: queue) { root in seen.append(root.next?.next?.value) }
        #expect(oldLeaf.observerCount(of: \.value) == 1)

        // When the leaf's value changes
        oldLeaf.value = 1
        #expect(queue.drain() == 1)

        // When the middle object is replaced by one with a new leaf
        let middle = TrackNode()
        let newLeaf = middle.link(1)
        newLeaf.value = 2
        root.next = middle
        #expect(queue.drain() == 1)

        // Then the old leaf is no longer watched, and the new one is
        #expect(oldLeaf.observerCount(of: \.value) == 0)
        #expect(newLeaf.observerCount(of: \.value) == 1)
        oldLeaf.value = 3
        #expect(queue.drain() == 0)
        newLeaf.value = 4
        #expect(queue.drain() == 1)

        // When the middle becomes nil, the path ends early; when it comes back, it is followed
        root.next = nil
        #expect(queue.drain() == 1)
        #expect(newLeaf.observerCount(of: \.value) == 0)
        root.next = middle
        #expect(queue.drain() == 1)
        newLeaf.value = 5
        #expect(queue.drain() == 1)
        #expect(seen.entries == [1, 2, 4, nil, 4, 5])
        withExtendedLifetime(token) {}
    }

    @Test func nestedValueOfAnObservedProperty() {
        // Given a token on \.items.count and one on \.firstName.count
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let counts = CoreRecorder<Int>()
        let items = person.observe(\.items.count, queue: queue) { person in counts.append(person.items.count) }
        let name = person.observe(\.firstName.count, options: .endpointChanges, queue: queue) { person in
            counts.append(-person.firstName.count)
        }

        // When the items change, and the name changes without changing its length
        person.items.append("tea")
        person.firstName = "Bob"
        #expect(queue.drain() == 2)
        person.firstName = "Ann"

        // Then `.endpointChanges` compares the key path's value: the second name fires nothing
        // (the token is still delivered to re-evaluate, and skips its callback)
        _ = queue.drain()
        #expect(counts.entries == [1, -3])
        withExtendedLifetime((items, name)) {}
    }

    @Test func computedPropertyThroughAnotherObject() {
        // Given a token on a computed property that reads another object's property
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let home = TrackAddress()
        person.address = home
        let seen = CoreRecorder<String>()
        let token = person.observe(\.city, queue: queue) { person in seen.append(person.city) }

        // When that object's property changes, and then the object is replaced
        home.city = "Wellington"
        #expect(queue.drain() == 1)
        let work = TrackAddress()
        work.city = "Auckland"
        person.address = work
        #expect(queue.drain() == 1)

        // Then both were delivered, and only the new object is watched
        #expect(home.observerCount(of: \.city) == 0)
        #expect(work.observerCount(of: \.city) == 1)
        #expect(seen.entries == ["Wellington", "Auckland"])
        withExtendedLifetime(token) {}
    }

    @Test func initialDeliversOnceAtCreation() {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        person.firstName = "Ada"
        let seen = CoreRecorder<String>()
        let token = person.observe(\.fullName, options: .initial, queue: queue) { person in seen.append(person.fullName)
        }
        #expect(seen.entries == ["Ada "])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func observeChangesOnAComputedPropertyGivesOldAndNew() {
        // Given a change token on a computed property
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        person.firstName = "Ada"
        let changes = CoreRecorder<PropertyChange<String>>()
        let token = person.observe(.changes(\.fullName), queue: queue) { _, change in changes.append(change) }

        // When it changes twice in one tick, then again
        person.firstName = "Grace"
        person.lastName = "Hopper"
        #expect(queue.drain() == 1)
        person.firstName = "Ada"
        #expect(queue.drain() == 1)

        // Then old is the value last delivered (at first: at creation)
        #expect(
            changes.entries == [
                PropertyChange(old: "Ada ", new: "Grace Hopper"),
                PropertyChange(old: "Grace Hopper", new: "Ada Hopper"),
            ])
        withExtendedLifetime(token) {}
    }

    @Test func observerIsHeldWeaklyAndEndsTheToken() {
        // Given a tracked key path token on behalf of an observer
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        var observer: CoreObserver? = CoreObserver()
        weak let weakObserver = observer
        let token = person.observe(\.fullName, observer: observer!, queue: queue) { observer, person in
            observer.calls.append(person.fullName)
        }
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(observer?.calls.entries == ["Ada "])

        // When the observer goes away and a dependency changes
        observer = nil
        #expect(weakObserver == nil)
        person.lastName = "L"

        // Then nothing runs and the token ends, detached from everything
        #expect(queue.drain() == 0)
        #expect(!token.isValid)
        #expect(person.observerCount(of: \.firstName) == 0)
        #expect(person.observerCount(of: \.lastName) == 0)
    }

    @Test func rootDeinitEndsTheTokenAndOtherObjectsDropOut() {
        // Given a token on a path through two other objects
        let queue = CoalescingQueue(target: .manual)
        var root: TrackNode? = TrackNode()
        var leaf: TrackNode? = root!.link(2)
        weak let weakMiddle = root!.next
        let calls = CoreCounter()
        let token = root!.observe(\.next?.next?.value, queue: queue) { _ in calls.increment() }

        // When the leaf is dropped from the path and deinitializes
        root!.next!.next = nil
        #expect(queue.drain() == 1)
        leaf = nil
        #expect(leaf == nil)
        #expect(token.isValid)

        // When the root deinitializes
        root = nil

        // Then the token ends, and nothing is kept alive
        #expect(!token.isValid)
        #expect(weakMiddle == nil)
        #expect(queue.drain() == 0)
        #expect(calls.value == 1)
    }

    @Test func aDependencyThatDeinitializesSimplyDropsOut() {
        // Given a token reading a leaf that only the path holds
        let queue = CoalescingQueue(target: .manual)
        let root = TrackNode()
        root.link(2)
        let seen = CoreRecorder<Int?>()
        let token = root.observe(\.next?.next?.value, queue: queue) { root in seen.append(root.next?.next?.value) }

        // When the middle is replaced behind the token's back (its storage, told later), so the
        // old middle and leaf deinitialize while the token still has edges on them
        let middle = TrackNode()
        root.replaceNextSilently(middle)

        // Then the token runs once more, and watches what it reads now
        #expect(queue.drain() == 1)
        #expect(seen.entries == [nil])
        #expect(token.isValid)
        middle.next = TrackNode()
        #expect(queue.drain() == 1)
        #expect(middle.observerCount(of: \.next) == 1)
        withExtendedLifetime(token) {}
    }

    @Test func tokenDeinitDetachesEveryEdge() {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let home = TrackAddress()
        person.address = home
        var token: ObservationToken? = person.observe(\.city, queue: queue) { _ in }
        #expect(home.observerCount(of: \.city) == 1)
        #expect(person.observerCount(of: \.address) == 1)
        token = nil
        #expect(home.observerCount(of: \.city) == 0)
        #expect(person.observerCount(of: \.address) == 0)
        #expect(token == nil)
    }

    @Test func callbackIsReleasedWhenTheTokenEnds() {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        let token = person.observe(\.fullName, queue: queue) { [probe] _ in probe?.touch() }
        probe = nil
        #expect(weakProbe != nil)
        token.invalidate()
        #expect(weakProbe == nil)
    }

    @Test func immediateReevaluatesInsideTheSetter() {
        // Given an immediate token on a branching computed property
        let person = TrackPerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(\.label, options: .immediate) { person in seen.append(person.label) }

        // When its properties are set
        person.firstName = "Ada"
        person.showsLastName = false
        person.lastName = "Byron"  // no longer read

        // Then each relevant set ran the callback before returning
        #expect(seen.entries == ["Ada ", "Ada"])
        #expect(person.observerCount(of: \.lastName) == 0)
        withExtendedLifetime(token) {}
    }

    @Test func orderIsTheOrderOfFirstChange() {
        // Given a tracked token and a plain token
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let log = CoreRecorder<String>()
        let tracked = person.observe(\.fullName, queue: queue) { _ in log.append("fullName") }
        let plain = person.observe(\.showsLastName, queue: queue) { _ in log.append("showsLastName") }

        // When the plain one's property changes first, then the tracked one's
        person.showsLastName = false
        person.lastName = "L"
        person.firstName = "F"
        #expect(queue.drain() == 2)

        // Then they fire in that order, once each
        #expect(log.entries == ["showsLastName", "fullName"])
        withExtendedLifetime((tracked, plain)) {}
    }

    @Test func plainPropertyKeepsTheSingleStorageFastPath() {
        // A key path naming one @Observed property is still a property token: its edge is the
        // only one, and `\.firstName` behaves exactly as before.
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let token = person.observe(\.firstName, queue: queue) { _ in }
        #expect(token.debugDescription.contains("TrackPerson firstName"))
        #expect(person.attachedEdgeCount == 1)
    }
}
