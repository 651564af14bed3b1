import ObservationTokens
import Synchronization

// Synthetic properties: a cached value computed from other properties, invalidated when they change.

/// The queue the demo's token delivers through: the demo drains it as the end of a tick.
private let frameQueue = CoalescingQueue(target: .manual)

/// How many times each computed property of the demo ran.
private let frameComputations = Mutex<[String: Int]>([:])

private func computed(_ name: String) -> Int { frameComputations.withLock { $0[name, default: 0] } }

/// A frame whose `area` is computed from `width` and `height`, and `label` from `area`.
private final class Frame: ObservableModel {
    @Observed var width = 2
    @Observed var height = 3
    @Computed(
        { (frame: Frame) in
            frameComputations.withLock { $0["area", default: 0] += 1 }
            return frame.width * frame.height
        })
    var area: Int
    @Computed(
        { (frame: Frame) in
            frameComputations.withLock { $0["label", default: 0] += 1 }
            return "area \(frame.area)"
        })
    var label: String
}

extension DemoCase {
    static let syntheticCases: [DemoCase] = [computedProperty]

    static let computedProperty = DemoCase(
        "computed-property",
        group: .synthetic,
        summary: "A @Computed property: cached, invalidated by its inputs, compared once per tick when observed.",
        shows: """
            The compute closure sits at the declaration; what it reads are its dependencies. A change \
            marks the value (and computed values that read it) invalid without computing; a read \
            recomputes. Observed, it is recomputed once when its tokens are delivered, and they run only \
            when it differs from what they saw.
            """
    ) { timeline in
        let frame = Frame()
        timeline.note("frame.label = \(quoted(frame.label))")
        timeline.expect(
            "one read computed label and area once each", [computed("label"), computed("area")], equals: [1, 1])
        _ = frame.label
        timeline.expect("a second read uses the cache", computed("label"), equals: 1)

        frame.width = 5
        timeline.step("frame.width = 5")
        timeline.expect(
            "the change invalidated area and label, computing nothing", frame.invalidSyntheticPropertyNames.sorted(),
            equals: ["area", "label"])
        timeline.expect("reading recomputes", frame.label, equals: "area 15")

        let heard = Mutex<[String]>([])
        let token = frame.observe(\.label, queue: frameQueue) { frame in
            let label = frame.label
            heard.withLock { $0.append(label) }
        }
        timeline.step(#"let token = frame.observe(\.label) { ... }"#)
        frame.width = 3
        frame.height = 5
        timeline.step("frame.width = 3; frame.height = 5  — the same area")
        timeline.endTick(draining: frameQueue)
        timeline.expect("recomputed once, at the delivery", computed("area"), equals: 3)
        timeline.expect("an unchanged value notifies no one", heard.withLock { $0 }, equals: [])
        frame.height = 6
        timeline.step("frame.height = 6")
        timeline.endTick(draining: frameQueue)
        timeline.expect("a real change is heard", heard.withLock { $0 }, equals: ["area 18"])
        withExtendedLifetime(token) {}
    }
}
