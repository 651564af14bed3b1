import Synchronization
import Testing

@testable import ObservationTokens

/// A further set in a tick whose tokens are all pending already does nothing, however many
/// they are: a registry remembers that a set left every member of the property pending
/// (`SettledMark`) until their queue starts a drain. These tests pin what that must not change.
@Suite(.threadStress, .serialized) struct RepeatedSetTests {
    static let many = 12

    @Test func everyTokenHearsOfEachTickWhateverTheSetsBefore() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let counter = CoreCounter()
        let tokens = (0..<Self.many).map { _ in person.observe(\.age, queue: queue) { _ in counter.increment() } }

        for tick in 1...3 {
            // Several sets in one tick (the stamp is set by the second): one delivery each.
            for age in 1...5 { person.age = tick * 10 + age }
            #expect(queue.drain() == Self.many)
        }
        #expect(counter.value == 3 * Self.many)
        // One set alone after a drain still reaches every token.
        person.age = 99
        #expect(queue.drain() == Self.many)
        withExtendedLifetime(tokens) {}
    }

    /// A computed value's dependency, skipped by sets while the value is invalid, never makes
    /// its property settled: reading the value computes it again, and the next set must
    /// invalidate it again.
    @Test func aSetAfterAnInvalidComputedValueWasReadAgainInvalidatesIt() {
        let model = SynthStressModel()
        #expect(model.label == "0,0")
        for x in 1...4 { model.x = x }  // invalid from the first set; the others skip it
        #expect(model.pair.x == 4)
        model.x = 5
        #expect(model.pair.x == 5)
        #expect(model.label == "5,0")
    }

    @Test func aTokenAddedAfterTheTickSettledHearsTheNextSet() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var tokens = (0..<Self.many).map { _ in person.observe(\.age, queue: queue) { _ in } }
        person.age = 1
        person.age = 2  // all pending: the property is settled
        let late = CoreCounter()
        tokens.append(person.observe(\.age, queue: queue) { _ in late.increment() })
        person.age = 3
        #expect(queue.drain() == Self.many + 1)
        #expect(late.value == 1)
    }

    @Test func changeTokensKeepTheTicksFirstOldValueAndImmediateTokensHearEverySet() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.age = 1
        var tokens = (0..<Self.many).map { _ in person.observe(\.age, queue: queue) { _ in } }
        let changes = CoreRecorder<String>()
        tokens.append(
            person.observe(.changes(\.age), queue: queue) { _, change in changes.append("\(change.old)→\(change.new)") }
        )
        for age in 2...4 { person.age = age }
        #expect(queue.drain() == Self.many + 1)
        #expect(changes.entries == ["1→4"])

        let immediate = CoreCounter()
        tokens.append(person.observe(\.age, options: .immediate, queue: queue) { _ in immediate.increment() })
        for age in 5...8 { person.age = age }
        #expect(immediate.value == 4)
        #expect(queue.drain() == Self.many + 1)
        #expect(changes.entries == ["1→4", "4→8"])
    }

    /// Paths running through a crowded property have work on every set (they move): each set
    /// of the middle object retargets them, however many sets the tick has.
    @Test func pathsThroughACrowdedPropertyFollowEverySet() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let streets = KeyPathChain(\CorePerson.address).then(\.street)
        let tokens = (0..<Self.many).map { _ in person.observe(.chain(streets), queue: queue) { _, _ in } }
        let addresses = (0..<3).map { _ in CoreAddress() }
        for address in addresses { person.address = address }
        #expect(queue.drain() == Self.many)
        addresses[1].street = "old"
        #expect(queue.drain() == 0)
        addresses[2].street = "new"
        #expect(queue.drain() == Self.many)
        withExtendedLifetime(tokens) {}
    }

    @Test func tokensOnSeveralQueuesEachHearTheTick() {
        let first = CoalescingQueue(target: .manual)
        let second = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let tokens = (0..<Self.many).map { index in
            person.observe(\.age, queue: index.isMultiple(of: 2) ? first : second) { _ in }
        }
        for age in 1...4 { person.age = age }
        #expect(first.drain() == (Self.many + 1) / 2)
        person.age = 5
        #expect(first.drain() == (Self.many + 1) / 2)
        #expect(second.drain() == Self.many / 2)
        withExtendedLifetime(tokens) {}
    }

    /// One thread sets, another drains all the while: every token must be delivered after the
    /// last set began (a stamp that outlived a drain would skip that set). Each callback
    /// records how many sets had begun when it ran; a set's own delivery reads at least its
    /// number. Run under the thread sanitizer in CI.
    @Test(.timeLimit(.minutes(1)))
    func aDrainRacingFurtherSetsNeverLosesTheLastOne() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let setsBegun = Atomic<Int>(0)
        let lastSeen = RelLock([Int](repeating: 0, count: Self.many))
        let tokens = (0..<Self.many).map { index in
            person.observe(\.age, queue: queue) { _ in
                let begun = setsBegun.load(ordering: .sequentiallyConsistent)
                lastSeen.withLock { $0[index] = max($0[index], begun) }
            }
        }
        let total = 20_000
        let done = Atomic<Bool>(false)
        let finished = RelThreads.run(count: 2, timeout: 50) { thread in
            if thread == 0 {
                for age in 1...total {
                    setsBegun.store(age, ordering: .sequentiallyConsistent)
                    person.age = age
                }
                done.store(true, ordering: .sequentiallyConsistent)
            } else {
                while !done.load(ordering: .sequentiallyConsistent) { _ = queue.drain() }
            }
        }
        #expect(finished)
        _ = queue.drain()
        #expect(lastSeen.withLock { $0 } == [Int](repeating: total, count: Self.many))
        withExtendedLifetime(tokens) {}
    }

    /// One token, as most properties have: a further set skips the registry (one load and a
    /// compare-and-swap), and each tick still delivers the tick's last value once.
    /// A fresh object's second set in a tick already marks its property settled: the first mark
    /// takes its queue and checks the members again after reading the epoch (it used to only
    /// take the queue, leaving the mark to the next set, which took the lock again).
    @Test func aFreshObjectsSecondSetOfATickMarksItsProperty() {
        // Given a fresh object with one token on a property
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in seen.append(person.age) }
        let serials = person.registry.observedSerials
        #expect(serials.count == 1)
        let bit = SettledMark.bit(serials.first ?? 0)

        // When the property is set twice, then once more
        person.age = 1
        let markedAfterFirst = person.registry.settledMark.load(ordering: .sequentiallyConsistent) & bit != 0
        person.age = 2
        let markedAfterSecond = person.registry.settledMark.load(ordering: .sequentiallyConsistent) & bit != 0
        person.age = 3

        // Then the second set marked it, and the token hears the tick's last value once
        #expect(!markedAfterFirst)
        #expect(markedAfterSecond)
        #expect(queue.drain() == 1)
        #expect(seen.entries == [3])
        person.age = 4
        #expect(queue.drain() == 1)
        #expect(seen.entries == [3, 4])
        withExtendedLifetime(token) {}
    }

    /// Fresh objects' first marks made while another thread drains: whichever drain a first
    /// mark races, each token hears its object's last set.
    @Test(.timeLimit(.minutes(1)))
    func firstMarksRacingDrainsNeverLoseTheLastSet() {
        // Given many fresh objects, each with one token, and a thread draining their queue
        let queue = CoalescingQueue(target: .manual)
        let count = RelScale.iterations(2_000, tsanDivisor: 4)
        let people = (0..<count).map { _ in CorePerson() }
        let lastSeen = RelLock([Int](repeating: 0, count: count))
        let tokens = people.indices.map { index in
            people[index].observe(\.age, queue: queue) { person in
                let age = person.age
                lastSeen.withLock { $0[index] = max($0[index], age) }
            }
        }
        let done = Atomic<Bool>(false)

        // When one thread sets each object three times (its second set is its registry's first
        // mark) while the other drains
        let finished = RelThreads.run(count: 2, timeout: 50) { thread in
            if thread == 0 {
                for person in people {
                    for age in 1...3 { person.age = age }
                }
                done.store(true, ordering: .sequentiallyConsistent)
            } else {
                while !done.load(ordering: .sequentiallyConsistent) { _ = queue.drain() }
            }
        }
        _ = queue.drain()

        // Then every token saw its object's last value
        #expect(finished)
        #expect(lastSeen.withLock { $0 } == [Int](repeating: 3, count: count))
        withExtendedLifetime(tokens) {}
    }

    @Test func aLoneTokenSeesEachTicksLastValueOnce() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in seen.append(person.age) }

        for tick in 1...3 {
            for age in 1...4 { person.age = tick * 10 + age }
            #expect(queue.drain() == 1)
        }
        person.age = 99
        #expect(queue.drain() == 1)

        #expect(seen.entries == [14, 24, 34, 99])
        withExtendedLifetime(token) {}
    }

    /// A set that lands while the drain runs, after the token was delivered in it (here, from a
    /// callback queued after the token), finds the tick's mark stale (the drain moved the
    /// epoch): the token becomes pending again and hears it next tick, as it would without the
    /// mark.
    @Test func aSetAfterTheDrainDeliveredTheTokenMakesItPendingAgain() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let trigger = CorePerson()
        let seen = CoreRecorder<Int>()
        let token = person.observe(\.age, queue: queue) { person in seen.append(person.age) }
        person.age = 1
        person.age = 2  // marked settled
        person.age = 3  // skips
        // Queued after the token: it runs once the token was delivered in the drain.
        let setter = trigger.observe(\.firstName, queue: queue) { _ in person.age = 100 }
        trigger.firstName = "go"

        #expect(queue.drain() == 2)
        #expect(seen.entries == [3])
        #expect(queue.drain() == 1)
        #expect(seen.entries == [3, 100])

        // A mark made before a drain never outlives it.
        person.age = 4
        person.age = 5
        #expect(queue.drain() == 1)
        person.age = 6
        #expect(queue.drain() == 1)
        #expect(seen.entries == [3, 100, 5, 6])
        withExtendedLifetime((setter, token)) {}
    }

    /// Properties whose serials are 16 apart share a bit of the mark: a set of one whose tokens
    /// are all pending must not make a set of the other skip its tokens.
    @Test func propertiesSharingAMarkBitEachTellTheirOwnTokens() throws {
        let queue = CoalescingQueue(target: .manual)
        let model = SeventeenProperties()
        let (first, second) = try #require(model.twoPropertiesSharingAMarkBit())
        let counts = (CoreCounter(), CoreCounter())
        let tokens = [
            model.observe(first, queue: queue) { _ in counts.0.increment() },
            model.observe(second, queue: queue) { _ in counts.1.increment() },
        ]

        model[keyPath: first] = 1
        model[keyPath: first] = 2  // all of `first`'s tokens pending
        model[keyPath: second] = 1

        #expect(queue.drain() == 2)
        #expect(counts.0.value == 1)
        #expect(counts.1.value == 1)
        withExtendedLifetime(tokens) {}
    }

    /// Three threads: one sets, one drains all the while, one creates and ends tokens on the
    /// property (each on a queue of its own, released with it), so marks are made, go stale and
    /// are cleared under every interleaving. The token that lives throughout hears the last set,
    /// and every churned token that saw a set while alive was delivered it exactly once or not
    /// at all. Run under the thread sanitizer in CI.
    @Test(.timeLimit(.minutes(1)))
    func setsRacingDrainsAndTokenChurnNeverLoseTheLastSet() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let setsBegun = Atomic<Int>(0)
        let lastSeen = Atomic<Int>(0)
        let token = person.observe(\.age, queue: queue) { _ in
            lastSeen.store(setsBegun.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        }
        let total = 20_000
        let churned = 2_000
        let churnDeliveries = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let finished = RelThreads.run(count: 3, timeout: 50) { thread in
            switch thread {
            case 0:
                for age in 1...total {
                    setsBegun.store(age, ordering: .sequentiallyConsistent)
                    person.age = age
                }
                done.add(1, ordering: .sequentiallyConsistent)
            case 1:
                for _ in 0..<churned {
                    let own = CoalescingQueue(target: .manual)
                    let churn = person.observe(\.age, queue: own) { _ in
                        churnDeliveries.add(1, ordering: .relaxed)
                    }
                    let delivered = own.drain()
                    #expect(delivered <= 1)
                    churn.invalidate()
                }
                done.add(1, ordering: .sequentiallyConsistent)
            default:
                while done.load(ordering: .sequentiallyConsistent) < 2 { _ = queue.drain() }
            }
        }
        #expect(finished)
        _ = queue.drain()
        #expect(lastSeen.load(ordering: .sequentiallyConsistent) == total)
        #expect(churnDeliveries.load(ordering: .relaxed) <= churned)
        withExtendedLifetime(token) {}
    }

    /// Two setters, each on its own object, with one drainer: the skip of one object's further
    /// sets never loses the other's, and each token hears its object's last set.
    @Test(.timeLimit(.minutes(1)))
    func twoSettersAndADrainerEachTokenHearsItsObjectsLastSet() {
        let queue = CoalescingQueue(target: .manual)
        let people = [CorePerson(), CorePerson()]
        let begun = SetsBegun()
        let lastSeen = RelLock([0, 0])
        let tokens = (0..<2).map { index in
            people[index].observe(\.age, queue: queue) { _ in
                let value = begun.load(index)
                lastSeen.withLock { $0[index] = max($0[index], value) }
            }
        }
        let total = 20_000
        let done = Atomic<Int>(0)
        let finished = RelThreads.run(count: 3, timeout: 50) { thread in
            if thread < 2 {
                for age in 1...total {
                    begun.store(age, at: thread)
                    people[thread].age = age
                }
                done.add(1, ordering: .sequentiallyConsistent)
            } else {
                while done.load(ordering: .sequentiallyConsistent) < 2 { _ = queue.drain() }
            }
        }
        #expect(finished)
        _ = queue.drain()
        #expect(lastSeen.withLock { $0 } == [total, total])
        withExtendedLifetime(tokens) {}
    }
}

/// How many sets each of two setters had begun.
private final class SetsBegun: Sendable {
    private let first = Atomic<Int>(0)
    private let second = Atomic<Int>(0)

    func load(_ index: Int) -> Int {
        index == 0 ? first.load(ordering: .sequentiallyConsistent) : second.load(ordering: .sequentiallyConsistent)
    }

    func store(_ value: Int, at index: Int) {
        if index == 0 {
            first.store(value, ordering: .sequentiallyConsistent)
        } else {
            second.store(value, ordering: .sequentiallyConsistent)
        }
    }
}

/// A model with more properties than the mark has bits (`SettledMark.bit`), so two of them share
/// one.
///
/// `@unchecked Sendable`: see ``CorePerson``.
private final class SeventeenProperties: ObservableModel, @unchecked Sendable {
    @Observed var p0 = 0
    @Observed var p1 = 0
    @Observed var p2 = 0
    @Observed var p3 = 0
    @Observed var p4 = 0
    @Observed var p5 = 0
    @Observed var p6 = 0
    @Observed var p7 = 0
    @Observed var p8 = 0
    @Observed var p9 = 0
    @Observed var p10 = 0
    @Observed var p11 = 0
    @Observed var p12 = 0
    @Observed var p13 = 0
    @Observed var p14 = 0
    @Observed var p15 = 0
    @Observed var p16 = 0

    /// Two properties whose storages' serials are 16 apart (there are 17, so two are).
    func twoPropertiesSharingAMarkBit() -> (
        ReferenceWritableKeyPath<SeventeenProperties, Int>, ReferenceWritableKeyPath<SeventeenProperties, Int>
    )? {
        let all: [(UInt64, ReferenceWritableKeyPath<SeventeenProperties, Int>)] = [
            (_p0.serial, \.p0), (_p1.serial, \.p1), (_p2.serial, \.p2), (_p3.serial, \.p3), (_p4.serial, \.p4),
            (_p5.serial, \.p5), (_p6.serial, \.p6), (_p7.serial, \.p7), (_p8.serial, \.p8), (_p9.serial, \.p9),
            (_p10.serial, \.p10), (_p11.serial, \.p11), (_p12.serial, \.p12), (_p13.serial, \.p13),
            (_p14.serial, \.p14), (_p15.serial, \.p15), (_p16.serial, \.p16),
        ]
        for (index, first) in all.enumerated() {
            if let second = all[(index + 1)...].first(where: { SettledMark.bit($0.0) == SettledMark.bit(first.0) }) {
                return (first.1, second.1)
            }
        }
        return nil
    }
}
