import Dispatch
import Synchronization
import Testing

@testable import ObservationTokens

/// A two-way binding between two objects confined to two queues: each side is read, written
/// and delivered on its own queue only.
@Suite(.threadStress, .serialized) struct TwoWayAcrossQueuesTests {
    /// Drains both queues until neither has anything pending (a value handed from one to the
    /// other is pending there), at most 8 rounds; the rounds it took.
    static func drainUntilQuiet(_ queueA: CoalescingQueue, _ queueB: CoalescingQueue) -> Int {
        var rounds = 0
        while rounds < 8, queueA.pendingCount + queueB.pendingCount > 0 {
            queueA.drain()
            queueB.drain()
            rounds += 1
        }
        return rounds
    }

    @Test func eachSideIsWrittenOnlyInItsOwnQueuesDrain() {
        // Given a bound to b, each on its own manual queue
        let queueA = CoalescingQueue(target: .manual)
        let queueB = CoalescingQueue(target: .manual)
        let a = BindPerson(name: "a")
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, queue: queueA, otherQueue: queueB)

        // Then b takes a's value at queueB's next drain, not before
        #expect(b.name == "")
        #expect(queueA.drain() == 0)
        #expect(queueB.drain() == 1)
        #expect(b.name == "a")

        // When a changes: read in queueA's drain, written in queueB's
        a.name = "x"
        #expect(queueA.drain() == 0)
        #expect(b.name == "a")
        #expect(queueB.drain() == 1)
        #expect(b.name == "x")
        // and nothing comes back
        #expect(queueA.drain() == 0 && queueB.drain() == 0)

        // When b changes: the other way round
        b.name = "y"
        #expect(queueB.drain() == 0)
        #expect(a.name == "x")
        #expect(queueA.drain() == 1)
        #expect(a.name == "y")
        #expect(queueA.drain() == 0 && queueB.drain() == 0)
        #expect(queueA.pendingCount == 0 && queueB.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func bothSidesChangedAtOnceTheLaterChangeWinsOnBothQueues() {
        // Given a bound to b across two manual queues
        let queueA = CoalescingQueue(target: .manual)
        let queueB = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, options: [], queue: queueA, otherQueue: queueB)

        // When a changes, then b, before either queue drains
        a.name = "from a"
        b.name = "from b"
        let rounds = Self.drainUntilQuiet(queueA, queueB)

        // Then both hold b's change, which came later
        #expect(a.name == "from b" && b.name == "from b")
        #expect(rounds < 8)
        withExtendedLifetime(token) {}
    }

    @Test func eachSideIsWrittenOnItsOwnDispatchQueue() {
        // Given a confined to one dispatch queue and b to another
        let key = DispatchSpecificKey<String>()
        let dispatchA = DispatchQueue(label: "two-way.a")
        let dispatchB = DispatchQueue(label: "two-way.b")
        dispatchA.setSpecific(key: key, value: "a")
        dispatchB.setSpecific(key: key, value: "b")
        let queueA = CoalescingQueue(target: .dispatch(dispatchA))
        let queueB = CoalescingQueue(target: .dispatch(dispatchB))
        let a = BindPerson()
        let b = BindPerson()
        let count = RelScale.iterations(200, tsanDivisor: 4)
        let last = "a\(count - 1)"
        let wrongQueue = Atomic<Int>(0)
        let changesOfA = Atomic<Int>(0)
        let bHasLast = DispatchSemaphore(value: 0)
        let aHasB = DispatchSemaphore(value: 0)
        let token = a.bindTwoWay(\.name, with: b, \.name, options: [], queue: queueA, otherQueue: queueB)
        let watchA = a.observe(\.name, options: .immediate, queue: queueA) { a in
            if DispatchQueue.getSpecific(key: key) != "a" { wrongQueue.add(1, ordering: .relaxed) }
            changesOfA.add(1, ordering: .relaxed)
            if a.name == "from b" { aHasB.signal() }
        }
        let watchB = b.observe(\.name, options: .immediate, queue: queueB) { b in
            if DispatchQueue.getSpecific(key: key) != "b" { wrongQueue.add(1, ordering: .relaxed) }
            if b.name == last { bHasLast.signal() }
        }

        // When a changes many times on its queue, and then b once on its queue
        dispatchA.async {
            for index in 0..<count { a.name = "a\(index)" }
        }
        let bSettled = bHasLast.wait(timeout: .now() + 30) == .success
        dispatchB.async { b.name = "from b" }
        let aSettled = aHasB.wait(timeout: .now() + 30) == .success

        // Then b took a's last value and a took b's, each written on its own queue only, and a
        // changed exactly once more than it was set: no echo
        #expect(bSettled && aSettled)
        #expect(wrongQueue.load(ordering: .relaxed) == 0)
        dispatchA.sync {
            #expect(a.name == "from b")
            #expect(changesOfA.load(ordering: .relaxed) == count + 1)
        }
        dispatchB.sync { #expect(b.name == "from b") }
        withExtendedLifetime((token, watchA, watchB)) {}
    }

    @Test func twoThreadsChangingBothSidesConverge() {
        // Given a and b confined to two threads, each draining its own manual queue
        let queueA = CoalescingQueue(target: .manual)
        let queueB = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, options: [], queue: queueA, otherQueue: queueB)
        let count = RelScale.iterations(500, tsanDivisor: 5)

        // When both threads change their side and drain their queue, over and over
        let finished = RelThreads.run(count: 2, timeout: 60) { index in
            for step in 0..<count {
                if index == 0 {
                    a.name = "a\(step)"
                    queueA.drain()
                } else {
                    b.name = "b\(step)"
                    queueB.drain()
                }
            }
        }
        #expect(finished)
        // (The threads are done: this thread owns both sides now.)
        let rounds = Self.drainUntilQuiet(queueA, queueB)

        // Then both sides hold the same value, one side's last, and nothing is pending
        #expect(a.name == b.name)
        #expect(["a\(count - 1)", "b\(count - 1)"].contains(a.name))
        #expect(rounds < 8)
        #expect(queueA.pendingCount == 0 && queueB.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aValueInFlightWhenBothEndsGoAwayIsDroppedAndNothingLeaks() {
        // Given a bound to b across two queues, and a value of a handed over to b's queue
        let queueA = CoalescingQueue(target: .manual)
        let queueB = CoalescingQueue(target: .manual)
        var a: BindPerson? = BindPerson()
        var b: BindPerson? = BindPerson()
        var token: ObservationToken? = a!.bindTwoWay(
            \.name, with: b!, \.name, options: [], queue: queueA, otherQueue: queueB)
        weak let weakA = a
        weak let weakB = b
        weak let weakToken = token
        a!.name = "in flight"
        queueA.drain()
        #expect(queueB.pendingCount == 1)

        // When the token and both objects are dropped before b's queue drains
        token = nil
        a = nil
        b = nil

        // Then everything is gone, and the drain writes nothing
        #expect(weakToken == nil && weakA == nil && weakB == nil)
        #expect(queueB.drain() == 0)
        #expect(queueB.pendingCount == 0)
    }
}
