import Testing

@testable import ObservationTokens

/// Issue 2, §2: a set to a value equal to the current one fires nothing — `===` for class
/// references (also optional ones), `==` for `Equatable` values; other types always fire.
@Suite struct EqualityRuleTests {
    @Test func settingAnEqualEquatableValueFiresNothing() {
        // Given tokens (coalesced and immediate) on properties with values
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        values.count = 7
        values.name = "Ada"
        let immediateCalls = CoreCounter()
        let token = values.observe([\.count, \.name], queue: queue) { _ in }
        let immediate = values.observe([\.count, \.name], options: .immediate, queue: queue) { _ in
            immediateCalls.increment()
        }

        // When each is set to an equal value
        values.count = 7
        values.name = "Ada"

        // Then nothing fires
        #expect(queue.pendingCount == 0)
        #expect(queue.drain() == 0)
        #expect(immediateCalls.value == 0)

        // While a different value does fire
        values.count = 8
        #expect(immediateCalls.value == 1)
        #expect(queue.drain() == 1)
        withExtendedLifetime((token, immediate)) {}
    }

    @Test func equatableValuesAreComparedWithTheirOwnEquality() {
        // Given a value whose == looks only at its id
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        values.tagged = CoreTagged(id: 1, note: "first")
        let token = values.observe(\.tagged, queue: queue) { _ in }

        // When it is replaced by a value with the same id but another note
        values.tagged = CoreTagged(id: 1, note: "second")

        // Then that counts as equal: nothing fires (the value is stored all the same)
        #expect(queue.drain() == 0)
        #expect(values.tagged.note == "second")

        // And a different id fires
        values.tagged = CoreTagged(id: 2, note: "second")
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func optionalEquatableValuesCompareByEquality() {
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let token = values.observe(\.optionalCount, queue: queue) { _ in }

        values.optionalCount = nil
        #expect(queue.drain() == 0)

        values.optionalCount = 3
        #expect(queue.drain() == 1)

        values.optionalCount = 3
        #expect(queue.drain() == 0)

        values.optionalCount = nil
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func sameClassInstanceFiresNothingEvenIfItsEqualitySaysOtherwise() {
        // Given a property holding an instance whose == always returns false
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let instance = CoreNeverEqual()
        values.neverEqual = instance
        let calls = CoreCounter()
        let token = values.observe(\.neverEqual, queue: queue) { _ in }
        let immediate = values.observe(\.neverEqual, options: .immediate, queue: queue) { _ in calls.increment() }

        // When the same instance is set again
        values.neverEqual = instance

        // Then nothing fires: identity decides
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
        withExtendedLifetime((token, immediate)) {}
    }

    @Test func distinctClassInstancesFireEvenIfTheyCompareEqual() {
        // Given a property holding an instance whose == always returns true
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let calls = CoreCounter()
        let token = values.observe(\.alwaysEqual, queue: queue) { _ in }
        let immediate = values.observe(\.alwaysEqual, options: .immediate, queue: queue) { _ in calls.increment() }

        // When a distinct but "equal" instance is set
        values.alwaysEqual = CoreAlwaysEqual()

        // Then it fires: identity decides
        #expect(calls.value == 1)
        #expect(queue.drain() == 1)
        withExtendedLifetime((token, immediate)) {}
    }

    @Test func optionalClassReferenceComparesByIdentity() {
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let never = CoreNeverEqual()
        let token = values.observe([\.optionalNeverEqual, \.optionalAlwaysEqual], queue: queue) { _ in }

        // nil → nil: no change
        values.optionalNeverEqual = nil
        #expect(queue.drain() == 0)

        // nil → instance: change
        values.optionalNeverEqual = never
        #expect(queue.drain() == 1)

        // same instance again, although its == says "different": no change
        values.optionalNeverEqual = never
        #expect(queue.drain() == 0)

        // instance → nil: change
        values.optionalNeverEqual = nil
        #expect(queue.drain() == 1)

        // a distinct instance whose == says "equal": change
        values.optionalAlwaysEqual = CoreAlwaysEqual()
        #expect(queue.drain() == 1)
        values.optionalAlwaysEqual = CoreAlwaysEqual()
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func optionalModelReferenceComparesByIdentity() {
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let address = CoreAddress()
        let token = values.observe(\.address, queue: queue) { _ in }

        values.address = address
        #expect(queue.drain() == 1)

        values.address = address
        #expect(queue.drain() == 0)

        values.address = CoreAddress()
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func nonEquatableValueAlwaysFires() {
        // Given a property of a type that is not Equatable
        let queue = CoalescingQueue(target: .manual)
        let values = CoreValues()
        let calls = CoreCounter()
        let token = values.observe(\.point, queue: queue) { _ in }
        let immediate = values.observe(\.point, options: .immediate, queue: queue) { _ in calls.increment() }

        // When it is set to an identical value, twice
        values.point = CorePoint(x: 0, y: 0)
        values.point = CorePoint(x: 0, y: 0)

        // Then every set counted as a change (coalesced to one delivery per tick)
        #expect(calls.value == 2)
        #expect(queue.drain() == 1)
        values.point = CorePoint(x: 0, y: 0)
        #expect(queue.drain() == 1)
        withExtendedLifetime((token, immediate)) {}
    }
}
