import Testing

@testable import ObservationTokens

/// Issue 2, §7: properties set from several threads while tokens are created, invalidated and
/// deinitialized on others. Threads start together; totals are exact; nothing sleeps.
///
/// Property values are not synchronized by the library, so each property is set by one
/// thread only, and no other thread reads it (creating a token reads the property it names)
/// while it is being set.
@Suite struct ThreadingTests {
    @Test func settersOnTheirOwnObjectsWhileTokensChurnDeliverExactTotals() async {
        // Given objects, each with an immediate and a coalesced token that stay, plus tokens
        // on the same property that other threads will end while the setters run
        let setterCount = 4
        let churnCount = 2
        let setsPerThread = 2_000
        let tokensToEndPerObject = 40
        let stableQueue = CoalescingQueue(target: .manual)
        let churnQueue = CoalescingQueue(target: .manual)
        let people = (0..<setterCount).map { _ in CorePerson() }
        let immediateCounts = (0..<setterCount).map { _ in CoreCounter() }
        let coalescedCalls = CoreRecorder<Int>()
        let churnCalls = CoreCounter()
        var stableTokens: [ObservationToken] = []
        for (index, person) in people.enumerated() {
            let counter = immediateCounts[index]
            let immediate = person.observe(\.age, options: .immediate, queue: stableQueue) { _ in
                counter.increment()
            }
            let coalesced = person.observe(\.age, queue: stableQueue) { person in
                coalescedCalls.append(person.age)
            }
            stableTokens += [immediate, coalesced]
        }
        let tokensToEnd = (0..<churnCount).map { _ in CoreBox<[ObservationToken]>([]) }
        for round in 0..<tokensToEndPerObject {
            for person in people {
                let options: ObservationOptions = round.isMultiple(of: 3) ? .immediate : []
                let token = person.observe(\.age, options: options, queue: churnQueue) { _ in churnCalls.increment() }
                tokensToEnd[round % churnCount].value.append(token)
            }
        }

        // When setter threads set their own object's age, while churn threads end the extra
        // tokens (invalidate or drop, alternately) and create and drop tokens on other
        // properties of the same objects
        await coreRunOnThreads(setterCount + churnCount) { index in
            if index < setterCount {
                let person = people[index]
                for age in 1...setsPerThread { person.age = age }
            } else {
                let mine = tokensToEnd[index - setterCount]
                var step = 0
                while let token = mine.popLast() {
                    if step.isMultiple(of: 2) { token.invalidate() }
                    let person = people[step % setterCount]
                    let extra = person.observe([\.firstName, \.lastName], queue: churnQueue) { _ in
                        churnCalls.increment()
                    }
                    if step.isMultiple(of: 3) { extra.invalidate() }
                    step += 1
                }
            }
        }

        // Then every real change ran each stable immediate callback exactly once
        #expect(immediateCounts.map(\.value) == Array(repeating: setsPerThread, count: setterCount))
        // And each coalesced token delivers once, with the final value
        #expect(stableQueue.drain() == setterCount)
        #expect(coalescedCalls.entries == Array(repeating: setsPerThread, count: setterCount))
        // And the ended tokens never deliver again, nor leave anything attached
        let churnCallsBefore = churnCalls.value
        #expect(churnQueue.drain() == 0)
        #expect(churnCalls.value == churnCallsBefore)
        for person in people {
            #expect(person.observerCount(of: \.age) == 2)
            #expect(person.observerCount(of: \.firstName) == 0)
            #expect(person.attachedEdgeCount == 2)
            #expect(person.observedPropertyCount == 1)  // one observed property
        }
        withExtendedLifetime(stableTokens) {}
    }

    @Test func settersOfDifferentPropertiesOfOneObjectDeliverExactTotals() async {
        // Given one object with per-property immediate tokens, a multi-property immediate
        // token and a multi-property coalesced token
        let setsPerThread = 2_000
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let firstCalls = CoreCounter()
        let lastCalls = CoreCounter()
        let ageCalls = CoreCounter()
        let anyCalls = CoreCounter()
        let coalescedCalls = CoreCounter()
        let tokens = [
            person.observe(\.firstName, options: .immediate, queue: queue) { _ in firstCalls.increment() },
            person.observe(\.lastName, options: .immediate, queue: queue) { _ in lastCalls.increment() },
            person.observe(\.age, options: .immediate, queue: queue) { _ in ageCalls.increment() },
            person.observe([\.firstName, \.lastName, \.age], options: .immediate, queue: queue) { _ in
                anyCalls.increment()
            },
            person.observe([\.firstName, \.lastName, \.age], queue: queue) { _ in coalescedCalls.increment() },
        ]

        // When three threads each set a different property
        await coreRunOnThreads(3) { index in
            for value in 1...setsPerThread {
                switch index {
                case 0: person.firstName = "\(value)"
                case 1: person.lastName = "\(value)"
                default: person.age = value
                }
            }
        }

        // Then every change was seen exactly once by each immediate token
        #expect(firstCalls.value == setsPerThread)
        #expect(lastCalls.value == setsPerThread)
        #expect(ageCalls.value == setsPerThread)
        #expect(anyCalls.value == 3 * setsPerThread)
        // And the coalesced token delivers once
        #expect(queue.drain() == 1)
        #expect(coalescedCalls.value == 1)
        withExtendedLifetime(tokens) {}
    }

    @Test func tokensCreatedAndEndedOnManyThreadsKeepExactCounts() async {
        // Given a model that reports observer-count transitions, and no setter running
        let threadCount = 4
        let tokensPerThread = 250
        let queue = CoalescingQueue(target: .manual)
        let model = CoreHookedModel()
        let calls = CoreCounter()
        let kept = (0..<threadCount).map { _ in CoreBox<[ObservationToken]>([]) }

        // When each thread creates tokens, keeping the even ones and dropping the odd ones
        await coreRunOnThreads(threadCount) { index in
            var mine: [ObservationToken] = []
            for number in 0..<tokensPerThread {
                let token = model.observe(\.first, queue: queue) { _ in calls.increment() }
                if number.isMultiple(of: 2) { mine.append(token) }
            }
            kept[index].value = mine
        }

        // Then exactly the kept tokens observe, and the property went 0→1 once
        let keptCount = threadCount * tokensPerThread / 2
        #expect(model.observerCount(of: \.first) == keptCount)
        #expect(model.transitions.entries == ["first+"])
        model.first = 1
        #expect(queue.drain() == keptCount)
        #expect(calls.value == keptCount)

        // When the threads drop or invalidate their tokens at once
        await coreRunOnThreads(threadCount) { index in
            let mine = kept[index].take(replacingWith: [])
            for (number, token) in mine.enumerated() where number.isMultiple(of: 2) {
                token.invalidate()
            }
        }

        // Then the property went 1→0 once and nothing is attached
        #expect(model.transitions.entries == ["first+", "first-"])
        #expect(model.observerCount(of: \.first) == 0)
        #expect(model.observedPropertyCount == 0)
        model.first = 2
        #expect(queue.drain() == 0)
    }

    @Test func observedObjectsAndTheirTokensReleasedOnDifferentThreadsAtOnce() async {
        // Given objects and tokens (with a dealloc-protocol observer) held in separate boxes
        let count = 500
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        let deinits = CoreCounter()
        let objects = CoreBox<[CoreCountedModel]>([])
        let tokens = CoreBox<[ObservationToken]>([])
        for _ in 0..<count {
            let model = CoreCountedModel(deinits: deinits)
            tokens.value.append(model.observe(\.value, observer: listener, queue: queue) { _, _ in })
            objects.value.append(model)
        }
        let weakTokens = CoreBox<[CoreWeakToken]>(tokens.value.map(CoreWeakToken.init))

        // When one thread releases the objects while another ends the tokens
        await coreRunOnThreads(2) { index in
            if index == 0 {
                while let model = objects.popLast() {
                    withExtendedLifetime(model) {}
                }
            } else {
                var number = 0
                while let token = tokens.popLast() {
                    if number.isMultiple(of: 2) { token.invalidate() }
                    number += 1
                }
            }
        }

        // Then every object and every token is gone, and the observer heard at most once per
        // token (only where the object's deinit ended the token)
        #expect(deinits.value == count)
        #expect(weakTokens.value.allSatisfy { $0.token == nil })
        queue.drain()
        #expect(listener.notices.count <= count)
        let noticesAfterFirstDrain = listener.notices.count
        queue.drain()
        #expect(listener.notices.count == noticesAfterFirstDrain)
    }

    @Test func objectDeinitsOnManyThreadsTellTheObserverExactlyOncePerLiveToken() async {
        // Given per-thread objects whose tokens are either kept (the object ends them) or
        // dropped first (no notice)
        let threadCount = 4
        let perThread = 200
        let queue = CoalescingQueue(target: .manual)
        let listener = CoreDeinitListener()
        let deinits = CoreCounter()

        // When every thread creates and releases its objects in that pattern at once
        await coreRunOnThreads(threadCount) { _ in
            for number in 0..<perThread {
                var model: CoreCountedModel? = CoreCountedModel(deinits: deinits)
                var token: ObservationToken? = model!.observe(\.value, observer: listener, queue: queue) { _, _ in }
                // Explicit lifetimes: optimized builds may release a value after its last use.
                if number.isMultiple(of: 2) {
                    withExtendedLifetime(token) { model = nil }
                    token = nil
                } else {
                    withExtendedLifetime(model) { token = nil }
                    model = nil
                }
                withExtendedLifetime((model, token)) {}
            }
        }
        queue.drain()

        // Then exactly the tokens alive at their object's deinit were reported
        #expect(deinits.value == threadCount * perThread)
        #expect(listener.notices.count == threadCount * perThread / 2)
    }

    @Test func invalidateOnAnotherThreadStopsADeliveryAlreadyUnderWay() async {
        // Given a pending token whose delivery runs user code before the callback (the
        // endpoint comparison of `.endpointChanges` calls the value's ==)
        let gate = CoreGate()
        let model = CoreGatedModel(gate: gate)
        let queue = CoalescingQueue(target: .manual)
        let invalidateReturned = CoreBox<Bool>(false)
        let callsAfterInvalidate = CoreCounter()
        let token = model.observe(\.value, options: .endpointChanges, queue: queue) { _ in
            if invalidateReturned.value { callsAfterInvalidate.increment() }
        }
        model.value = CoreGatedValue(id: 1, gate: gate)

        // When one thread drains and is paused inside that delivery, while another thread
        // invalidates the token and only then lets the delivery continue
        await coreRunOnThreads(2) { index in
            if index == 0 {
                gate.arm()
                queue.drain()
                gate.disarm()
            } else {
                gate.waitUntilEntered()
                token.invalidate()
                invalidateReturned.value = true
                gate.release()
            }
        }

        // Then the callback never started after invalidate() returned
        #expect(callsAfterInvalidate.value == 0)
        #expect(!token.isValid)
    }
}
