import Testing

@testable import ObservationTokens

/// Issue 2, §3–§4: how a token starts, delivers and ends.
@Suite struct TokenLifecycleTests {
    // MARK: The three ends of a token

    @Test func tokenKeptByAnOwnerEndsWhenTheOwnerGoesAway() {
        // Given an owner that keeps its token in a set
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var owner: CoreTokenOwner? = CoreTokenOwner()
        owner!.watch(person, queue: queue)
        weak let weakToken = owner!.tokens.first
        #expect(weakToken?.isValid == true)
        #expect(person.observerCount(of: \.firstName) == 1)

        // When the owner goes away
        let calls = owner!.calls
        owner = nil

        // Then its token is gone and nothing fires
        #expect(weakToken == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
        person.firstName = "Ada"
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func invalidateEndsTheObservation() {
        // Given a token
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, queue: queue) { _ in calls.increment() }
        #expect(token.isValid)

        // When it is invalidated
        token.invalidate()

        // Then it reports so, is detached, and never fires
        #expect(!token.isValid)
        #expect(person.observerCount(of: \.firstName) == 0)
        person.firstName = "Ada"
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func invalidatingTwiceIsHarmless() {
        // Given a token on a model that reports observer-count transitions
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()
        let calls = CoreCounter()
        let token = model.observe(\.first, queue: queue) { _ in calls.increment() }

        // When it is invalidated twice
        token.invalidate()
        token.invalidate()

        // Then it ended once: one 1→0 transition, no callback
        #expect(!token.isValid)
        #expect(model.transitions.entries == ["first+", "first-"])
        model.first = 1
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func invalidateFromAnotherThreadEndsTheObservation() async {
        // Given a token with a delivery pending
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()
        let calls = CoreCounter()
        let token = model.observe(\.first, queue: queue) { _ in calls.increment() }
        model.first = 1

        // When several other threads invalidate it at once
        await coreRunOnThreads(4) { _ in token.invalidate() }

        // Then it ended exactly once and the pending delivery is cancelled
        #expect(!token.isValid)
        #expect(model.transitions.entries == ["first+", "first-"])
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func tokenDroppedImmediatelyNeverFires() {
        // Given a token that nobody keeps
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        _ = person.observe(\.firstName, queue: queue) { _ in calls.increment() }

        // When the property changes
        person.firstName = "Ada"

        // Then nothing was observing it
        #expect(person.observerCount(of: \.firstName) == 0)
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func observedObjectDeinitEndsTheTokenAndTellsTheObserverOnceAfterDrain() {
        // Given a token whose observer adopts the dealloc protocol
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var person: CorePerson? = CorePerson()
        let objectID = ObjectIdentifier(person!)
        let line: UInt = #line + 1
        let token = person!.observe(\.firstName, observer: listener, queue: queue) { _, _ in }

        // When the observed object deinitializes
        person = nil

        // Then the token ended at once, and the observer hears of it through the queue, once
        #expect(!token.isValid)
        #expect(listener.notices.count == 0)
        queue.drain()
        #expect(listener.notices.count == 1)
        let notice = listener.notices.entries.first
        #expect(notice?.objectID == objectID)
        #expect(notice?.typeName == "CorePerson")
        #expect(notice?.tokenCreationSite == "\(#fileID):\(line)")
        queue.drain()
        #expect(listener.notices.count == 1)
    }

    @Test func observedObjectDeinitTellsTheObserverOncePerToken() {
        // Given two tokens of the same observer on one object
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var person: CorePerson? = CorePerson()
        let first = person!.observe(\.firstName, observer: listener, queue: queue) { _, _ in }
        let second = person!.observe(\.lastName, observer: listener, queue: queue) { _, _ in }

        // When the object deinitializes and the queue drains twice
        person = nil
        queue.drain()
        queue.drain()

        // Then the observer was told once for each token
        #expect(listener.notices.count == 2)
        #expect(!first.isValid)
        #expect(!second.isValid)
    }

    @Test func observedObjectDeinitTellsAnImmediateTokensObserverThroughTheQueueNotInsideTheDeinit() {
        // Given an immediate-mode token whose observer adopts the dealloc protocol
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var person: CorePerson? = CorePerson()
        let token = person!.observe(\.firstName, observer: listener, options: .immediate, queue: queue) { _, _ in }

        // When the observed object deinitializes (a deinit may run inside another property's
        // write, where no user code may run)
        person = nil

        // Then the token ended at once, and the observer is told by the next drain, once
        #expect(!token.isValid)
        #expect(listener.notices.count == 0)
        #expect(queue.drain() == 0)
        #expect(listener.notices.count == 1)
        queue.drain()
        #expect(listener.notices.count == 1)
    }

    @Test func observerGoneAtDeliveryMeansNoCallbackAndTheTokenEnds() {
        // Given a token with an observer and a pending change
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var observer: CoreObserver? = CoreObserver()
        let token = person.observe(\.firstName, observer: observer!, queue: queue) { _, _ in calls.increment() }
        person.firstName = "Ada"

        // When the observer goes away before delivery
        observer = nil
        let delivered = queue.drain()

        // Then the callback did not run and the token ended itself
        #expect(delivered == 0)
        #expect(calls.value == 0)
        #expect(!token.isValid)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func isValidIsTrueUntilTheTokenEnds() {
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        let observer = CoreObserver()

        // A new token is valid, and stays valid across deliveries
        let byInvalidate = person!.observe(\.firstName, queue: queue) { _ in }
        let byDeinit = person!.observe(\.lastName, observer: observer, queue: queue) { _, _ in }
        #expect(byInvalidate.isValid)
        #expect(byDeinit.isValid)
        person!.firstName = "Ada"
        person!.lastName = "Lovelace"
        #expect(queue.drain() == 2)
        #expect(byInvalidate.isValid)
        #expect(byDeinit.isValid)

        // invalidate() ends one; the observed object's deinit ends the other
        byInvalidate.invalidate()
        #expect(!byInvalidate.isValid)
        #expect(byDeinit.isValid)
        person = nil
        #expect(!byDeinit.isValid)
    }

    // MARK: The closure is released promptly

    @Test func closureIsReleasedInsideInvalidate() {
        // Given a token whose callback captures a probe
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        let token = person.observe(\.firstName, queue: queue) { [probe] _ in probe?.touch() }
        probe = nil
        #expect(weakProbe != nil)

        // When it is invalidated (the token itself stays alive)
        token.invalidate()

        // Then the closure and its captures are already gone
        #expect(weakProbe == nil)
        withExtendedLifetime(token) {}
    }

    @Test func closureIsReleasedWhenTheTokenIsDropped() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        var token: ObservationToken? = person.observe(\.firstName, queue: queue) { [probe] _ in probe?.touch() }
        probe = nil
        #expect(weakProbe != nil)
        #expect(token?.isValid == true)

        token = nil

        #expect(weakProbe == nil)
    }

    @Test func closureIsReleasedWhenTheTokenIsDroppedWithADeliveryPending() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        var token: ObservationToken? = person.observe(\.firstName, queue: queue) { [probe] _ in probe?.touch() }
        probe = nil
        person.firstName = "Ada"
        #expect(token?.isValid == true)

        token = nil

        #expect(weakProbe == nil)
        #expect(queue.drain() == 0)
    }

    @Test func closureIsReleasedWhenTheObservedObjectDeinitializes() {
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        let token = person!.observe(\.firstName, queue: queue) { [probe] _ in probe?.touch() }
        probe = nil
        #expect(weakProbe != nil)

        person = nil

        #expect(weakProbe == nil)
        #expect(!token.isValid)
    }

    @Test func closureIsReleasedByTheDeliveryThatFindsTheObserverGone() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var observer: CoreObserver? = CoreObserver()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        let token = person.observe(\.firstName, observer: observer!, queue: queue) { [probe] _, _ in probe?.touch() }
        probe = nil
        person.firstName = "Ada"

        observer = nil
        queue.drain()

        #expect(weakProbe == nil)
        #expect(!token.isValid)
    }

    // MARK: fire() and schedule()

    @Test func fireRunsTheCallbackNowAndLeavesAPendingDeliveryAlone() {
        // Given a token with a pending change
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<String>()
        let token = person.observe(\.firstName, queue: queue) { person in seen.append(person.firstName) }
        person.firstName = "Ada"

        // When it is fired
        let ran = token.fire()

        // Then the callback ran synchronously, and the pending delivery still happens
        #expect(ran)
        #expect(seen.entries == ["Ada"])
        #expect(queue.drain() == 1)
        #expect(seen.entries == ["Ada", "Ada"])

        // And firing with nothing pending runs it once more, leaving nothing pending
        #expect(token.fire())
        #expect(seen.count == 3)
        #expect(queue.drain() == 0)
    }

    @Test func fireReturnsFalseAfterInvalidate() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, queue: queue) { _ in calls.increment() }

        token.invalidate()

        #expect(!token.fire())
        #expect(calls.value == 0)
    }

    @Test func fireReturnsFalseAfterTheObservedObjectDeinitialized() {
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        let calls = CoreCounter()
        let token = person!.observe(\.firstName, queue: queue) { _ in calls.increment() }

        person = nil

        #expect(!token.fire())
        #expect(calls.value == 0)
    }

    @Test func fireWithTheObserverGoneReturnsFalseAndEndsTheToken() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var observer: CoreObserver? = CoreObserver()
        let token = person.observe(\.firstName, observer: observer!, queue: queue) { _, _ in calls.increment() }

        observer = nil

        #expect(!token.fire())
        #expect(calls.value == 0)
        #expect(!token.isValid)
    }

    @Test func scheduleQueuesOneDeliveryForThisTickWithoutAChange() {
        // Given a token and no change
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, queue: queue) { _ in calls.increment() }

        // When it is scheduled twice, and a real change happens in the same tick
        token.schedule()
        token.schedule()
        person.firstName = "Ada"

        // Then it is delivered once at the end of the tick, and not again
        #expect(calls.value == 0)
        #expect(queue.pendingCount == 1)
        #expect(queue.drain() == 1)
        #expect(calls.value == 1)
        #expect(queue.drain() == 0)
    }

    @Test func scheduleReportsNoChangeToChangeTokens() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.age = 36
        let changes = CoreRecorder<PropertyChange<Int>>()
        let token = person.observe(.changes(\.age), queue: queue) { _, change in changes.append(change) }

        token.schedule()

        #expect(queue.drain() == 1)
        #expect(changes.entries == [PropertyChange(old: 36, new: 36)])
    }

    @Test func scheduleOnAnEndedTokenDoesNothing() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, queue: queue) { _ in calls.increment() }
        token.invalidate()

        token.schedule()

        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func scheduleDeliversAnImmediateTokenAtTheEndOfTheTick() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, options: .immediate, queue: queue) { _ in calls.increment() }

        token.schedule()

        #expect(calls.value == 0)
        #expect(queue.drain() == 1)
        #expect(calls.value == 1)
    }

    // MARK: Options

    @Test func initialRunsSynchronouslyOnceBeforeObserveReturns() {
        // Given an object with a value
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.firstName = "Ada"
        let log = CoreRecorder<String>()
        let threads = CoreRecorder<UInt>()

        // When it is observed with .initial
        let token = person.observe(\.firstName, options: .initial, queue: queue) { person in
            log.append("callback \(person.firstName)")
            threads.append(coreThreadID())
        }
        log.append("observe returned")

        // Then the callback already ran, once, on this thread, and nothing is left pending
        #expect(log.entries == ["callback Ada", "observe returned"])
        #expect(threads.entries == [coreThreadID()])
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)
        #expect(log.count == 2)

        // And later changes are delivered as usual
        person.firstName = "Grace"
        #expect(queue.drain() == 1)
        #expect(log.entries.last == "callback Grace")
        withExtendedLifetime(token) {}
    }

    @Test func initialPassesTheObserverToo() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()

        let token = person.observe(\.firstName, observer: observer, options: .initial, queue: queue) { observer, _ in
            observer.calls.append("initial")
        }

        #expect(observer.calls.entries == ["initial"])
        withExtendedLifetime(token) {}
    }

    @Test func immediateRunsInsideTheSetterOnTheSettingThreadOnEveryRealChange() async {
        // Given an immediate-mode token
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let callbackThreads = CoreRecorder<UInt>()
        let token = person.observe(\.age, options: .immediate, queue: queue) { person in
            log.append("callback \(person.age)")
            callbackThreads.append(coreThreadID())
        }
        let setterThread = CoreBox<UInt>(0)
        // Compared while both threads are alive: a finished thread's ID can be reused.
        let testThread = coreThreadID()
        let setterIsAnotherThread = CoreBox(false)

        // When another thread sets the property three times, once to an equal value
        await coreOnAnotherThread {
            setterThread.value = coreThreadID()
            setterIsAnotherThread.value = setterThread.value != testThread
            log.append("set 1")
            person.age = 1
            log.append("set 1 again")
            person.age = 1
            log.append("set 2")
            person.age = 2
            log.append("done")
        }

        // Then the callback ran inside each real set, on the setting thread
        #expect(log.entries == ["set 1", "callback 1", "set 1 again", "set 2", "callback 2", "done"])
        #expect(callbackThreads.entries == [setterThread.value, setterThread.value])
        #expect(setterIsAnotherThread.value)

        // And never again at the end of the tick
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)
        #expect(log.count == 6)
        withExtendedLifetime(token) {}
    }

    @Test func invalidateCancelsAPendingDelivery() {
        // Given a token with a delivery pending
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let token = person.observe(\.firstName, queue: queue) { _ in calls.increment() }
        person.firstName = "Ada"

        // When it is invalidated before the tick ends
        token.invalidate()

        // Then the pending delivery never happens
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    @Test func invalidateFromAnEarlierCallbackCancelsALaterPendingDelivery() {
        // Given two pending tokens, the first of which invalidates the second
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let second = CoreBox<ObservationToken?>(nil)
        let first = person.observe(\.firstName, queue: queue) { _ in
            log.append("first")
            second.value?.invalidate()
        }
        second.value = person.observe(\.lastName, queue: queue) { _ in log.append("second") }
        person.firstName = "Ada"
        person.lastName = "Lovelace"

        // When the tick ends
        let delivered = queue.drain()

        // Then only the first ran
        #expect(delivered == 1)
        #expect(log.entries == ["first"])
        withExtendedLifetime(first) {}
    }

    // MARK: Identity, sets and bags

    @Test func tokensAreHashableByIdentity() {
        // Given two tokens made by identical calls
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let first = person.observe(\.firstName, queue: queue) { _ in }
        let second = person.observe(\.firstName, queue: queue) { _ in }

        // Then each equals only itself
        #expect(first == first)
        #expect(first != second)
        #expect(first.hashValue == first.hashValue)
        #expect(Set([first, second, first]).count == 2)

        // And identity doesn't change when the token ends
        let before = first.hashValue
        first.invalidate()
        #expect(first.hashValue == before)
        #expect(Set([first, second]).contains(first))
    }

    @Test func storeInSetKeepsTokensAliveUntilRemoved() {
        // Given tokens stored only in a set
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var tokens = Set<ObservationToken>()
        person.observe(\.firstName, queue: queue) { _ in calls.increment() }.store(in: &tokens)
        person.observe(\.lastName, queue: queue) { _ in calls.increment() }.store(in: &tokens)
        weak let weakToken = tokens.first
        #expect(tokens.count == 2)

        // Then they observe
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 2)

        // When the set is emptied
        tokens.removeAll()

        // Then they are gone
        #expect(weakToken == nil)
        person.firstName = "Grace"
        person.lastName = "Hopper"
        #expect(queue.drain() == 0)
        #expect(calls.value == 2)
    }

    @Test func tokenBagKeepsTokensAndRemoveAllEndsThem() {
        // Given tokens stored in a bag
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        let bag = TokenBag()
        let first = person.observe(\.firstName, queue: queue) { _ in calls.increment() }
        let second = person.observe(\.lastName, queue: queue) { _ in calls.increment() }
        first.store(in: bag)
        second.store(in: bag)
        bag.insert(first)
        #expect(bag.count == 2)
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 2)

        // When the bag is emptied
        bag.removeAll()

        // Then every token in it ended, even though this test still holds them
        #expect(bag.count == 0)
        #expect(!first.isValid)
        #expect(!second.isValid)
        person.firstName = "Grace"
        #expect(queue.drain() == 0)
        #expect(calls.value == 2)
    }

    @Test func droppingTheBagEndsItsTokens() {
        // Given tokens held only by a bag
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var bag: TokenBag? = TokenBag()
        weak var weakFirst: ObservationToken?
        weak var weakSecond: ObservationToken?
        do {
            let first = person.observe(\.firstName, queue: queue) { _ in calls.increment() }
            let second = person.observe(\.lastName, queue: queue) { _ in calls.increment() }
            first.store(in: bag!)
            second.store(in: bag!)
            weakFirst = first
            weakSecond = second
        }
        #expect(weakFirst?.isValid == true)
        #expect(weakSecond?.isValid == true)

        // When the bag goes away
        bag = nil

        // Then so do its tokens
        #expect(weakFirst == nil)
        #expect(weakSecond == nil)
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
    }

    // MARK: Debug description

    @Test func debugDescriptionNamesTypePropertyCreationSiteAndState() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let line: UInt = #line + 1
        let token = person.observe(\.firstName, queue: queue) { _ in }

        let active = token.debugDescription
        #expect(active.hasPrefix("ObservationToken("))
        #expect(active.contains("CorePerson"))
        #expect(active.contains("firstName"))
        #expect(active.contains("\(#fileID):\(line)"))
        #expect(active.contains("active"))
        #expect(active == "ObservationToken(CorePerson firstName, created at \(#fileID):\(line), active)")

        token.invalidate()

        let ended = token.debugDescription
        #expect(ended == "ObservationToken(CorePerson firstName, created at \(#fileID):\(line), ended)")
    }

    @Test func debugDescriptionNamesEveryPropertyOfAMultiPropertyToken() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let line: UInt = #line + 1
        let token = person.observe([\.firstName, \.lastName], queue: queue) { _ in }

        #expect(
            token.debugDescription
                == "ObservationToken(CorePerson firstName, lastName, created at \(#fileID):\(line), active)"
        )
    }

    @Test func debugDescriptionStillNamesThePropertyAfterTheObservedObjectDeinitialized() {
        // Given a token whose observed object went away (the moment one debugs "why did it stop?")
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        let line: UInt = #line + 1
        let token = person!.observe(\.firstName, queue: queue) { _ in }

        person = nil

        // Then the description still names the type, the property, the site and the state
        let expected = "ObservationToken(CorePerson firstName, created at \(#fileID):\(line), ended)"
        #expect(token.debugDescription == expected)
    }

    @Test func debugDescriptionsOfSeveralTokensStillNameTheirPropertiesAfterTheObjectDeinitialized() {
        // Given tokens on different properties of one object, two on the same one, and one on
        // two properties (the object remembers names only for what its tokens watch)
        let queue = CoalescingQueue(target: .manual)
        var person: CorePerson? = CorePerson()
        let first = person!.observe(\.firstName, queue: queue) { _ in }
        let again = person!.observe(\.firstName, queue: queue) { _ in }
        let last = person!.observe(\.lastName, queue: queue) { _ in }
        let both = person!.observe([\.firstName, \.lastName], queue: queue) { _ in }

        // When the object deinitializes
        person = nil

        // Then each ended token still names its properties
        #expect(first.debugDescription.contains("CorePerson firstName,"))
        #expect(again.debugDescription.contains("CorePerson firstName,"))
        #expect(last.debugDescription.contains("CorePerson lastName,"))
        #expect(both.debugDescription.contains("CorePerson firstName, lastName,"))
        #expect([first, again, last, both].allSatisfy { $0.debugDescription.hasSuffix("ended)") })
    }

    @Test func debugDescriptionStillNamesThePathsAfterTheRootDeinitialized() {
        // Given path tokens (a typed chain, a string path, and a chain through a subclass's
        // inherited property, which the base class's table has never seen) on roots that go away
        let queue = CoalescingQueue(target: .manual)
        var root: CoreDescNode? = CoreDescNode()
        var subclassRoot: CoreDescNode? = CoreDescLeaf()
        let middle = CoreDescNode()
        root!.next = middle
        subclassRoot!.other = middle
        let chain = root!.observe(.chain(KeyPathChain(\CoreDescNode.next).then(\.value)), queue: queue) { _, _ in }
        let string = try! root!.observe(.path("next.value"), queue: queue) { _ in }
        let inherited = subclassRoot!.observe(.chain(KeyPathChain(\CoreDescNode.other).then(\.value)), queue: queue) {
            _, _ in
        }
        let inheritedText = inherited.debugDescription

        // When the roots deinitialize
        root = nil
        subclassRoot = nil

        // Then each description still names its path, as it did while the root was alive
        #expect(chain.debugDescription.contains("CoreDescNode next.value"))
        #expect(chain.debugDescription.hasSuffix("ended)"))
        #expect(string.debugDescription.contains("CoreDescNode next.value"))
        #expect(inheritedText.contains("other.value"))
        #expect(inherited.debugDescription.contains("other.value"))
        #expect(inherited.debugDescription.hasSuffix("ended)"))
    }

    // MARK: Key paths that are not @Observed

    // Computed, nested and composed key paths are tracked now (see TrackedKeyPathTests); a key
    // path that reads no @Observed property traps in debug builds (see TrackingMisuseTests),
    // alone or in a list (see KeyPathChainTests): release builds give an ended token.
    #if !DEBUG
        @Test func keyPathListWithAMemberThatIsNotObservedYieldsAnEndedToken() {
            // Given a list of key paths, one of them a plain stored property
            let queue = CoalescingQueue(target: .manual)
            let person = CorePerson()
            let calls = CoreCounter()

            // When it is observed, even with .initial
            let mixed = person.observe([\.firstName, \.nickname], options: .initial, queue: queue) { _ in
                calls.increment()
            }

            // Then the token has already ended, never fires, and observes nothing
            #expect(!mixed.isValid)
            person.nickname = "Countess"
            person.firstName = "Ada"
            #expect(queue.drain() == 0)
            #expect(calls.value == 0)
            #expect(person.observedProperties.isEmpty)
        }
    #endif

    /// A set of a property nobody observes skips the registry (one bit per property): ending
    /// the last token of one property must leave its neighbours' bits, and a new token on the
    /// property must set its bit again. `*` observes every property.
    @Test func setsReachTheObservedPropertiesWhateverEndedBefore() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let fired = CoreRecorder<String>()
        let first = person.observe(\.firstName, queue: queue) { _ in fired.append("first") }
        var last: ObservationToken? = person.observe(\.lastName, queue: queue) { _ in fired.append("last") }

        // When the last name's only token ends
        last = nil
        person.lastName = "Lovelace"
        person.firstName = "Ada"
        person.age = 36
        // Then the first name still reaches its token, and nothing else fires
        #expect(queue.drain() == 1)
        #expect(fired.entries == ["first"])

        // When the last name is observed again, and a `*` token watches everything
        last = person.observe(\.lastName, queue: queue) { _ in fired.append("last") }
        let any = try person.observe(.path("*"), queue: queue) { _ in fired.append("*") }
        person.lastName = "Byron"
        #expect(queue.drain() == 2)
        person.age = 37
        #expect(queue.drain() == 1)
        #expect(fired.entries == ["first", "last", "*", "*"])
        withExtendedLifetime((first, last, any)) {}
    }
}

/// A node for path descriptions; `CoreDescLeaf` adds nothing but its class.
class CoreDescNode: ObservableModel, @unchecked Sendable {
    @Observed var next: CoreDescNode? = nil
    @Observed var other: CoreDescNode? = nil
    @Observed var value = 0
}

final class CoreDescLeaf: CoreDescNode, @unchecked Sendable {}
