import Testing

@testable import ObservationTokens

/// Tracking closures: `observe { }`, `observe(observer:) { }`, `observeValue`, `observeChanges(of:)`.
@Suite struct TrackingClosureTests {
    @Test func closureRunsAtCreationThenOncePerTick() {
        // Given a tracking closure
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(queue: queue) { person in seen.append(person.firstName + "|" + person.lastName) }

        // Then it ran once on creation (each property's edge was attached as it was first
        // read, so no second run is needed to confirm the values)
        #expect(seen.entries == ["|"])

        // When both names change in one tick, and again in the next
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        person.lastName = "Byron"
        #expect(queue.drain() == 1)

        // Then one run per tick, never inside a setter
        #expect(seen.entries == ["|", "Ada|Lovelace", "Ada|Byron"])
        withExtendedLifetime(token) {}
    }

    @Test func branchSwitchStopsWatchingWhatIsNoLongerRead() {
        // Given a closure that reads `lastName` only while `showsLastName` is set
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let runs = CoreCounter()
        let token = person.observe(queue: queue) { person in
            runs.increment()
            _ = person.showsLastName ? person.lastName : person.firstName
        }
        #expect(person.observerCount(of: \.lastName) == 1)
        #expect(person.observerCount(of: \.firstName) == 0)

        // When it switches to `firstName`
        person.showsLastName = false
        #expect(queue.drain() == 1)

        // Then `lastName` no longer fires and `firstName` does
        #expect(person.observerCount(of: \.lastName) == 0)
        #expect(person.observerCount(of: \.firstName) == 1)
        person.lastName = "Byron"
        #expect(queue.drain() == 0)
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        // Runs: 1 at creation, 1 at the switch (reading `firstName` for the first time attached
        // its edge before the read), 1 after
        #expect(runs.value == 3)
        withExtendedLifetime(token) {}
    }

    @Test func twoRootsOneRunPerTick() {
        // Given a closure over a person and settings, the settings passed as observer
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        var settings: TrackSettings? = TrackSettings()
        weak let weakSettings = settings
        let seen = CoreRecorder<String>()
        let token = person.observe(observer: settings!, queue: queue) { settings, person in
            seen.append(settings.showsFullName ? person.fullName : person.firstName)
        }

        // When both objects change in one tick
        person.firstName = "Ada"
        settings!.showsFullName = true
        #expect(queue.drain() == 1)
        person.lastName = "L"
        #expect(queue.drain() == 1)
        // (Once at creation and once at the switch: new properties get their edges as read.)
        #expect(seen.entries == ["", "Ada ", "Ada L"])

        // When the settings go away: the token holds them weakly, and ends at the next delivery
        settings = nil
        #expect(weakSettings == nil)
        person.firstName = "Grace"
        #expect(queue.drain() == 0)
        #expect(!token.isValid)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func valueTokenDeliversOnlyWhenTheValueChanged() {
        // Given a value token on a computed string
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        person.firstName = "Ada"
        let seen = CoreRecorder<String>()
        let token = person.observe(.value({ $0.firstName + " " + $0.lastName }), queue: queue) { _, name in
            seen.append(name)
        }
        #expect(seen.entries.isEmpty)

        // When a dependency changes and changes back within one tick
        person.firstName = "Grace"
        person.firstName = "Ada"
        _ = queue.drain()
        // Then nothing is delivered; a real change is
        #expect(seen.entries.isEmpty)
        person.lastName = "Lovelace"
        _ = queue.drain()
        #expect(seen.entries == ["Ada Lovelace"])
        withExtendedLifetime(token) {}
    }

    @Test func valueTokenInitialAndClassValuesByIdentity() {
        // Given a value token on a class reference, with .initial
        let queue = CoalescingQueue(target: .manual)
        let holder = TrackHolder()
        let first = holder.box
        let seen = CoreRecorder<String>()
        let token = holder.observe(.value({ $0.box }), options: .initial, queue: queue) { _, box in
            seen.append(box.text)
        }
        #expect(seen.entries == ["a"])

        // When the same object is set again, then a different one
        holder.box = first
        _ = queue.drain()
        holder.box = TrackBox("b")
        _ = queue.drain()
        #expect(seen.entries == ["a", "b"])
        withExtendedLifetime(token) {}
    }

    @Test func changesOfAClosureGiveOldAndNew() {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let changes = CoreRecorder<PropertyChange<Int>>()
        let token = person.observe(.changes(of: { $0.items.count }), queue: queue) { _, change in changes.append(change)
        }
        person.items = ["a", "b"]
        _ = queue.drain()
        person.items.removeLast()
        _ = queue.drain()
        person.items = ["c"]  // same count: not delivered
        _ = queue.drain()
        #expect(changes.entries == [PropertyChange(old: 0, new: 2), PropertyChange(old: 2, new: 1)])
        withExtendedLifetime(token) {}
    }

    @Test func closureThatSetsWhatItReadsDoesNotLoop() {
        // Given a closure that sets a property it reads
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let runs = CoreCounter()
        let token = person.observe(queue: queue) { person in
            runs.increment()
            if person.items.count < 3 { person.items.append("x") }
        }
        // Then creation ran it once (watching `items` from its first read, so its own append
        // fires it the next tick); each later run fires the next tick at most, and it settles
        #expect(runs.value == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)
        #expect(runs.value == 4)
        #expect(person.items.count == 3)
        withExtendedLifetime(token) {}
    }

    @Test func closureCapturesAreReleasedWhenTheTokenEnds() {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        var token: ObservationToken? = person.observe(queue: queue) { [probe] person in
            probe?.touch()
            _ = person.firstName
        }
        probe = nil
        #expect(weakProbe != nil)
        token = nil
        #expect(weakProbe == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
        #expect(token == nil)
    }

    @Test func rootIsNotRetained() {
        let queue = CoalescingQueue(target: .manual)
        var person: TrackPerson? = TrackPerson()
        weak let weakPerson = person
        let token = person!.observe(queue: queue) { person in _ = person.firstName }
        person!.firstName = "Ada"  // pending: the queue keeps the person until the drain
        person = nil
        #expect(weakPerson != nil)
        #expect(queue.drain() == 1)
        #expect(weakPerson == nil)
        #expect(!token.isValid)
    }

    @Test func immediateRunsInsideEachSetter() {
        let person = TrackPerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(options: .immediate) { person in seen.append(person.firstName) }
        person.firstName = "A"
        person.firstName = "B"
        #expect(seen.entries == ["", "A", "B"])
        withExtendedLifetime(token) {}
    }

    @Test func steadyDeliveryKeepsItsEdges() {
        // A delivery whose dependencies did not change keeps the same edges (nothing is
        // detached and attached again): observers of the properties see no transition.
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let token = person.observe(queue: queue) { person in _ = person.fullName }
        let before = person.attachedEdgeCount
        for index in 0..<100 {
            person.firstName = "\(index)"
            #expect(queue.drain() == 1)
        }
        #expect(person.attachedEdgeCount == before)
        #expect(person.observerCount(of: \.firstName) == 1)
        withExtendedLifetime(token) {}
    }

    @Test func optionalValuesGiveOldAndNewThroughNil() {
        // Given a change token on an optional value read through another object
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let changes = CoreRecorder<PropertyChange<String?>>()
        let token = person.observe(.changes(of: { $0.address?.city }), queue: queue) { _, change in
            changes.append(change)
        }

        // When the address appears, its city changes, and it goes away
        let home = TrackAddress()
        home.city = "Wellington"
        person.address = home
        _ = queue.drain()
        home.city = "Auckland"
        _ = queue.drain()
        person.address = nil
        _ = queue.drain()

        // Then each change carries the value before and after, nil included
        #expect(
            changes.entries == [
                PropertyChange(old: nil, new: "Wellington"), PropertyChange(old: "Wellington", new: "Auckland"),
                PropertyChange(old: "Auckland", new: nil),
            ])
        #expect(home.observerCount(of: \.city) == 0)
        withExtendedLifetime(token) {}
    }

    @Test(.enabled(if: LiveCounters.isCounting, "subscriptions are counted in debug builds only"))
    func trackedSubscriptionsAreFreedForEveryEnding() async {
        // Runs in a child process, where no other test creates subscriptions.
        await #expect(processExitsWith: .success) {
            let queue = CoalescingQueue(target: .manual)
            let baseline = LiveCounters.liveSubscriptions
            do {
                // Dropped with a delivery pending; invalidated; root gone; observer gone
                let person = TrackPerson()
                let token = person.observe(\.fullName, queue: queue) { _ in }
                person.firstName = "Ada"
                withExtendedLifetime(token) {}
                let closure = person.observe(queue: queue) { _ = $0.lastName }
                closure.invalidate()
                var observer: CoreObserver? = CoreObserver()
                let observed = person.observe(observer: observer!, queue: queue) { _, person in _ = person.label }
                observer = nil
                person.showsLastName = false
                withExtendedLifetime(observed) {}
            }
            queue.drain()
            precondition(LiveCounters.liveSubscriptions == baseline, "tracked subscriptions leaked")
            var root: TrackNode? = TrackNode()
            root!.link(3)
            let value = root!.observe(.value({ $0.next?.next?.next?.value }), queue: queue) { _, _ in }
            root = nil
            precondition(!value.isValid, "root deinit ends the token")
            queue.drain()
        }
    }

    @Test func fireDeliversAnUnchangedValueAndScheduleReevaluates() {
        // Given a value token
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        person.firstName = "Ada"
        let seen = CoreRecorder<String>()
        let token = person.observe(.value({ $0.firstName }), queue: queue) { _, name in seen.append(name) }

        // fire() delivers now even though nothing changed; schedule() re-evaluates next tick
        // and, nothing having changed, skips the callback
        #expect(token.fire())
        token.schedule()
        _ = queue.drain()
        #expect(seen.entries == ["Ada"])
        withExtendedLifetime(token) {}
    }

    @Test func aReadThatKeepsMovingRunsOncePerDelivery() {
        // Given a closure that reads a different node on every run (so every run finds a new
        // dependency)
        let queue = CoalescingQueue(target: .manual)
        let root = TrackNode()
        let pool = (0..<40).map { _ in TrackNode() }
        let runs = CoreCounter()
        let token = root.observe(queue: queue) { root in
            _ = root.value
            _ = pool[runs.value % pool.count].value
            runs.increment()
        }

        // Then creation runs it once: the new node's edge was attached as it was read, so
        // nothing needs confirming and nothing is scheduled
        #expect(runs.value == 1)
        #expect(queue.drain() == 0)
        // Each delivery runs it once, and it keeps only what the last run read
        root.value += 1
        #expect(queue.drain() == 1)
        root.value += 1
        #expect(queue.drain() == 1)
        #expect(runs.value == 3)
        #expect(pool.filter { $0.observerCount(of: \.value) == 1 }.count == 1)
        #expect(pool[2].observerCount(of: \.value) == 1)
        #expect(root.observerCount(of: \.value) == 1)
        withExtendedLifetime(token) {}
    }
}
