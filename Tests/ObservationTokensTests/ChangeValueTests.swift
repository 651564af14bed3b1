import Testing

@testable import ObservationTokens

/// A change of an optional value, recorded as a pair that is `Equatable`.
private struct PathOptionalChange: Equatable, Sendable {
    let old: String?
    let new: String?
}

/// A change of a class value, recorded by identity.
private struct PathIdentityChange: Equatable, Sendable {
    let old: ObjectIdentifier?
    let new: ObjectIdentifier?
}

private func identity(_ object: AnyObject?) -> ObjectIdentifier? {
    object.map(ObjectIdentifier.init)
}

@Suite("Change values")
struct ChangeValueTests {
    @Test
    func oldIsTheValueBeforeTheTicksFirstChangeAndNewTheValueAtTheEnd() {
        // Given a change token on the balance
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When the balance changes three times in one tick
        account.balance = 1
        account.balance = 2
        account.balance = 3
        let delivered = queue.drain()

        // Then one callback: from the value before the first change to the last value
        #expect(delivered == 1)
        #expect(seen.values == [PropertyChange(old: 0, new: 3)])
        withExtendedLifetime(token) {}
    }

    @Test
    func propertyDidChangeFromAnOldValueReportsItAndIgnoresNonChanges() {
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // A change behind the setter, told with its old value: a real old
        account.depositBehindTheSetter(5)
        #expect(queue.drain() == 1)
        #expect(seen.values == [PropertyChange(old: 0, new: 5)])

        // Two in one tick: the old value of the tick's first change
        account.depositBehindTheSetter(1)
        account.depositBehindTheSetter(1)
        #expect(queue.drain() == 1)
        #expect(seen.values.last == PropertyChange(old: 5, new: 7))

        // An "old" value equal to the current one is no change, as for the setter
        account.propertyDidChange(\.balance, from: 7)
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test
    func theObserverVariantPassesTheObserverAndEndsWithIt() {
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        var observer: CoreObserver? = CoreObserver()
        weak let weakObserver = observer
        let token = account.observe(.changes(\.balance), observer: observer!, queue: queue) { observer, _, change in
            observer.calls.append("\(change.old) → \(change.new)")
        }
        account.balance = 1
        account.balance = 2
        #expect(queue.drain() == 1)
        #expect(observer?.calls.entries == ["0 → 2"])
        observer = nil
        #expect(weakObserver == nil)  // held weakly
        account.balance = 3
        #expect(queue.drain() == 0)
        #expect(!token.isValid)  // ended at the delivery that found it gone
    }

    @Test
    func aChainsChangeTokenReportsTheEndpointBeforeTheTicksFirstChange() {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(name: "Ada"))
        let seen = PathRecorder<PropertyChange<String?>>()
        let token = cache.observe(.changes(KeyPathChain(\PathUserCache.currentUser).then(\.name)), queue: queue) {
            _, change in
            seen.record(change)
        }
        // A new user and a rename in one tick: from the value at creation to the last
        cache.currentUser = PathUser(name: "Grace")
        cache.currentUser?.name = "Grace Hopper"
        #expect(queue.drain() == 1)
        cache.currentUser = nil
        #expect(queue.drain() == 1)
        #expect(
            seen.values == [
                PropertyChange(old: "Ada", new: "Grace Hopper"), PropertyChange(old: "Grace Hopper", new: nil),
            ])
        withExtendedLifetime(token) {}
    }

    @Test
    func aStringPathsChangeTokenReportsOldAndNewEndpoints() throws {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(name: "Ada"))
        let seen = PathRecorder<String>()
        let token = try cache.observe(.changes(path: "currentUser.name"), queue: queue) { _, change in
            seen.record("\(change.old as? String ?? "-") → \(change.new as? String ?? "-")")
        }
        cache.currentUser = PathUser(name: "Grace")
        cache.currentUser?.name = "Grace Hopper"
        #expect(queue.drain() == 1)
        cache.currentUser = nil
        #expect(queue.drain() == 1)
        #expect(seen.values == ["Ada → Grace Hopper", "Grace Hopper → -"])
        withExtendedLifetime(token) {}
    }

    @Test
    func newIsTheValueAtDeliveryEvenIfItChangedAfterTheLastSet() {
        // Given a token on the nickname that sets the balance, and a change token on the balance
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let setter = account.observe(\.nickname, queue: queue) { account in account.balance = 5 }
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When both become pending, the nickname token first, and its callback sets the balance again
        account.nickname = "savings"
        account.balance = 1
        let delivered = queue.drain()

        // Then the change token, still pending in the same drain, sees the value at its delivery
        #expect(delivered == 2)
        #expect(seen.values == [PropertyChange(old: 0, new: 5)])
        withExtendedLifetime((setter, token)) {}
    }

    @Test
    func consecutiveTicksEachReportTheirOwnOldValue() {
        // Given a change token
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When the balance changes in three ticks
        account.balance = 10
        queue.drain()
        account.balance = 20
        account.balance = 30
        queue.drain()
        account.balance = 40
        queue.drain()

        // Then each tick starts from where the previous one ended
        #expect(
            seen.values == [
                PropertyChange(old: 0, new: 10), PropertyChange(old: 10, new: 30), PropertyChange(old: 30, new: 40),
            ])
        withExtendedLifetime(token) {}
    }

    @Test
    func returningToTheOriginalValueInOneTickFiresOnceWithOldEqualToNew() {
        // Given a change token
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        account.balance = 7
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When the balance changes and changes back within one tick
        account.balance = 8
        account.balance = 7
        let delivered = queue.drain()

        // Then it still fires once, and old == new
        #expect(delivered == 1)
        #expect(seen.values == [PropertyChange(old: 7, new: 7)])
        withExtendedLifetime(token) {}
    }

    @Test
    func initialReportsOldEqualToNew() {
        // Given an account with a balance
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        account.balance = 42
        let seen = PathRecorder<PropertyChange<Int>>()

        // When observing changes with `.initial`
        let token = account.observe(.changes(\.balance), options: .initial, queue: queue) { _, change in
            seen.record(change)
        }

        // Then the initial callback ran at once with old == new
        #expect(seen.values == [PropertyChange(old: 42, new: 42)])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test
    func fireReportsOldEqualToNew() {
        // Given a change token and no change
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        account.balance = 42
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When it is fired by hand
        #expect(token.fire())

        // Then old == new
        #expect(seen.values == [PropertyChange(old: 42, new: 42)])
    }

    @Test
    func scheduleReportsOldEqualToNew() {
        // Given a change token and no change
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        account.balance = 42
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }

        // When a delivery is scheduled and the tick ends
        token.schedule()
        #expect(queue.drain() == 1)

        // Then old == new
        #expect(seen.values == [PropertyChange(old: 42, new: 42)])
    }

    @Test
    func fireWhileAChangeIsPendingReportsOldEqualToNewAndLeavesThePendingChangeAlone() {
        // Given a change pending
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }
        account.balance = 1

        // When the token is fired by hand, then the tick ends
        token.fire()
        queue.drain()

        // Then fire saw old == new, and the pending delivery still reports the tick's change
        #expect(seen.values == [PropertyChange(old: 1, new: 1), PropertyChange(old: 0, new: 1)])
    }

    @Test
    func scheduleThenARealChangeInOneTickReportsTheValueBeforeTheChange() {
        // Given a delivery scheduled without a change
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), queue: queue) { _, change in seen.record(change) }
        token.schedule()

        // When the balance really changes in the same tick
        account.balance = 1
        let delivered = queue.drain()

        // Then one callback, whose old value is the value before the tick's first change
        #expect(delivered == 1)
        #expect(seen.values == [PropertyChange(old: 0, new: 1)])
    }

    @Test
    func immediateReportsEverySetAsItsOwnChange() {
        // Given an immediate change token
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PropertyChange<Int>>()
        let token = account.observe(.changes(\.balance), options: .immediate, queue: queue) { _, change in
            seen.record(change)
        }

        // When the balance changes twice
        account.balance = 1
        account.balance = 2

        // Then each set was reported inside the setter, from the previous value
        #expect(seen.values == [PropertyChange(old: 0, new: 1), PropertyChange(old: 1, new: 2)])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    // MARK: Optional values

    @Test
    func optionalValuesReportNilAsOldOrNew() {
        // Given a change token on an optional that is nil
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PathOptionalChange>()
        let token = account.observe(.changes(\.nickname), queue: queue) { _, change in
            seen.record(PathOptionalChange(old: change.old, new: change.new))
        }

        // When it becomes non-nil, then nil again, in two ticks
        account.nickname = "savings"
        queue.drain()
        account.nickname = nil
        queue.drain()

        // Then nil is reported as the old, then the new value
        #expect(
            seen.values == [
                PathOptionalChange(old: nil, new: "savings"), PathOptionalChange(old: "savings", new: nil),
            ])
        withExtendedLifetime(token) {}
    }

    @Test
    func optionalThatReturnsToNilInOneTickFiresOnceWithOldEqualToNew() {
        // Given a change token on an optional that is nil
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PathOptionalChange>()
        let token = account.observe(.changes(\.nickname), queue: queue) { _, change in
            seen.record(PathOptionalChange(old: change.old, new: change.new))
        }

        // When it is set and cleared in one tick
        account.nickname = "savings"
        account.nickname = nil
        let delivered = queue.drain()

        // Then one callback with nil on both sides
        #expect(delivered == 1)
        #expect(seen.values == [PathOptionalChange(old: nil, new: nil)])
        withExtendedLifetime(token) {}
    }

    @Test
    func immediateOptionalChangesReportNilOldValues() {
        // Given an immediate change token on an optional that is nil
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let seen = PathRecorder<PathOptionalChange>()
        let token = account.observe(.changes(\.nickname), options: .immediate, queue: queue) { _, change in
            seen.record(PathOptionalChange(old: change.old, new: change.new))
        }

        // When it is set, then cleared
        account.nickname = "savings"
        account.nickname = nil

        // Then both sets report the value they replaced, nil included
        #expect(
            seen.values == [
                PathOptionalChange(old: nil, new: "savings"), PathOptionalChange(old: "savings", new: nil),
            ])
        withExtendedLifetime(token) {}
    }

    // MARK: Class values

    @Test
    func classValuesReportTheOldAndNewInstances() {
        // Given a change token on a class-typed property
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let first = account.owner
        let second = PathPerson(name: "second")
        let third = PathPerson(name: "third")
        let seen = PathRecorder<PathIdentityChange>()
        let token = account.observe(.changes(\.owner), queue: queue) { _, change in
            seen.record(PathIdentityChange(old: identity(change.old), new: identity(change.new)))
        }

        // When the owner is replaced twice in one tick
        account.owner = second
        account.owner = third
        queue.drain()

        // Then old is the first instance and new the last one
        #expect(seen.values == [PathIdentityChange(old: identity(first), new: identity(third))])
        withExtendedLifetime((token, second)) {}
    }

    @Test
    func classValueThatReturnsToTheSameInstanceFiresOnceWithOldIdenticalToNew() {
        // Given a change token on a class-typed property
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let first = account.owner
        let seen = PathRecorder<PathIdentityChange>()
        let token = account.observe(.changes(\.owner), queue: queue) { _, change in
            seen.record(PathIdentityChange(old: identity(change.old), new: identity(change.new)))
        }

        // When another instance replaces it and the first one comes back in one tick
        account.owner = PathPerson(name: "other")
        account.owner = first
        let delivered = queue.drain()

        // Then it fires once, with the same instance on both sides
        #expect(delivered == 1)
        #expect(seen.values == [PathIdentityChange(old: identity(first), new: identity(first))])
        withExtendedLifetime(token) {}
    }

    @Test
    func optionalClassValuesReportNilAndInstances() {
        // Given a change token on an optional class-typed property that is nil
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        let person = PathPerson(name: "co-owner")
        let seen = PathRecorder<PathIdentityChange>()
        let token = account.observe(.changes(\.coOwner), queue: queue) { _, change in
            seen.record(PathIdentityChange(old: identity(change.old), new: identity(change.new)))
        }

        // When it is set, then cleared, in two ticks
        account.coOwner = person
        queue.drain()
        account.coOwner = nil
        queue.drain()

        // Then nil and the instance are reported on the right sides
        #expect(
            seen.values == [
                PathIdentityChange(old: nil, new: identity(person)),
                PathIdentityChange(old: identity(person), new: nil),
            ])
        withExtendedLifetime(token) {}
    }

    @Test
    func changeTokenDoesNotKeepTheOldValueAliveAfterDelivery() {
        // Given a change token on a class-typed property whose old instance nobody else holds
        let queue = CoalescingQueue(target: .manual)
        let account = PathAccount()
        weak var weakFirst: PathPerson?
        do {
            let first = PathPerson(name: "first")
            account.owner = first
            weakFirst = first
        }
        let token = account.observe(.changes(\.owner), queue: queue) { _, _ in }

        // When it is replaced and the change is delivered
        account.owner = PathPerson(name: "second")
        queue.drain()

        // Then the old instance is released
        #expect(weakFirst == nil)
        withExtendedLifetime(token) {}
    }
}
