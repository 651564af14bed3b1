import Synchronization
import Testing

@testable import ObservationTokens

/// A further set in a tick whose tokens are all pending already does nothing, however many
/// they are (issue 16): a property with many members remembers that a set left them all
/// pending (`RegistryState.PropertyObservers.settled`) until their queue starts a drain. These
/// tests pin what that must not change.
@Suite struct RepeatedSetTests {
    /// More than `Registry.settlingThreshold`, so the stamp is used.
    static let many = Registry.settlingThreshold + 4

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
}
