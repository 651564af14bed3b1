import Testing

@testable import ObservationTokens

/// A subclass with a property of its own, for `observeAll`.
final class CoreEmployee: ObservableModel, @unchecked Sendable {
    @Observed var firstName = ""
    @Observed var salary = 0
}

final class CoreManager: ObservableModel, @unchecked Sendable {
    @Observed var name = ""
}

final class CoreSeniorManager: ObservableModelSubclassProbe, @unchecked Sendable {
    @Observed var reports = 0
}

/// A non-final model to subclass.
class ObservableModelSubclassProbe: ObservableModel, @unchecked Sendable {
    @Observed var title = ""
}

/// Issue 17: a token on several properties tells which of them changed; `observeAll` is `*`
/// for typed code.
@Suite("Which properties changed; observeAll")
struct WhichChangedTests {
    /// The names of the changed properties, through `contains` (and `keyPaths`' order).
    static func names(_ changed: ChangedProperties<CorePerson>) -> [String] {
        let all: [(PartialKeyPath<CorePerson>, String)] = [
            (\.firstName, "firstName"), (\.lastName, "lastName"), (\.age, "age"),
        ]
        let named = all.filter { changed.contains($0.0) }.map(\.1)
        precondition(changed.keyPaths.count == named.count && changed.count == named.count)
        return named
    }

    @Test func theCallbackLearnsWhichPropertiesChangedThisTick() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<[String]>()
        let token = person.observe(.whichOf([\.firstName, \.lastName, \.age]), queue: queue) { _, changed in
            seen.append(Self.names(changed))
        }

        // Two of three, several times, in one tick: one callback naming the two
        person.firstName = "A"
        person.age = 1
        person.firstName = "Ada"
        #expect(queue.drain() == 1)
        #expect(seen.entries == [["firstName", "age"]])

        // Next tick: only what changed since
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)
        #expect(seen.entries.last == ["lastName"])

        // A property not listed tells nothing; an unchanged value tells nothing
        person.address = CoreAddress()
        person.age = 1
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func initialAndFireReportNoChangeAndImmediateReportsEachProperty() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<[String]>()
        let token = person.observe(.whichOf([\.firstName, \.lastName]), options: .initial, queue: queue) { _, changed in
            seen.append(Self.names(changed))
        }
        #expect(seen.entries == [[]])
        token.fire()
        #expect(seen.entries == [[], []])

        let immediate = CoreRecorder<[String]>()
        let now = person.observe(.whichOf([\.firstName, \.lastName]), options: .immediate, queue: queue) { _, changed in
            immediate.append(Self.names(changed))
        }
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(immediate.entries == [["firstName"], ["lastName"]])
        withExtendedLifetime((token, now)) {}
    }

    /// `fire()` runs the callback with no change, and the changes of the tick stay for its
    /// delivery (it used to take them).
    @Test func fireGetsAnEmptySetAndLeavesTheTicksChangesForItsDelivery() {
        // Given a change pending in this tick
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let seen = CoreRecorder<[String]>()
        let token = person.observe(.whichOf([\.firstName, \.lastName]), queue: queue) { _, changed in
            seen.append(Self.names(changed))
        }
        person.lastName = "Lovelace"

        // When the token is fired, then the tick ends
        #expect(token.fire())
        #expect(queue.drain() == 1)

        // Then the fire saw no change, and the delivery saw the change
        #expect(seen.entries == [[], ["lastName"]])
    }

    @Test func droppingTheTokenEndsEveryPartOfIt() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let calls = CoreCounter()
        var token: ObservationToken? = person.observe(.whichOf([\.firstName, \.lastName]), queue: queue) { _, _ in
            calls.increment()
        }
        #expect(person.observerCount(of: \.firstName) == 1)
        token = nil
        #expect(person.observerCount(of: \.firstName) == 0)
        #expect(person.observerCount(of: \.lastName) == 0)
        person.firstName = "Ada"
        #expect(queue.drain() == 0)
        #expect(calls.value == 0)
        _ = token
    }

    @Test func theObserverFormEndsWhenTheObserverIsGone() {
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        var observer: CoreObserver? = CoreObserver()
        let token = person.observe(.whichOf([\.firstName, \.age]), observer: observer!, queue: queue) {
            observer, _, changed in
            observer.calls.append(Self.names(changed).joined(separator: ","))
        }
        person.age = 3
        queue.drain()
        #expect(observer?.calls.entries == ["age"])
        observer = nil
        person.age = 4
        queue.drain()
        #expect(!token.isValid)
        #expect(person.observerCount(of: \.age) == 0)
    }

    #if DEBUG
        /// It used to say the key path "reads no @Observed property".
        @Test func aComposedKeyPathStopsADebugBuildSayingWhatItReads() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = CorePerson()
                person.address = CoreAddress()
                _ = person.observe(.whichOf([\.firstName, \.address?.zip]), queue: CoalescingQueue(target: .manual)) {
                    _, _ in
                }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("observe(.whichOf(…)) at ObservationTokensTests/WhichChangedTests.swift:"))
            #expect(message.contains("\\CorePerson.address?.zip is not one @Observed property of CorePerson"))
            #expect(message.contains("it reads CorePerson.address, CoreAddress.zip"))
        }
    #endif

    @Test func anEmptyListStopsADebugBuild() async {
        #if DEBUG
            await #expect(processExitsWith: .failure) {
                let token = CorePerson().observe(.whichOf([]), queue: CoalescingQueue(target: .manual)) { _, _ in }
                _ = token
            }
        #else
            let token = CorePerson().observe(.whichOf([]), queue: CoalescingQueue(target: .manual)) { _, _ in }
            #expect(!token.isValid)
        #endif
    }

    @Test func observeAllFiresOnAnyObservedPropertyIncludingInheritedOnes() {
        let queue = CoalescingQueue(target: .manual)
        let manager = CoreSeniorManager()
        let calls = CoreCounter()
        let token = manager.observe(.all, queue: queue) { _ in calls.increment() }
        manager.title = "VP"
        manager.reports = 3
        #expect(queue.drain() == 1)
        manager.reports = 4
        #expect(queue.drain() == 1)
        #expect(calls.value == 2)
        #expect(manager.observedProperties == ["*"])
        withExtendedLifetime(token) {}
    }
}
