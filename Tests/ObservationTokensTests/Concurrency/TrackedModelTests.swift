import Observation
import Testing

@testable import ObservationTokens

final class TrackedProfile: TrackedModel {
    @Observed var name = ""
    @Observed var age = 0
    @Observed var friend: TrackedProfile?
}

/// Issue 14 §3: opt-in Observation interop, tested with `withObservationTracking`.
@Suite struct TrackedModelTests {
    @Test func withObservationTrackingSeesAChangeOfAPropertyItRead() {
        // Given a tracking scope that read `name`
        let profile = TrackedProfile()
        let changes = Counter()
        let read = withObservationTracking {
            profile.name
        } onChange: {
            changes.increment()
        }
        #expect(read == "")

        // When `name` changes (twice: tracking fires once per scope)
        profile.name = "Ada"
        profile.name = "Grace"

        // Then the scope's onChange ran once
        #expect(changes.value == 1)
    }

    @Test func aPropertyThatWasNotReadDoesNotFire() {
        let profile = TrackedProfile()
        let changes = Counter()
        withObservationTracking {
            _ = profile.name
        } onChange: {
            changes.increment()
        }
        profile.age = 3
        #expect(changes.value == 0)
        profile.name = "x"
        #expect(changes.value == 1)
    }

    @Test func settingTheSameValueDoesNotFire() {
        let profile = TrackedProfile()
        profile.name = "same"
        let changes = Counter()
        withObservationTracking {
            _ = profile.name
        } onChange: {
            changes.increment()
        }
        profile.name = "same"
        #expect(changes.value == 0)
    }

    @Test func nestedModelsAreTrackedThroughTheirOwnProperties() {
        let profile = TrackedProfile()
        let friend = TrackedProfile()
        profile.friend = friend
        let changes = Counter()
        withObservationTracking {
            _ = profile.friend?.name
        } onChange: {
            changes.increment()
        }
        friend.name = "Bo"
        #expect(changes.value == 1)
    }

    @Test func tokensStillWorkOnATrackedModel() {
        let queue = CoalescingQueue(target: .manual)
        let profile = TrackedProfile()
        let calls = Counter()
        let token = profile.observe(\.age, queue: queue) { _ in calls.increment() }
        profile.age = 1
        profile.age = 2
        #expect(queue.drain() == 1)
        #expect(calls.value == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aPlainModelIsNotTrackedAndHasNoBridges() {
        // Given a plain model read inside a tracking scope
        let person = ConcPerson()
        let changes = Counter()
        withObservationTracking {
            _ = person.name
        } onChange: {
            changes.increment()
        }

        // Then nothing reports to Observation, and the model is unobserved
        person.name = "x"
        #expect(changes.value == 0)
        #expect(person.observerCount(of: \.name) == 0)
    }

    @Test func aTrackedModelIsReleasedWithItsBridges() {
        weak var weakProfile: TrackedProfile?
        do {
            let profile = TrackedProfile()
            weakProfile = profile
            profile.name = "x"
        }
        #expect(weakProfile == nil)
    }
}

/// A main-actor tracked model: `Sendable`, so `Observations` can capture it.
@MainActor final class TrackedScore: TrackedModel {
    @Observed var points = 0

    nonisolated override init() {
        super.init()
    }
}

extension TrackedModelTests {
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    @MainActor @Test func observationsSeesATrackedModel() async {
        // Given Observation's async sequence over a tracked property
        let score = TrackedScore()
        score.points = 1
        let points = Observations { score.points }
        var iterator = points.makeAsyncIterator()
        #expect(await iterator.next() == 1)

        // When the property changes, then the sequence yields the new value
        score.points = 2
        #expect(await iterator.next() == 2)
    }
}
