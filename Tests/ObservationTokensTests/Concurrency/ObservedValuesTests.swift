import Testing

@testable import ObservationTokens

/// Issue 14 §2: `values(of:)` sequences. Driven by a manual queue: each `drain()` is a tick.
@Suite struct ObservedValuesTests {
    @Test func startsWithTheCurrentValueThenOneElementPerTick() async {
        // Given a sequence of a property, including the current value
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        person.name = "a"
        var iterator = person.values(of: \.name, queue: queue).makeAsyncIterator()

        // Then the first element is the current value
        #expect(await iterator.next() == "a")

        // When the property changes three times in one tick
        person.name = "b"
        person.name = "c"
        person.name = "d"
        #expect(queue.drain() == 1)

        // Then one element carries the latest value
        #expect(await iterator.next() == "d")
    }

    @Test func withoutTheCurrentValueTheFirstElementIsTheFirstChange() async {
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        person.age = 1
        var iterator = person.values(of: \.age, includingCurrent: false, queue: queue).makeAsyncIterator()
        person.age = 2
        queue.drain()
        #expect(await iterator.next() == 2)
    }

    @Test func aSlowConsumerSeesTheLatestValueNotABacklog() async {
        // Given a sequence nobody consumes for three ticks
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        var iterator = person.values(of: \.age, includingCurrent: false, queue: queue).makeAsyncIterator()
        for age in 1...3 {
            person.age = age
            #expect(queue.drain() == 1)
        }

        // When the consumer asks, then a fourth tick delivers
        let first = await iterator.next()
        person.age = 4
        queue.drain()
        let second = await iterator.next()

        // Then it got the latest value of the missed ticks, then the new one
        #expect(first == 3)
        #expect(second == 4)
    }

    @Test func aWaitingConsumerIsResumedByTheTick() async {
        // Given a consumer task iterating with `for await`
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        let values = person.values(of: \.age, includingCurrent: false, queue: queue)
        let gotFirst = AsyncGate()
        let consumer = Task {
            var seen: [Int] = []
            for await age in values {
                seen.append(age)
                if seen.count == 1 { await gotFirst.open() }
                if seen.count == 2 { break }
            }
            return seen
        }

        // When a tick delivers, the consumer takes it, and a second tick delivers
        person.age = 1
        queue.drain()
        await gotFirst.wait()
        person.age = 2
        queue.drain()

        // Then the consumer saw both ticks' values, in order
        #expect(await consumer.value == [1, 2])
    }

    @Test func finishesWhenTheObservedObjectDeinitializes() async {
        // Given a sequence of a model nobody else keeps
        let queue = CoalescingQueue(target: .manual)
        weak var weakPerson: ConcPerson?
        var iterator: ObservedValues<Int>.Iterator
        do {
            let person = ConcPerson()
            weakPerson = person
            person.age = 5
            iterator = person.values(of: \.age, includingCurrent: false, queue: queue).makeAsyncIterator()
            person.age = 6
        }
        // The pending delivery keeps the model alive until it runs
        queue.drain()
        #expect(weakPerson == nil)
        queue.drain()  // the deinit notice

        // Then the sequence delivers the last value, then ends
        #expect(await iterator.next() == 6)
        #expect(await iterator.next() == nil)
    }

    @Test func droppingTheIteratorEndsTheObservationAtOnce() {
        // Given a sequence's iterator
        let person = ConcPerson()
        weak var weakStream: ValueStream<Int>?
        do {
            let iterator = person.values(of: \.age).makeAsyncIterator()
            weakStream = iterator.stream
            #expect(person.observerCount(of: \.age) == 1)
        }

        // Then once the sequence and iterator are gone, so are the stream and the token
        #expect(weakStream == nil)
        #expect(person.observerCount(of: \.age) == 0)
    }

    @Test func leavingTheLoopEndsTheObservationEvenWhileTheSequenceIsKept() async {
        let person = ConcPerson()
        let values = person.values(of: \.age)
        #expect(person.observerCount(of: \.age) == 1)
        for await _ in values { break }
        #expect(person.observerCount(of: \.age) == 0)
        withExtendedLifetime(values) {}
    }

    @Test func aSequenceNeverIteratedEndsItsObservationWhenDropped() {
        let person = ConcPerson()
        do {
            let values = person.values(of: \.age)
            #expect(person.observerCount(of: \.age) == 1)
            withExtendedLifetime(values) {}
        }
        #expect(person.observerCount(of: \.age) == 0)
    }

    @Test func breakingOutOfTheLoopEndsTheObservation() async {
        let person = ConcPerson()
        person.age = 1
        for await age in person.values(of: \.age) {
            #expect(age == 1)
            #expect(person.observerCount(of: \.age) == 1)
            break
        }
        #expect(person.observerCount(of: \.age) == 0)
    }

    @Test func cancellingTheTaskEndsTheObservationAtOnce() async {
        // Given a task waiting for an element
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        let values = person.values(of: \.age, includingCurrent: false, queue: queue)
        let started = AsyncGate()
        let consumer = Task {
            var iterator = values.makeAsyncIterator()
            await started.open()
            return await iterator.next()
        }
        await started.wait()

        // When the task is cancelled
        consumer.cancel()

        // Then `next()` returns nil and the token has ended, though the sequence still exists
        #expect(await consumer.value == nil)
        #expect(person.observerCount(of: \.age) == 0)
        withExtendedLifetime(values) {}
    }

    @Test func chainValuesFollowTheEndpoint() async {
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        var iterator = person.values(of: KeyPathChain(\ConcPerson.address).then(\.zipCode), queue: queue)
            .makeAsyncIterator()
        #expect(await iterator.next() == .some(nil))

        let address = ConcAddress()
        address.zipCode = "97210"
        person.address = address
        queue.drain()
        #expect(await iterator.next() == "97210")

        address.zipCode = "10001"
        queue.drain()
        #expect(await iterator.next() == "10001")
    }

    @Test func stringPathValuesAreTypedAndNilWhenUnreachable() async throws {
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        var iterator = try person.values(of: "address.zipCode", as: String.self, queue: queue).makeAsyncIterator()
        #expect(await iterator.next() == .some(nil))

        person.address = ConcAddress()
        person.address?.zipCode = "1"
        queue.drain()
        #expect(await iterator.next() == "1")

        person.address = nil
        queue.drain()
        #expect(await iterator.next() == .some(nil))
    }

    @Test func aBadStringPathThrows() {
        let person = ConcPerson()
        #expect(throws: KeyPathError.self) { try person.values(of: "nope", as: String.self) }
    }

    @Test func countsEveryTickExactlyWhenTheConsumerKeepsUp() async {
        // Given a consumer that takes each element before the next tick
        let queue = CoalescingQueue(target: .manual)
        let person = ConcPerson()
        var iterator = person.values(of: \.age, includingCurrent: false, queue: queue).makeAsyncIterator()
        var sum = 0

        // When 200 ticks each change the property 10 times
        for tick in 1...200 {
            for step in 1...10 { person.age = tick * 100 + step }
            queue.drain()
            sum += await iterator.next() ?? 0
        }

        // Then each tick gave exactly its last value
        #expect(sum == (1...200).reduce(0) { $0 + $1 * 100 + 10 })
    }
}

/// A one-shot gate tasks can wait on.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
