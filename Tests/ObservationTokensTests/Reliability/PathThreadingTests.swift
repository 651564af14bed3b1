import Synchronization
import Testing

@testable import ObservationTokens

// Paths whose objects are written by different threads, one writer per property (what the
// threading contract allows; see docs/Reliability.md, "Threads and paths").
//
// The models are `@unchecked Sendable` because the test hands them to threads; each property has
// exactly one writing thread while the threads run, and the library's own reads of them (path
// walks, endpoint values) are what these tests check.

final class ThreadNode: ObservableModel, @unchecked Sendable {
    @Observed var next: ThreadNode?
    @Observed var value = 0

    init(next: ThreadNode? = nil, value: Int = 0) {
        _next = Observed(wrappedValue: next)
        _value = Observed(wrappedValue: value)
        super.init()
    }

    /// Replaces `next` behind the observers' backs, then tells them.
    func replaceNextBehindObservers(_ node: ThreadNode?) {
        _next.storedValue = node
        propertyDidChange(\.next)
    }
}

final class ThreadTail: ObservableModel, @unchecked Sendable {
    @Observed var value: Int

    init(value: Int = 0) {
        _value = Observed(wrappedValue: value)
        super.init()
    }
}

final class ThreadMid: ObservableModel, @unchecked Sendable {
    @Observed var tail: ThreadTail?

    init(tail: ThreadTail? = ThreadTail()) {
        _tail = Observed(wrappedValue: tail)
        super.init()
    }
}

final class ThreadHub: ObservableModel, @unchecked Sendable {
    @Observed var mid: ThreadMid?

    init(mid: ThreadMid? = nil) {
        _mid = Observed(wrappedValue: mid)
        super.init()
    }
}

/// Counts callbacks and keeps the last endpoint a chain callback received.
final class ThreadProbe: Sendable {
    let fires = Atomic<Int>(0)
    let lastValue = Atomic<Int>(-1)

    func record(_ value: Int?) {
        fires.add(1, ordering: .relaxed)
        lastValue.store(value ?? -2, ordering: .relaxed)
    }
}

let midTailValue = KeyPathChain(\ThreadHub.mid).then(\.tail).then(\.value)

/// A middle object with a second property, written by a thread of its own.
final class ThreadCountedMid: ObservableModel, @unchecked Sendable {
    @Observed var tail: ThreadTail?
    @Observed var count = 0

    init(tail: ThreadTail?) {
        _tail = Observed(wrappedValue: tail)
        super.init()
    }
}

@Suite("Threads and paths", .threadStress, .serialized)
struct PathThreadingTests {
    @Test func storageWriteThatFreesAMiddleObjectDoesNotReadThePathInsideTheWrite() {
        // Given a token on root.next.next.value (the crash: the old node's deinit ran a
        // re-walk inside the write of `_next`)
        for options: ObservationOptions in [[], .immediate] {
            let queue = CoalescingQueue(target: .manual)
            let root = ThreadNode(next: ThreadNode(next: ThreadNode()))
            let probe = ThreadProbe()
            let chain = KeyPathChain(\ThreadNode.next).then(\.next).then(\.value)
            let token = root.observe(.chain(chain), options: options, queue: queue) { _, value in probe.record(value) }

            // When a middle node replaces its `next` behind the observers' backs, freeing the old one
            let replacement = ThreadNode(value: 7)
            root.next!.replaceNextBehindObservers(replacement)
            queue.drain()

            // Then the token follows the new node, and only it
            #expect(probe.lastValue.load(ordering: .relaxed) == 7)
            let before = probe.fires.load(ordering: .relaxed)
            replacement.value = 8
            queue.drain()
            #expect(probe.fires.load(ordering: .relaxed) == before + 1)
            #expect(probe.lastValue.load(ordering: .relaxed) == 8)
            #expect(replacement.observerCount(of: \.value) == 1)
            withExtendedLifetime(token) {}
        }
    }

    @Test func retargetReadsNothingBeforeTheChangedProperty() {
        // Given a token on root.next.next.next.value over root → f → shared → g, where thread 1
        // is the only writer of root.next (a fresh f each time, the old one freed) and thread 2
        // the only writer of shared.next (a fresh g each time): thread 2's retarget must not read
        // root.next, which thread 1 is replacing
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let shared = ThreadNode(next: ThreadNode(value: 1))
        let root = ThreadNode(next: ThreadNode(next: shared))
        let chain = KeyPathChain(\ThreadNode.next).then(\.next).then(\.next).then(\.value)
        let probe = ThreadProbe()
        let token = root.observe(.chain(chain), queue: queue) { _, value in probe.record(value) }

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    root.next = ThreadNode(next: shared)
                } else {
                    shared.next = ThreadNode(value: index)
                }
            }
        }
        #expect(finished)

        // Then the token runs exactly where the path runs now
        queue.drain()
        let leaf = shared.next!
        leaf.value = 123_456
        #expect(queue.drain() == 1)
        #expect(probe.lastValue.load(ordering: .relaxed) == 123_456)
        #expect(leaf.observerCount(of: \.value) == 1)
        #expect(root.next!.observerCount(of: \.next) == 1)
        #expect(shared.observerCount(of: \.next) == 1)
        withExtendedLifetime(token) {}
    }

    @Test func retargetReadsAMiddleObjectWhileItsOwnerReplacesItsTail() {
        // Given hub.mid.tail.value, thread X the only writer of hub.mid (four mids in turn),
        // thread Y the only writer of every mid.tail (fresh tails; the old ones are freed)
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let mids = (0..<4).map { _ in ThreadMid() }
        let hub = ThreadHub(mid: mids[0])
        let probe = ThreadProbe()
        let token = hub.observe(.chain(midTailValue), queue: queue) { _, value in probe.record(value) }
        for mid in mids { hub.mid = mid }  // every mid has been on the path once

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    hub.mid = mids[index % mids.count]
                } else {
                    mids[(index / 3) % mids.count].tail = ThreadTail(value: index)
                }
            }
        }
        #expect(finished)

        // Then the token watches the current mid's current tail, and nothing else
        queue.drain()
        let tail = hub.mid!.tail!
        tail.value = -7
        #expect(queue.drain() == 1)
        #expect(probe.lastValue.load(ordering: .relaxed) == -7)
        #expect(tail.observerCount(of: \.value) == 1)
        for mid in mids where mid !== hub.mid {
            #expect(mid.observedPropertyCount == 0)
            #expect(mid.tail!.observedPropertyCount == 0)
        }
        withExtendedLifetime(token) {}
    }

    @Test func aTwoStepChainRetargetedOnOneThreadWhileItsTailsAreWrittenOnAnother() {
        // Given mid.tail.value (two steps: a retarget of it knows its one middle edge is on the
        // root), thread X the only writer of mid.tail (four tails in turn, or nil), thread Y the
        // only writer of every tail's value
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let race = CountedMidRace()

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    race.repoint(index)
                } else {
                    race.tails[index % 4].value = index
                }
            }
        }
        #expect(finished)
        race.queue.drain()

        // Then the token watches exactly the current tail: one edge on it, none on the others
        race.expectTheTokenAloneWatchesTheCurrentTail()
    }

    @Test func aRetargetReadsItsOwnSetWhileOtherThreadsStoreAndWalkTheSameObject() {
        // Given mid.tail.value (a retarget from mid reads mid.tail, its own set, without mid's
        // lock and store bit), thread X the only writer of mid.tail, thread Y the only writer of
        // mid.count (stores on mid that take its store bit meanwhile), thread Z draining the
        // chain token (its callback's endpoint reads mid.tail under mid's store bit)
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let race = CountedMidRace()
        let counts = Atomic<Int>(0)
        let countToken = race.mid.observe(\.count, options: .immediate) { _ in counts.add(1, ordering: .relaxed) }

        // When the three threads run
        let finished = RelThreads.run(count: 3, timeout: 60) { thread in
            for index in 0..<iterations {
                switch thread {
                case 0: race.repoint(index)
                case 1: race.mid.count = index + 1
                default: race.queue.drain()
                }
            }
        }
        #expect(finished)
        race.queue.drain()

        // Then every set of mid.count was told, and the token watches exactly the current tail
        #expect(counts.load(ordering: .relaxed) == iterations)
        race.expectTheTokenAloneWatchesTheCurrentTail()
        withExtendedLifetime(countToken) {}
    }

    @Test func chainTokensMadeAndDroppedWhileAnotherThreadSetsTheirMiddleAreAllValidAndLeaveNoEdges() {
        // Given mid.tail.value, already on a path (a long-lived token), thread X the only writer
        // of mid.tail (four tails, or nil), and thread Y making a chain token of the same path
        // each round (its chain check reads mid.tail and tail.value) and dropping it
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let race = CountedMidRace()
        let valid = Atomic<Int>(0)

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    race.repoint(index)
                } else {
                    let made = race.mid.observe(.chain(race.chain), queue: race.queue) { _, _ in }
                    if made.isValid { valid.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(finished)
        race.queue.drain()

        // Then every token made was valid (no segment misjudged), and only the long-lived
        // token watches: exactly one edge on mid.tail and on the current tail
        #expect(valid.load(ordering: .relaxed) == iterations)
        race.expectTheTokenAloneWatchesTheCurrentTail()
    }

    @Test func tellAndStopTellingAboutAChainWhileAnotherThreadSetsItsFirstStepEndEveryObservation() {
        // Given mid.tail.value, already on a path (a long-lived token), thread X the only writer
        // of mid.tail, and thread Y telling an observer about the chain and then stopping
        // (`stopTelling(_:about:)` finds the observation by its first step on mid) each round
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let race = CountedMidRace()
        let observer = ThreadProbe()
        let ended = Atomic<Int>(0)

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    race.repoint(index)
                } else {
                    let observation = race.mid.tell(observer, when: race.chain, queue: race.queue) { _, _ in }
                    race.mid.stopTelling(observer, about: [\.tail])
                    if !observation.isActive { ended.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(finished)
        race.queue.drain()

        // Then every observation was found and ended, and only the token watches the path
        #expect(ended.load(ordering: .relaxed) == iterations)
        race.expectTheTokenAloneWatchesTheCurrentTail()
    }

    @Test func twoRootsSharingAMiddleObjectWithOneWriterEach() {
        // Given hubA.mid.tail.value and hubB.mid.tail.value with hubB.mid == shared for good;
        // thread X the only writer of shared.tail, thread Y the only writer of hubA.mid
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let shared = ThreadMid()
        let other = ThreadMid()
        let hubA = ThreadHub(mid: other)
        let hubB = ThreadHub(mid: shared)
        let probeA = ThreadProbe()
        let probeB = ThreadProbe()
        let tokenA = hubA.observe(.chain(midTailValue), queue: queue) { _, value in probeA.record(value) }
        let tokenB = hubB.observe(.chain(midTailValue), queue: queue) { _, value in probeB.record(value) }

        // When both threads run
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            for index in 0..<iterations {
                if thread == 0 {
                    shared.tail = ThreadTail(value: index)
                } else {
                    hubA.mid = index % 2 == 0 ? shared : other
                }
            }
        }
        #expect(finished)

        // Then both tokens watch shared's current tail (hubA ends on `other`, the last index is odd)
        queue.drain()
        #expect(hubA.mid === other)
        shared.tail!.value = 99
        other.tail!.value = 98
        #expect(queue.drain() == 2)
        #expect(probeA.lastValue.load(ordering: .relaxed) == 98)
        #expect(probeB.lastValue.load(ordering: .relaxed) == 99)
        #expect(shared.tail!.observerCount(of: \.value) == 1)
        #expect(other.tail!.observerCount(of: \.value) == 1)
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test func setOfTheNewMiddleObjectDuringTheRetargetIsNotLost() {
        // Given hub.mid.tail.value, and mids that have been on the path before. Each round, thread
        // X points hub.mid at the next mid while thread Y gives that mid a new tail: Y's set can
        // land after X's walk read the tail and before X attached to it, when Y tells no one.
        let rounds = RelScale.iterations(3_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let mids = (0..<2).map { _ in ThreadMid() }
        let hub = ThreadHub(mid: mids[0])
        let probe = ThreadProbe()
        let token = hub.observe(.chain(midTailValue), queue: queue) { _, value in probe.record(value) }
        hub.mid = mids[1]
        var lost = 0
        for round in 0..<rounds {
            let mid = mids[round % 2]
            let newTail = ThreadTail()
            // When X re-points hub.mid and Y replaces that mid's tail at the same moment
            let finished = RelThreads.run(count: 2, timeout: 30) { thread in
                if thread == 0 { hub.mid = mid } else { mid.tail = newTail }
            }
            #expect(finished)
            queue.drain()
            // Then the token watches the new tail
            newTail.value = round + 1
            if queue.drain() != 1 || newTail.observerCount(of: \.value) != 1 { lost += 1 }
        }
        #expect(lost == 0)
        withExtendedLifetime(token) {}
    }

    @Test func endpointValuesAreReadSafelyWhileAnotherThreadReplacesTheMiddleObject() {
        // Given chain tokens (one with .endpointChanges) drained on one thread while another
        // thread, the only writer of hub.mid, keeps replacing it
        let iterations = RelScale.iterations(20_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let mids = (0..<3).map { ThreadMid(tail: ThreadTail(value: $0)) }
        let hub = ThreadHub(mid: mids[0])
        let probe = ThreadProbe()
        let changes = ThreadProbe()
        let token = hub.observe(.chain(midTailValue), queue: queue) { _, value in probe.record(value) }
        let changeToken = hub.observe(.chain(midTailValue), options: .endpointChanges, queue: queue) { _, value in
            changes.record(value)
        }
        let done = Atomic<Bool>(false)

        // When one thread drains while the other writes
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            if thread == 0 {
                for index in 0..<iterations { hub.mid = index % 4 == 3 ? nil : mids[index % 3] }
                hub.mid = mids[1]
                done.store(true, ordering: .sequentiallyConsistent)
            } else {
                while !done.load(ordering: .sequentiallyConsistent) { queue.drain() }
            }
        }
        #expect(finished)

        // Then the last delivery saw the last endpoint
        queue.drain()
        #expect(probe.lastValue.load(ordering: .relaxed) == 1)
        #expect(changes.lastValue.load(ordering: .relaxed) == 1)
        withExtendedLifetime((token, changeToken)) {}
    }
}

/// `mid.tail.value` with four tails and one long-lived chain token on `mid`: the setting of the
/// tests in which one thread re-points `mid.tail` while others work on the same objects.
private struct CountedMidRace: Sendable {
    let queue = CoalescingQueue(target: .manual)
    let tails = (0..<4).map { ThreadTail(value: $0) }
    let mid: ThreadCountedMid
    let probe = ThreadProbe()
    let chain = KeyPathChain(\ThreadCountedMid.tail).then(\.value)
    let token: ObservationToken

    init() {
        mid = ThreadCountedMid(tail: tails[0])
        let probe = probe
        token = mid.observe(.chain(chain), queue: queue) { _, value in probe.record(value) }
    }

    /// Round `index` of mid.tail's one writer: the four tails in turn, or nil.
    func repoint(_ index: Int) {
        mid.tail = index % 5 == 4 ? nil : tails[index % 4]
    }

    /// Once the threads have joined and the queue is drained: the long-lived token alone
    /// watches, with one edge on mid.tail and one on the current tail, and no other tail is
    /// observed.
    func expectTheTokenAloneWatchesTheCurrentTail() {
        #expect(mid.observerCount(of: \.tail) == 1)
        mid.tail = tails[2]
        #expect(queue.drain() == 1)
        let before = probe.fires.load(ordering: .relaxed)
        tails[2].value = -5
        for (index, tail) in tails.enumerated() where index != 2 { tail.value = -index - 10 }
        #expect(queue.drain() == 1)
        #expect(probe.fires.load(ordering: .relaxed) == before + 1)
        #expect(probe.lastValue.load(ordering: .relaxed) == -5)
        #expect(tails[2].observerCount(of: \.value) == 1)
        for (index, tail) in tails.enumerated() where index != 2 { #expect(tail.observedPropertyCount == 0) }
        #expect(mid.observerCount(of: \.tail) == 1)
        withExtendedLifetime(token) {}
    }
}
