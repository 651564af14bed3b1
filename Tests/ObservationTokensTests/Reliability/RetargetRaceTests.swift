import Synchronization
import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// A retarget racing a set of the new middle object (docs/Reliability.md, "Threads and paths"):
// thread X, the only writer of `hub.mid`, points it at `mid`, while thread Y, the only writer of
// what `mid.tail` reads, gives `mid` a new tail. X's walk reads `mid.tail` before it attaches to
// `mid`; Y's set told no one if it found `mid` unobserved. Whatever the interleaving, the token
// must end up on the new tail.
//
// The deterministic tests pin the interleaving with latches that a will-change observer and a
// pausing read of the middle step wait on (the waits have a bound only to turn a deadlock into
// a failure); the stress test spreads the two sets with random spins, round after round.

/// The queue of `RaceSyntheticMid`'s recomputations and of this file's tokens. Used only by
/// this serialized suite.
let raceQueue = CoalescingQueue(target: .manual)

/// A one-shot signal that the thread sanitizer understands (a pthread mutex and condition).
final class RaceLatch: @unchecked Sendable {  // `isSet` is only touched under `mutex`
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isSet = false

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        isSet = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until `signal()`; false if that took more than `seconds` (a deadlock: the
    /// interleaving the test pins can't happen).
    func wait(seconds: Int = 10) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !isSet {
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return isSet }
        }
        return true
    }
}

/// What a read of a middle step does besides reading: some work (a slow getter or
/// computation), and, on the first read after `arm(_:)`, a pause whose wait may time out.
final class RaceGate: Sendable {
    private let pause = RelLock<(@Sendable () -> Bool)?>(nil)
    let timedOut = Atomic<Bool>(false)
    /// Spins each read makes.
    let work = Atomic<Int>(0)
    private let spinWord = Atomic<Int>(0)

    func arm(_ pause: @escaping @Sendable () -> Bool) {
        self.pause.withLock { $0 = pause }
    }

    func didRead() {
        raceSpin(work.load(ordering: .relaxed), on: spinWord)
        guard let pause = pause.withLock({ $0.take() }) else { return }
        if !pause() { timedOut.store(true, ordering: .relaxed) }
    }
}

/// A middle object whose `tail` is a plain computed property over an `@Observed` storage.
final class RaceComputedMid: ObservableModel, @unchecked Sendable {  // one writer per property
    @Observed var storedTail: ThreadTail?
    let gate = RaceGate()

    var tail: ThreadTail? {
        get {
            let tail = storedTail
            gate.didRead()
            return tail
        }
        set { storedTail = newValue }
    }

    init(tail: ThreadTail?) {
        _storedTail = Observed(wrappedValue: tail)
        super.init()
    }
}

/// What `RaceSyntheticMid.tail` is computed from: an object of its own, so a set of it changes
/// the computed value without a store on the middle object.
final class RaceSource: ObservableModel, @unchecked Sendable {  // one writer per property
    @Observed var tail: ThreadTail?

    init(tail: ThreadTail?) {
        _tail = Observed(wrappedValue: tail)
        super.init()
        // Read by paths from the start: its setters take the store bit, which the computation
        // below reads under (the test's own synchronization of `tail`'s value).
        registry.markReadByPaths()
    }
}

/// A middle object whose `tail` is `@Computed` from another object's property.
final class RaceSyntheticMid: ObservableModel, @unchecked Sendable {  // one writer per property
    let source: RaceSource
    let gate = RaceGate()

    @Computed(
        { (mid: RaceSyntheticMid) in
            let tail = mid.source._readExclusively { mid.source.tail }
            mid.gate.didRead()
            return tail
        })
    var tail: ThreadTail?

    init(tail: ThreadTail?) {
        source = RaceSource(tail: tail)
        super.init()
    }
}

final class RaceComputedHub: ObservableModel, @unchecked Sendable {  // one writer per property
    @Observed var mid: RaceComputedMid?

    init(mid: RaceComputedMid?) {
        _mid = Observed(wrappedValue: mid)
        super.init()
    }
}

final class RaceSyntheticHub: ObservableModel, @unchecked Sendable {  // one writer per property
    @Observed var mid: RaceSyntheticMid?

    init(mid: RaceSyntheticMid?) {
        _mid = Observed(wrappedValue: mid)
        super.init()
    }
}

/// A barrier for two long-lived threads that meet once per round.
final class RaceBarrier: @unchecked Sendable {  // a pthread object
    private let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)

    init(count: Int) {
        barrier.initialize(to: pthread_barrier_t())
        pthread_barrier_init(barrier, nil, UInt32(count))
    }

    deinit {
        pthread_barrier_destroy(barrier)
        barrier.deallocate()
    }

    func wait() { pthread_barrier_wait(barrier) }
}

/// Spins `count` rounds of an atomic load: a delay measured in work, not time.
@inline(never)
func raceSpin(_ count: Int, on word: borrowing Atomic<Int>) {
    for _ in 0..<count { _ = word.load(ordering: .relaxed) }
}

/// The three kinds of middle step the tests run through.
enum RaceMiddle: String, CaseIterable, Sendable {
    /// `@Observed var tail`.
    case stored
    /// `var tail { storedTail }`: a computed property over one `@Observed` storage.
    case computed
    /// `@Computed var tail`, computed from another object's property.
    case synthetic
}

/// One hub, two middle objects, and the operations the racing threads perform, for each kind
/// of middle step.
struct RaceFixture: @unchecked Sendable {  // each closure is called by the one thread that owns what it writes
    /// Points the hub at middle object `index` (thread X).
    let pointHub: (Int) -> Void
    /// Gives middle object `index` a new tail (thread Y).
    let setTail: (Int, ThreadTail) -> Void
    /// The tail middle object `index` has now.
    let tail: (Int) -> ThreadTail?
    /// Arms the pausing read of middle object `index` (computed kinds only).
    let armRead: (Int, @escaping @Sendable () -> Bool) -> Void
    /// Sets the spins each read of a middle object's tail makes (computed kinds only).
    let setReadWork: (Int) -> Void
    /// Whether a pausing read waited in vain.
    let readTimedOut: () -> Bool
    /// The middle object `index`, to observe its will-change.
    let willChange: (Int, @escaping @Sendable () -> Void) -> ObservationToken
    let probe = ThreadProbe()
    let token: ObservationToken

    /// Builds the fixture with the hub on middle object 1 and the token on `hub.mid.tail.value`;
    /// both middle objects have been on the path (read by paths) before.
    init(_ kind: RaceMiddle) {
        let probe = probe
        switch kind {
        case .stored:
            let mids = [ThreadMid(tail: ThreadTail(value: -1)), ThreadMid(tail: ThreadTail(value: -1))]
            let hub = ThreadHub(mid: mids[0])
            token = hub.observe(.chain(midTailValue), queue: raceQueue) { _, value in probe.record(value) }
            hub.mid = mids[1]
            pointHub = { hub.mid = mids[$0] }
            setTail = { mids[$0].tail = $1 }
            tail = { mids[$0].tail }
            armRead = { _, _ in }
            setReadWork = { _ in }
            readTimedOut = { false }
            willChange = { index, body in mids[index].observe(.willChange) { _ in body() } }
        case .computed:
            let mids = [RaceComputedMid(tail: ThreadTail(value: -1)), RaceComputedMid(tail: ThreadTail(value: -1))]
            let hub = RaceComputedHub(mid: mids[0])
            let chain = KeyPathChain(\RaceComputedHub.mid).then(\.tail).then(\.value)
            token = hub.observe(.chain(chain), queue: raceQueue) { _, value in probe.record(value) }
            hub.mid = mids[1]
            pointHub = { hub.mid = mids[$0] }
            setTail = { mids[$0].tail = $1 }
            tail = { mids[$0].storedTail }
            armRead = { mids[$0].gate.arm($1) }
            setReadWork = { work in for mid in mids { mid.gate.work.store(work, ordering: .relaxed) } }
            readTimedOut = { mids.contains { $0.gate.timedOut.load(ordering: .relaxed) } }
            willChange = { index, body in mids[index].observe(.willChange) { _ in body() } }
        case .synthetic:
            let mids = [RaceSyntheticMid(tail: ThreadTail(value: -1)), RaceSyntheticMid(tail: ThreadTail(value: -1))]
            let hub = RaceSyntheticHub(mid: mids[0])
            let chain = KeyPathChain(\RaceSyntheticHub.mid).then(\.tail).then(\.value)
            token = hub.observe(.chain(chain), queue: raceQueue) { _, value in probe.record(value) }
            hub.mid = mids[1]
            pointHub = { hub.mid = mids[$0] }
            setTail = { mids[$0].source.tail = $1 }
            tail = { mids[$0].source.tail }
            armRead = { mids[$0].gate.arm($1) }
            setReadWork = { work in for mid in mids { mid.gate.work.store(work, ordering: .relaxed) } }
            readTimedOut = { mids.contains { $0.gate.timedOut.load(ordering: .relaxed) } }
            willChange = { index, body in mids[index].source.observe(.willChange) { _ in body() } }
        }
        raceQueue.drain()
    }

    /// After a round that pointed the hub at middle object `index` and gave it `newTail`:
    /// whether the token watches `newTail`, and it alone. Sets `newTail.value` and drains.
    func watchesOnly(_ newTail: ThreadTail, replacing oldTail: ThreadTail, value: Int) -> Bool {
        raceQueue.drain()
        newTail.value = value
        return raceQueue.drain() == 1 && probe.lastValue.load(ordering: .relaxed) == value
            && newTail.observerCount(of: \.value) == 1 && oldTail.observerCount(of: \.value) == 0
    }
}

@Suite("Threads and paths: a retarget racing a set of the new middle object", .threadStress, .serialized)
struct RetargetRaceTests {
    @Test(arguments: [RaceMiddle.stored, .computed])
    func aSetThatFoundTheNewMiddleObjectUnobservedIsNotLost(kind: RaceMiddle) {
        // Given hub.mid.tail.value with the hub on mid 1, and mid 0 off the path (it was on it
        // before: its setters take the store bit)
        let fixture = RaceFixture(kind)
        let oldTail = fixture.tail(0)!
        let newTail = ThreadTail(value: 7)
        let yStoring = RaceLatch()
        let xDone = RaceLatch()
        let yWaited = Atomic<Bool>(true)
        // Y's set pauses in mid 0's will-change (after it found mid 0 unobserved, before it
        // stores) until X's retarget has read mid 0's tail, attached and checked its walk
        let willChange = fixture.willChange(0) {
            yStoring.signal()
            if !xDone.wait() { yWaited.store(false, ordering: .relaxed) }
        }

        // When X points the hub at mid 0 while Y gives mid 0 a new tail
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            if thread == 0 {
                _ = yStoring.wait()
                fixture.pointHub(0)
                xDone.signal()
            } else {
                fixture.setTail(0, newTail)
            }
        }
        willChange.invalidate()

        // Then the interleaving happened as pinned, and the token watches the new tail only
        let yWaitedForX = yWaited.load(ordering: .relaxed)
        #expect(finished)
        #expect(yWaitedForX)
        #expect(!fixture.readTimedOut())
        #expect(fixture.watchesOnly(newTail, replacing: oldTail, value: 42))
        withExtendedLifetime(fixture.token) {}
    }

    @Test func aComputedStepThatChangedWhileTheRetargetComputedItIsReadAgain() {
        // Given hub.mid.tail.value where `tail` is @Computed from mid.source.tail, the hub on
        // mid 1, and mid 0 off the path with its computed tail invalid (its source changed)
        let fixture = RaceFixture(.synthetic)
        let staleTail = ThreadTail(value: -2)
        fixture.setTail(0, staleTail)
        let newTail = ThreadTail(value: 7)
        let xRead = RaceLatch()
        let ySet = RaceLatch()
        let yWaited = Atomic<Bool>(true)
        // X's retarget computes mid 0's tail: the computation pauses after reading the source,
        // until Y has replaced it (which invalidates the value being computed)
        fixture.armRead(0) {
            xRead.signal()
            return ySet.wait()
        }

        // When X points the hub at mid 0 while Y gives mid 0's source a new tail
        let finished = RelThreads.run(count: 2, timeout: 60) { thread in
            if thread == 0 {
                fixture.pointHub(0)
            } else {
                if !xRead.wait() { yWaited.store(false, ordering: .relaxed) }
                fixture.setTail(0, newTail)
                ySet.signal()
            }
        }

        // Then the computation did not hold a lock Y needed, and the token watches the new tail,
        // not the one the paused computation returned
        let yWaitedForX = yWaited.load(ordering: .relaxed)
        #expect(finished)
        #expect(yWaitedForX)
        #expect(!fixture.readTimedOut())
        #expect(fixture.watchesOnly(newTail, replacing: staleTail, value: 42))
        withExtendedLifetime(fixture.token) {}
    }

    @Test(arguments: RaceMiddle.allCases)
    func randomlyInterleavedRetargetsAndSetsOfTheNewMiddleObjectAreNeverLost(kind: RaceMiddle) {
        // Given hub.mid.tail.value over two middle objects of `kind`, and two threads that meet
        // once per round: X (thread 0), the only writer of hub.mid, and Y (thread 1), the only
        // writer of what the middle objects' tails read
        let rounds = RelScale.iterations(4_000, tsanDivisor: 2)
        let fixture = RaceFixture(kind)
        let tails = (0..<rounds).map { ThreadTail(value: -($0 + 10)) }
        let start = RaceBarrier(count: 2)
        let done = RaceBarrier(count: 2)
        let spin = Atomic<Int>(0)
        // A will-change observer that works a while: Y's set finds the middle object unobserved,
        // then works, then stores (a stored or plain computed step's whole window).
        let willChangeWork = Atomic<Int>(0)
        let willChangeSpin = Atomic<Int>(0)
        let willChange = (0..<2).map { index in
            fixture.willChange(index) { raceSpin(willChangeWork.load(ordering: .relaxed), on: willChangeSpin) }
        }
        let lost = Atomic<Int>(0)
        let firstLost = Atomic<Int>(-1)

        // When, each round, X points the hub at the middle object it is not on while Y gives
        // that object a new tail, each after a random spin (a seeded generator per thread);
        // and X checks, once both are done, that the token watches the new tail only
        let finished = RelThreads.run(count: 2, timeout: 300) { thread in
            var random = RelRandom(seed: 0x5EED_0000 + UInt64(thread))
            for round in 0..<rounds {
                let index = round % 2
                // Read before the round starts, when Y is not writing it; and a slow read of
                // a computed step, which X's retarget holds the middle object's store bit for.
                let replaced = thread == 0 ? fixture.tail(index) : nil
                if thread == 0 {
                    fixture.setReadWork(random.below(200))
                } else {
                    willChangeWork.store(random.below(2) == 0 ? 0 : random.below(2_000), ordering: .relaxed)
                }
                start.wait()
                raceSpin(random.below(400), on: spin)
                if thread == 0 {
                    fixture.pointHub(index)
                } else {
                    fixture.setTail(index, tails[round])
                }
                done.wait()
                guard thread == 0, let replaced else { continue }
                if !fixture.watchesOnly(tails[round], replacing: replaced, value: round) {
                    if lost.add(1, ordering: .relaxed).newValue == 1 { firstLost.store(round, ordering: .relaxed) }
                }
            }
        }

        for token in willChange { token.invalidate() }

        // Then every round ended with the token on the new tail, and on nothing else
        #expect(finished)
        let lostRounds = lost.load(ordering: .relaxed)
        let first = firstLost.load(ordering: .relaxed)
        #expect(lostRounds == 0, "first lost round: \(first)")
        #expect(tails.dropLast().allSatisfy { $0.observerCount(of: \.value) == 0 })
        #expect(tails.last!.observerCount(of: \.value) == 1)
        withExtendedLifetime(fixture.token) {}
    }
}
