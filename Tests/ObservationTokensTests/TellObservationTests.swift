import Testing

@testable import ObservationTokens

/// Issue 17: `tell` returns a handle (fire, schedule, stop), tells about chains and string
/// paths, and `stopTelling` takes chains and string paths.
@Suite("tell: handles and paths")
struct TellObservationTests {
    @Test func theHandleFiresSchedulesAndStopsAndDroppingItChangesNothing() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        do {
            _ = person.tell(observer, when: \.firstName, queue: queue) { observer, _ in observer.calls.append("dropped")
            }
        }
        let observation = person.tell(observer, when: \.lastName, queue: queue) { observer, person in
            observer.calls.append("last \(person.lastName)")
        }
        #expect(observation.isActive)

        // fire: now, on this thread, without a change
        #expect(observation.fire())
        #expect(observer.calls.entries == ["last "])

        // schedule: one delivery this tick, coalesced with a real change
        observation.schedule()
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["last ", "last Lovelace"])

        // The observation whose handle was dropped at once still runs
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries.last == "dropped")

        // stop: ends this one only, idempotently
        observation.stop()
        observation.stop()
        #expect(!observation.isActive)
        #expect(!observation.fire())
        person.lastName = "Byron"
        person.firstName = "Augusta"
        #expect(queue.drain() == 1)
        #expect(observer.calls.entries == ["last ", "last Lovelace", "dropped", "dropped"])
    }

    @Test func theHandleIsInactiveOnceTheObserverIsGone() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var observer: CoreObserver? = CoreObserver()
        let observation = person.tell(observer!, when: \.firstName, queue: queue) { _, _ in }
        #expect(observation.isActive)
        observer = nil
        #expect(!observation.isActive)
        #expect(!observation.fire())
    }

    @Test func tellAboutAChainFollowsTheMiddleObjectAndStopsByChainOrByString() {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(name: "a", address: PathAddress(zipCode: "1")))
        let observer = CoreObserver()
        let chain = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
        cache.tell(observer, when: chain, queue: queue) { observer, cache in
            observer.calls.append(cache.currentUser?.address?.zipCode ?? "-")
        }
        let replaced = PathAddress(zipCode: "2")
        cache.currentUser?.address = replaced
        queue.drain()
        replaced.zipCode = "3"
        queue.drain()
        #expect(observer.calls.entries == ["2", "3"])

        // A string naming the same properties stops the chain's observation
        cache.stopTelling(observer, aboutPath: "currentUser.address.zipCode")
        replaced.zipCode = "4"
        #expect(queue.drain() == 0)

        // and a chain stops a chain's
        cache.tell(observer, when: chain, queue: queue) { observer, _ in observer.calls.append("again") }
        cache.stopTelling(observer, about: chain)
        replaced.zipCode = "5"
        #expect(queue.drain() == 0)
        #expect(observer.calls.entries == ["2", "3"])
    }

    @Test func tellAboutAStringPathAndStopTellingAboutItLeavesOtherPaths() throws {
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser(name: "a", address: PathAddress(zipCode: "1"))
        let observer = CoreObserver()
        try user.tell(observer, whenPath: "address.zipCode", queue: queue) { observer, _ in observer.calls.append("zip")
        }
        try user.tell(observer, whenPath: "address.city", queue: queue) { observer, _ in observer.calls.append("city") }
        let other = CoreObserver()
        try user.tell(other, whenPath: "address.zipCode", queue: queue) { other, _ in other.calls.append("zip") }

        // EBN: stopTelling(_:aboutChangesTo: "address.zipCode")
        user.stopTelling(observer, aboutPath: "address.zipCode")
        user.address?.zipCode = "2"
        user.address?.city = "Portland"
        queue.drain()
        #expect(observer.calls.entries == ["city"])
        #expect(other.calls.entries == ["zip"])

        // Forgiving: a path never told, or one that doesn't parse, ends nothing
        user.stopTelling(observer, aboutPath: "name")
        user.stopTelling(observer, aboutPath: "no..such")
        user.address?.city = "Salem"
        queue.drain()
        #expect(observer.calls.entries == ["city", "city"])
    }

    @Test func aBadStringPathThrows() {
        let user = PathUser()
        #expect(throws: KeyPathError.unknownProperty("nope", type: "PathAddress", path: "address.nope", position: 2)) {
            try user.tell(CoreObserver(), whenPath: "address.nope") { _, _ in }
        }
    }

    @Test func theDeinitNoticeNamesWhatWasObserved() throws {
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        var tokens: [ObservationToken] = []
        do {
            let person = CorePerson()
            person.tell(listener, whenAnyOf: [\.firstName, \.lastName], queue: queue) { _, _ in }
            // Typed chains are named from the objects they reach (the part past a nil is named
            // only if its key paths were resolved on other objects of those classes).
            let cache = PathUserCache(currentUser: PathUser(address: PathAddress()))
            tokens.append(
                cache.observe(
                    .chain(KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)),
                    observer: listener, queue: queue
                ) { _, _, _ in })
            tokens.append(try cache.observe(.path("currentUser.name"), observer: listener, queue: queue) { _, _ in })
            tokens.append(person.observe(\.firstName, observer: listener, queue: queue) { _, _ in })
        }
        queue.drain()
        let named = listener.notices.entries.map { "\($0.typeName): \($0.observedPaths.joined(separator: " + "))" }
        #expect(
            Set(named) == [
                "CorePerson: firstName + lastName", "CorePerson: firstName",
                "PathUserCache: currentUser.address.zipCode", "PathUserCache: currentUser.name",
            ])
        #expect(listener.notices.entries.allSatisfy { $0.description.contains("ending the observation of") })
        withExtendedLifetime(tokens) {}
    }

    /// Whether an observer takes deinit notices is remembered for the last observer class
    /// asked about: observers of a class that takes them and of one that doesn't, in turns,
    /// each get exactly what they should.
    @Test func deinitNoticesReachListenersWhateverObserversCameBefore() {
        let queue = CoalescingQueue(target: .manual)
        let listeners = [CoreDeinitListener(), CoreDeinitListener(), CoreDeinitListener()]
        let plain = CoreObserver()
        var tokens: [ObservationToken] = []
        do {
            for listener in listeners {
                let person = CorePerson()
                tokens.append(person.observe(\.firstName, observer: plain, queue: queue) { _, _ in })
                tokens.append(person.observe(\.lastName, observer: listener, queue: queue) { _, _ in })
                tokens.append(person.observe(\.firstName, observer: plain, queue: queue) { _, _ in })
            }
        }
        queue.drain()
        #expect(
            listeners.map { $0.notices.entries.map(\.observedPaths) } == [
                [["lastName"]], [["lastName"]], [["lastName"]],
            ])
        withExtendedLifetime(tokens) {}
    }

    // MARK: Mistakes are loud

    #if DEBUG
        @Test func tellingAboutAPlainPropertyStopsADebugBuildNamingIt() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let observer = CoreObserver()
                CorePerson().tell(observer, whenAnyOf: [\.firstName, \.nickname]) { _, _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("tell(_:whenAnyOf:) at ObservationTokensTests/TellObservationTests.swift:"))
            #expect(message.contains("\\CorePerson.nickname reads no @Observed property of CorePerson"))
        }

        @Test func tellingAboutAnEmptyListStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let observer = CoreObserver()
                CorePerson().tell(observer, whenAnyOf: []) { _, _ in }
            }
        }
    #endif
}
