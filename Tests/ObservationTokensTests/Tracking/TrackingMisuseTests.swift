import Testing

@testable import ObservationTokens

/// Issue 9 item 8: what would silently observe nothing is a clear error. Throwing entry points
/// throw a `KeyPathError`; the others trap in debug builds with a message naming the key path
/// and the fix, and return an ended token in release builds.
@Suite struct TrackingMisuseTests {
    // MARK: Throwing entry points (every build)

    @Test func checkingVariantThrowsForAKeyPathThatReadsNoObservedProperty() {
        let person = TrackPerson()
        #expect(throws: KeyPathError.noObservedProperty(keyPath: "\(\TrackPerson.nickname)", type: "TrackPerson")) {
            try person.observe(checking: \.nickname) { _ in }
        }
        #expect(throws: KeyPathError.noObservedProperty(keyPath: "\(\TrackPerson.plainLabel)", type: "TrackPerson")) {
            try person.observe(checking: \.plainLabel) { _ in }
        }
        #expect(throws: KeyPathError.self) { try person.observe(checking: \.id) { _ in } }
        #expect(person.observedProperties.isEmpty)
    }

    @Test func checkingVariantObservesWhatReadsAnObservedProperty() throws {
        let queue = CoalescingQueue(target: .manual)
        let person = TrackPerson()
        let calls = CoreCounter()
        let plain = try person.observe(checking: \.firstName, queue: queue) { _ in calls.increment() }
        let computed = try person.observe(checking: \.fullName, queue: queue) { _ in calls.increment() }
        person.lastName = "L"
        person.firstName = "F"
        #expect(queue.drain() == 2)
        #expect(calls.value == 2)
        withExtendedLifetime((plain, computed)) {}
    }

    @Test func errorMessagesNameTheKeyPathAndTheFix() {
        let error = KeyPathError.noObservedProperty(keyPath: "\\TrackPerson.nickname", type: "TrackPerson")
        #expect(
            error.description
                == "\\TrackPerson.nickname reads no @Observed property of TrackPerson: mark the property @Observed")
        #expect(KeyPathError.emptyPathList.description.contains("empty list"))
    }

    @Test func emptyListOfStringPathsThrows() {
        let person = TrackPerson()
        #expect(throws: KeyPathError.emptyPathList) { try person.observe(.paths([])) { _ in } }
    }

    // MARK: Release builds: an ended token

    #if !DEBUG
        @Test func releaseBuildsReturnEndedTokens() {
            let queue = CoalescingQueue(target: .manual)
            let person = TrackPerson()
            let root = TrackNode()
            root.next = TrackNode()
            let calls = CoreCounter()
            let tokens = [
                person.observe(\.nickname, options: .initial, queue: queue) { _ in calls.increment() },
                person.observe(\.plainLabel, options: .initial, queue: queue) { _ in calls.increment() },
                person.observe(queue: queue) { _ in calls.increment() },
                person.observe(.properties([] as [PartialKeyPath<TrackPerson>]), options: .initial, queue: queue) { _ in
                    calls.increment()
                },
                root.observe(
                    .chain(KeyPathChain(\TrackNode.next).then(\.constant).then(\.value)), options: .initial,
                    queue: queue
                ) {
                    _, _ in calls.increment()
                },
                root.observe(.chains([AnyKeyPathChain<TrackNode>]()), options: .initial, queue: queue) { _ in
                    calls.increment()
                },
            ]
            // The closure token ran its body once (that is how it found it reads nothing).
            #expect(calls.value == 1)
            for token in tokens { #expect(!token.isValid) }
            person.nickname = "x"
            root.next = TrackNode()
            #expect(queue.drain() == 0)
            #expect(person.observedProperties.isEmpty)
            #expect(root.observedProperties.isEmpty)
        }
    #endif

    // MARK: Debug builds: a trap naming the key path and the fix

    #if DEBUG
        @Test func plainPropertyKeyPathTraps() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = TrackPerson()
                _ = person.observe(\.nickname, queue: CoalescingQueue(target: .manual)) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("TrackPerson.nickname reads no @Observed property of TrackPerson"))
            #expect(message.contains("Mark the property @Observed"))
        }

        @Test func constantKeyPathTraps() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = TrackPerson()
                _ = person.observe(\.id, queue: CoalescingQueue(target: .manual)) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("TrackPerson.id reads no @Observed property"))
        }

        @Test func computedPropertyOverPlainPropertiesTraps() async {
            await #expect(processExitsWith: .failure) {
                let person = TrackPerson()
                _ = person.observe(.changes(\.plainLabel), queue: CoalescingQueue(target: .manual)) { _, _ in }
            }
        }

        @Test func closureThatReadsNothingObservedTraps() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = TrackPerson()
                _ = person.observe(queue: CoalescingQueue(target: .manual)) { person in _ = person.nickname }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("reads no @Observed property"))
            #expect(message.contains("TrackingMisuseTests.swift"))
        }

        @Test func emptyKeyPathListTraps() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = TrackPerson()
                _ = person.observe(.properties([]), queue: CoalescingQueue(target: .manual)) { _ in
                }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("empty list"))
            #expect(message.contains("Pass at least one key path"))
        }

        @Test func emptyChainListTraps() async {
            await #expect(processExitsWith: .failure) {
                let root = TrackNode()
                _ = root.observe(.chains([AnyKeyPathChain<TrackNode>]()), queue: CoalescingQueue(target: .manual)) {
                    _ in
                }
            }
        }

        @Test func chainWithANonObservedSegmentTraps() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let root = TrackNode()
                root.next = TrackNode()
                let chain = KeyPathChain(\TrackNode.next).then(\.constant).then(\.value)
                _ = root.observe(.chain(chain), queue: CoalescingQueue(target: .manual)) { _, _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("segment 2 of the key path chain"))
            #expect(message.contains("TrackNode.constant"))
            #expect(message.contains("Mark that property @Observed"))
        }
    #endif
}
