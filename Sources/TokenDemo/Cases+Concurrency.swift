import Dispatch
import ObservationTokens

// Swift concurrency: `for await` over a property's values, and callbacks isolated to the main
// actor. Both drive a manual queue by hand, so every tick is visible.

extension DemoCase {
    static let concurrencyCases: [DemoCase] = [forAwaitValues, mainActorCallback]

    static let forAwaitValues = DemoCase(
        "for-await-values",
        group: .concurrency,
        summary: "`for await` over a property: one element per tick, the latest value.",
        shows: """
            `values(of:)` is an async sequence: it starts with the current value, then yields once per \
            tick with the value at the end of the tick. Leaving the loop ends its observation.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let counter = Counter()
        let seen = Recorder<Int>()
        let took = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        let values = counter.values(of: \.count, queue: queue)
        timeline.step("let values = counter.values(of: \\.count)")
        Task.detached {
            for await count in values {
                seen.append(count)
                timeline.callback("for await: count is \(count)")
                took.signal()
                if count == 3 { break }
            }
            finished.signal()
        }
        timeline.step("Task { for await count in values { … if count == 3 { break } } }")
        took.wait()

        counter.count = 1
        timeline.step("counter.count = 1")
        _ = timeline.endTick(draining: queue)
        took.wait()

        counter.count = 2
        counter.count = 3
        timeline.step("counter.count = 2, then 3  — in the same tick")
        _ = timeline.endTick(draining: queue)
        took.wait()
        finished.wait()
        timeline.note("the loop broke: its iterator is gone, and with it the token")

        timeline.expect("the loop saw the current value, then one value per tick", seen.values, equals: [0, 1, 3])
        timeline.expect("leaving the loop ended the observation", counter.observerCount(of: \.count), equals: 0)
    }

    static let mainActorCallback = DemoCase(
        "main-actor-callback",
        group: .concurrency,
        summary: "A callback isolated to the main actor updates a `@MainActor` view model.",
        shows: """
            with `isolation: MainActor.shared` the callback is main-actor code: it sets a `@MainActor` \
            view model's properties with no `MainActor.assumeIsolated`. A drain on the main actor runs \
            it synchronously.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let counter = Counter()
        let label = CountLabel()

        let token = counter.observe(\.count, observer: label, queue: queue, isolation: MainActor.shared) {
            label, counter in
            label.text = "count: \(counter.count)"
            timeline.callback("callback on the main actor: label.text = \(quoted(label.text))")
        }
        timeline.step(
            "counter.observe(\\.count, observer: label, isolation: MainActor.shared) { label, counter in label.text = … }"
        )

        counter.count = 7
        timeline.step("counter.count = 7")
        let delivered = timeline.endTick(draining: queue)

        timeline.expect("one callback", delivered, equals: 1)
        timeline.expect("it updated the main-actor view model", label.text, equals: "count: 7")
        withExtendedLifetime(token) {}
    }
}

/// A main-actor view model: what most apps observe models for.
@MainActor final class CountLabel {
    var text = ""
}
