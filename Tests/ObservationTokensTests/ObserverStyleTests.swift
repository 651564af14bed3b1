import Testing

@testable import ObservationTokens

/// Issue 2, §6: the observer-lifetime style (`tell`/`stopTelling`), introspection, the
/// observation-state hook and the manual trigger.
@Suite struct ObserverStyleTests {
    // MARK: tell

    @Test func tellDeliversWithoutAStoredToken() {
        // Given an observer told about one property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        person.tell(observer, when: \.firstName, queue: queue) { observer, person in
            observer.calls.append(person.firstName)
        }

        // When it changes, several times in one tick
        person.firstName = "A"
        person.firstName = "Ada"

        // Then the observer hears once, with the observed object passed in
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["Ada"])
    }

    @Test func tellWhenAnyOfDeliversOncePerTick() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        person.tell(observer, whenAnyOf: [\.firstName, \.lastName], queue: queue) { observer, person in
            observer.calls.append(person.fullName)
        }

        person.firstName = "Ada"
        person.lastName = "Lovelace"

        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["Ada Lovelace"])
    }

    @Test func tellWithInitialRunsAtOnce() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.firstName = "Ada"
        let observer = CoreObserver()

        person.tell(observer, when: \.firstName, options: .initial, queue: queue) { observer, person in
            observer.calls.append(person.firstName)
        }

        #expect(observer.calls.entries == ["Ada"])
    }

    @Test func stopTellingEndsEveryObservationOfThatObserver() {
        // Given two observers, each told about two properties
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let stopped = CoreObserver()
        let kept = CoreObserver()
        person.tell(stopped, when: \.firstName, queue: queue) { observer, _ in observer.calls.append("first") }
        person.tell(stopped, when: \.lastName, queue: queue) { observer, _ in observer.calls.append("last") }
        person.tell(kept, when: \.firstName, queue: queue) { observer, _ in observer.calls.append("first") }
        #expect(person.observerCount(of: \.firstName) == 2)

        // When one observer is stopped
        person.stopTelling(stopped)

        // Then only the other one hears
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        #expect(stopped.calls.count == 0)
        #expect(kept.calls.entries == ["first"])
        #expect(person.observerCount(of: \.firstName) == 1)
        #expect(person.observerCount(of: \.lastName) == 0)
    }

    @Test func stopTellingAboutPropertiesEndsOnlyThoseObservations() {
        // Given one observer told about firstName, lastName, and age-or-firstName
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        person.tell(observer, when: \.firstName, queue: queue) { observer, _ in observer.calls.append("first") }
        person.tell(observer, when: \.lastName, queue: queue) { observer, _ in observer.calls.append("last") }
        person.tell(observer, whenAnyOf: [\.age, \.firstName], queue: queue) { observer, _ in
            observer.calls.append("age or first")
        }

        // When it is stopped about firstName
        person.stopTelling(observer, about: [\.firstName])

        // Then every observation that included firstName ended; the lastName one remains
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        person.age = 36
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["last"])
    }

    @Test func stopTellingIsForgiving() {
        // Given one observation
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let untouched = CorePerson()
        let observer = CoreObserver()
        let stranger = CoreObserver()
        person.tell(observer, when: \.lastName, queue: queue) { observer, _ in observer.calls.append("last") }

        // When stop calls name what was never observed, or repeat themselves
        untouched.stopTelling(observer)
        untouched.stopTelling(observer, about: [\.firstName])
        person.stopTelling(stranger)
        person.stopTelling(stranger, about: [\.lastName])
        person.stopTelling(observer, about: [\.firstName, \.age])
        person.stopTelling(observer, about: [])
        person.stopTelling(observer, about: [\.nickname])

        // Then nothing broke and the observation is intact
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["last"])

        // And stopping twice is as good as once
        person.stopTelling(observer)
        person.stopTelling(observer)
        person.stopTelling(observer, about: [\.lastName])
        person.lastName = "Byron"
        #expect(queue.drain() == 0)
        #expect(observer.calls.count == 1)
    }

    @Test func stopTellingLeavesTokensOfTheSameObserverAlone() {
        // Given an observer with a token and a tell on the same property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        let token = person.observe(\.firstName, observer: observer, queue: queue) { observer, _ in
            observer.calls.append("token")
        }
        person.tell(observer, when: \.firstName, queue: queue) { observer, _ in observer.calls.append("tell") }

        // When it stops telling, both wholesale and by property
        person.stopTelling(observer)
        person.stopTelling(observer, about: [\.firstName])

        // Then the token still works
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["token"])
        #expect(token.isValid)
    }

    @Test func tellEndsAtTheFirstDeliveryAfterTheObserverIsGone() {
        // Given a tell whose closure captures a probe
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var observer: CoreObserver? = CoreObserver()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        weak let weakObserver = observer
        person.tell(observer!, when: \.firstName, queue: queue) { [probe] _, _ in
            probe?.touch()
            calls.increment()
        }
        probe = nil

        // When the observer goes away, and the property changes
        observer = nil
        #expect(weakObserver == nil)
        person.firstName = "Ada"
        let delivered = queue.drain()

        // Then nothing ran, and that delivery released the closure
        #expect(delivered == 0)
        #expect(calls.value == 0)
        #expect(weakProbe == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func tellOfAGoneObserverIsReleasedByTheNextTell() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let other = CoreObserver()
        var observer: CoreObserver? = CoreObserver()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        person.tell(observer!, when: \.firstName, queue: queue) { [probe] _, _ in probe?.touch() }
        probe = nil
        observer = nil
        #expect(weakProbe != nil)

        person.tell(other, when: \.lastName, queue: queue) { _, _ in }

        #expect(weakProbe == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func tellOfAGoneObserverIsReleasedByTheNextStopTelling() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let stranger = CoreObserver()
        var observer: CoreObserver? = CoreObserver()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        person.tell(observer!, when: \.firstName, queue: queue) { [probe] _, _ in probe?.touch() }
        probe = nil
        observer = nil
        #expect(weakProbe != nil)

        person.stopTelling(stranger)

        #expect(weakProbe == nil)
        #expect(person.observerCount(of: \.firstName) == 0)
    }

    @Test func tellEndsWhenTheObservedObjectDeinitializesAndTellsTheObserver() {
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var person: CorePerson? = CorePerson()
        var probe: CoreProbe? = CoreProbe()
        weak let weakProbe = probe
        person!.tell(listener, when: \.firstName, queue: queue) { [probe] _, _ in probe?.touch() }
        probe = nil

        person = nil

        #expect(weakProbe == nil)
        queue.drain()
        #expect(listener.notices.count == 1)
    }

    // MARK: Introspection

    @Test func observedPropertiesListsWhatIsObservedInDeclarationOrder() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        #expect(person.observedProperties == [])

        let last = person.observe(\.lastName, queue: queue) { _ in }
        let first = person.observe(\.firstName, queue: queue) { _ in }
        let firstAgain = person.observe(\.firstName, queue: queue) { _ in }
        #expect(person.observedProperties == ["firstName", "lastName"])

        first.invalidate()
        #expect(person.observedProperties == ["firstName", "lastName"])
        firstAgain.invalidate()
        #expect(person.observedProperties == ["lastName"])
        last.invalidate()
        #expect(person.observedProperties == [])
    }

    @Test func observablePropertyNamesListsEveryObservedDeclaration() {
        #expect(CorePerson().observablePropertyNames == ["firstName", "lastName", "age", "address"])
    }

    @Test func observerCountCountsTokensAndTellsPerProperty() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        #expect(person.observerCount(of: \.firstName) == 0)

        let single = person.observe(\.firstName, queue: queue) { _ in }
        let multi = person.observe([\.firstName, \.lastName], queue: queue) { _ in }
        person.tell(observer, when: \.firstName, queue: queue) { _, _ in }

        #expect(person.observerCount(of: \.firstName) == 3)
        #expect(person.observerCount(ofProperty: "firstName") == 3)
        #expect(person.observerCount(of: \.lastName) == 1)
        #expect(person.observerCount(ofProperty: "lastName") == 1)
        #expect(person.observerCount(of: \.age) == 0)
        #expect(person.observerCount(ofProperty: "noSuchProperty") == 0)
        #expect(person.observerCount(of: \.nickname) == 0)

        multi.invalidate()
        person.stopTelling(observer)
        #expect(person.observerCount(of: \.firstName) == 1)
        #expect(person.observerCount(of: \.lastName) == 0)
        withExtendedLifetime(single) {}
    }

    @Test func wildcardCountsTowardEveryProperty() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let first = person.observe(\.firstName, queue: queue) { _ in }

        let all = try person.observe(.path("*"), queue: queue) { _ in }

        #expect(person.observedProperties == ["firstName", "*"])
        #expect(person.observerCount(of: \.firstName) == 2)
        #expect(person.observerCount(of: \.age) == 1)
        #expect(person.observerCount(ofProperty: "lastName") == 1)
        #expect(person.observerCount(ofProperty: "*") == 1)

        all.invalidate()
        #expect(person.observedProperties == ["firstName"])
        #expect(person.observerCount(of: \.age) == 0)
        withExtendedLifetime(first) {}
    }

    // MARK: observationStateDidChange

    @Test func observationStateChangesOnlyOnZeroToOneAndOneToZero() {
        // Given a model that records its observer-count transitions
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()

        // When observers come and go
        var first: ObservationToken? = model.observe(\.first, queue: queue) { _ in }
        #expect(model.transitions.entries == ["first+"])
        let second = model.observe(\.first, queue: queue) { _ in }
        #expect(model.transitions.entries == ["first+"])
        first = nil
        #expect(model.transitions.entries == ["first+"])
        second.invalidate()

        // Then only 0→1 and 1→0 were reported, with the count already updated
        #expect(model.transitions.entries == ["first+", "first-"])
        #expect(model.countsSeenInHook.entries == [1, 0])
        #expect(first == nil)
    }

    @Test func observationStateIsReportedWhateverClassesWereObservedBefore() {
        // Given first tokens on fresh objects of a hooked class, a plain class and a subclass of
        // the hooked class, in turns (whether a class reports is remembered for the last class)
        let queue = CoalescingQueue(target: .manual)
        var tokens: [ObservationToken] = []
        var hooked: [CoreHookedModel] = []
        for round in 0..<3 {
            let model = round == 1 ? CoreHookedSubclass() : CoreHookedModel()
            hooked.append(model)
            tokens.append(CorePerson().observe(\.firstName, queue: queue) { _ in })
            tokens.append(model.observe(\.first, queue: queue) { _ in })
            tokens.append(CorePerson().observe(\.firstName, queue: queue) { _ in })
        }

        // Then every hooked object, of either class, reported its first observer
        #expect(hooked.map(\.transitions.entries) == [["first+"], ["first+"], ["first+"]])
        withExtendedLifetime(tokens) {}
    }

    @Test func observationStateReportsEachPropertyOfAMultiPropertyToken() {
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()

        let token = model.observe([\.first, \.second], queue: queue) { _ in }
        #expect(Set(model.transitions.entries) == ["first+", "second+"])

        token.invalidate()
        #expect(model.transitions.count == 4)
        #expect(Set(model.transitions.entries.suffix(2)) == ["first-", "second-"])
    }

    @Test func observationStateCountsTellObservations() {
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()
        let observer = CoreObserver()

        model.tell(observer, when: \.third, queue: queue) { _, _ in }
        model.stopTelling(observer)

        #expect(model.transitions.entries == ["third+", "third-"])
    }

    @Test func wildcardObservationCountsAsObservingEveryProperty() throws {
        // Given a property with its own observer
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()
        let own = model.observe(\.first, queue: queue) { _ in }
        #expect(model.transitions.entries == ["first+"])

        // When `*` is observed, the other properties become observed
        let all = try model.observe(.path("*"), queue: queue) { _ in }
        #expect(model.transitions.entries.sorted() == ["first+", "second+", "third+"])

        // A new observer of a property already covered by `*` changes nothing
        let extra = model.observe(\.second, queue: queue) { _ in }
        extra.invalidate()
        #expect(model.transitions.count == 3)

        // When `*` ends, only the properties without an observer of their own go unobserved
        all.invalidate()
        #expect(model.transitions.entries.suffix(2).sorted() == ["second-", "third-"])
        #expect(model.transitions.count == 5)

        own.invalidate()
        #expect(model.transitions.entries.last == "first-")
        #expect(model.transitions.count == 6)
    }

    // MARK: Manual trigger

    @Test func propertyDidChangeFiresTheObserversWithoutAValueChange() {
        // Given tokens on a property, coalesced, immediate and change-reporting
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.age = 36
        let immediateCalls = CoreCounter()
        let changes = CoreRecorder<PropertyChange<Int>>()
        let coalesced = person.observe(\.age, queue: queue) { _ in }
        let immediate = person.observe(\.age, options: .immediate, queue: queue) { _ in immediateCalls.increment() }
        let change = person.observe(.changes(\.age), queue: queue) { _, change in changes.append(change) }

        // When the manual trigger is pulled by key path
        person.propertyDidChange(\.age)

        // Then every observer fires; change tokens report old == new
        #expect(immediateCalls.value == 1)
        #expect(queue.drain() == 2)
        #expect(changes.entries == [PropertyChange(old: 36, new: 36)])

        // And by name
        person.propertyDidChange(named: "age")
        #expect(immediateCalls.value == 2)
        #expect(queue.drain() == 2)
        withExtendedLifetime((coalesced, immediate, change)) {}
    }

    @Test func storedValueChangesStorageSilentlyUntilTheManualTrigger() {
        // Given a token on a property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in seen.append(person.age) }

        // When the storage is changed behind the setter's back
        person.setAgeSilently(41)

        // Then nobody is told, but the value is there
        #expect(queue.drain() == 0)
        #expect(person.age == 41)

        // When the model then pulls the manual trigger, the observers see the new value
        person.propertyDidChange(\.age)
        #expect(queue.drain() == 1)
        #expect(seen.entries == [41])
        withExtendedLifetime(token) {}
    }

    @Test func propertyDidChangeFiresOnlyThatPropertysObservers() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let log = CoreRecorder<String>()
        let first = person.observe(\.firstName, queue: queue) { _ in log.append("first") }
        let last = person.observe(\.lastName, queue: queue) { _ in log.append("last") }

        person.propertyDidChange(named: "lastName")
        person.propertyDidChange(named: "noSuchProperty")
        person.propertyDidChange(named: "nickname")
        person.propertyDidChange(\.nickname)

        #expect(queue.drain() == 1)
        #expect(log.entries == ["last"])
        withExtendedLifetime((first, last)) {}
    }

    @Test func propertyDidChangeOnAnUnobservedObjectDoesNothing() {
        let person = CorePerson()

        person.propertyDidChange(\.firstName)
        person.propertyDidChange(named: "firstName")

        #expect(person.observedProperties.isEmpty)
    }

    enum ObserverForm: CaseIterable { case property, chain, tracked }

    /// A token holds its observer without keeping it alive (and, without Objective-C, without a
    /// weak reference: `ObserverReference`): dropping the observer runs its deinit at once,
    /// while the token is alive and pending, and the pending delivery then calls nothing and
    /// ends the token.
    @Test(arguments: ObserverForm.allCases)
    func anObserverDroppedWhileItsTokenIsPendingDeinitializesAtOnce(form: ObserverForm) {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.address = CoreAddress()
        var observer: CoreObserver? = CoreObserver()
        weak let gone = observer
        let calls = CoreCounter()
        let token: ObservationToken
        switch form {
        case .property:
            token = person.observe(\.age, observer: observer!, queue: queue) { _, _ in calls.increment() }
        case .chain:
            token = person.observe(.chain(KeyPathChain(\CorePerson.age)), observer: observer!, queue: queue) {
                _, _, _ in
                calls.increment()
            }
        case .tracked:
            token = person.observe(observer: observer!, queue: queue) { _, person in
                _ = person.age
                calls.increment()
            }
        }
        let before = calls.value
        person.age += 1  // pending from here

        observer = nil
        #expect(gone == nil)
        #expect(token.isValid)
        #expect(queue.drain() == 0)
        #expect(calls.value == before)
        #expect(!token.isValid)
    }
}
