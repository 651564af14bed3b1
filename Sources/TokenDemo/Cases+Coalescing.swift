import Dispatch
import Foundation
import ObservationTokens

// When callbacks run. Sets only mark tokens pending; the coalescing queue delivers each pending
// token once at the end of the tick. All cases but the last drive a manual queue by hand.

extension DemoCase {
    static let coalescingCases: [DemoCase] = [
        thousandSets, callbackSetsProperty, immediateVersusCoalesced, mainThreadDelivery,
    ]

    static let thousandSets = DemoCase(
        "thousand-sets",
        group: .coalescing,
        summary: "1,000 sets in one tick make one callback.",
        shows: """
            a token fires at most once per tick, however often its property changed. \
            `.changes(\\.count)` reports the value before the tick's first change and the value now.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let counter = Counter()
        let changes = Recorder<String>()

        let token = counter.observe(.changes(\.count), queue: queue) { _, change in
            changes.append("\(change.old) → \(change.new)")
            timeline.callback("callback: count changed from \(change.old) to \(change.new)")
        }
        timeline.step(#"let token = counter.observe(.changes(\.count)) { counter, change in … }"#)

        for value in 1...1_000 { counter.count = value }
        timeline.step("counter.count = 1, then 2, 3, … 1000  — 1,000 sets in the same tick")
        timeline.note("queue.pendingCount = \(queue.pendingCount): the first set queued the token, 999 found it queued")
        let pending = queue.pendingCount
        let delivered = timeline.endTick(draining: queue)

        timeline.expect("the 1,000 sets queued one delivery", pending, equals: 1)
        timeline.expect("one callback for 1,000 sets", delivered, equals: 1)
        timeline.expect("it reported the whole tick's change, 0 → 1000", changes.values, equals: ["0 → 1000"])
        withExtendedLifetime(token) {}
    }

    static let callbackSetsProperty = DemoCase(
        "callback-sets-property",
        group: .coalescing,
        summary: "A callback that sets another observed property: same drain, or next tick.",
        shows: """
            a callback may set observed properties. A token made pending that way fires in the same \
            drain if it has not fired yet in this drain; if it already has, it fires in the next tick. \
            Nothing is lost and nothing loops.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let order = Recorder<String>()

        let greeter = person.observe(\.name, queue: queue) { person in
            order.append("greeter")
            timeline.callback(#"greeter: name is \#(quoted(person.name)), so it sets person.greeting"#)
            person.greeting = "Hello, \(person.name)"
        }
        let banner = person.observe(\.greeting, queue: queue) { person in
            order.append("banner")
            timeline.callback("banner: greeting is \(quoted(person.greeting))")
        }
        timeline.step(#"let greeter = person.observe(\.name) { … person.greeting = "Hello, \(person.name)" }"#)
        timeline.step(#"let banner = person.observe(\.greeting) { … }"#)

        timeline.part("Same drain: the banner has not fired yet when the greeter changes the greeting.")
        person.name = "Ada"
        timeline.step(#"person.name = "Ada"  — only the greeter is pending"#)
        let firstDrain = timeline.endTick(draining: queue)
        let sameDrainOrder = order.values
        let pendingAfterFirst = queue.pendingCount

        timeline.part("Next tick: the banner already fired in this drain when the greeter changes the greeting.")
        person.greeting = "Hi"
        timeline.step(#"person.greeting = "Hi"  — the banner becomes pending first"#)
        person.name = "Linus"
        timeline.step(#"person.name = "Linus"  — then the greeter"#)
        let secondDrain = timeline.endTick(draining: queue)
        let pendingAfterSecond = queue.pendingCount
        timeline.note("queue.pendingCount = \(pendingAfterSecond): the banner waits for the next tick")
        let thirdDrain = timeline.endTick(draining: queue)
        let fourthDrain = timeline.endTick(draining: queue)
        timeline.note("the fourth drain found nothing to do: no loop")

        timeline.expect(
            "same drain: greeter then banner, both in the first drain", sameDrainOrder,
            equals: ["greeter", "banner"])
        timeline.expect(
            "the first drain ran 2 callbacks and left nothing pending", [firstDrain, pendingAfterFirst],
            equals: [2, 0])
        timeline.expect(
            "next tick: banner, greeter in this drain, then banner again in the next", order.values,
            equals: ["greeter", "banner", "banner", "greeter", "banner"])
        timeline.expect(
            "the drains ran 2, then 1, then 0 callbacks", [secondDrain, thirdDrain, fourthDrain],
            equals: [2, 1, 0])
        timeline.expect(
            "the banner's second change stayed pending between the drains", pendingAfterSecond,
            equals: 1)
        timeline.expect(
            "the greeting ends up derived from the last name", person.greeting, equals: "Hello, Linus")
        withExtendedLifetime((greeter, banner)) {}
    }

    static let immediateVersusCoalesced = DemoCase(
        "immediate-vs-coalesced",
        group: .coalescing,
        summary: "An .immediate token runs inside every setter; a normal one once per tick.",
        shows: """
            by default a token is coalesced: it runs once, at the end of the tick. With `options: \
            .immediate` it runs synchronously inside the setter, on the setting thread, on every real \
            change — and never again at the end of the tick. Setting an equal value is no change.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let immediateSeen = Recorder<String>()
        let coalescedSeen = Recorder<String>()

        let immediate = person.observe(\.name, options: .immediate, queue: queue) { person in
            immediateSeen.append(person.name)
            timeline.callback("immediate token: name is \(quoted(person.name))  (inside the setter)")
        }
        let coalesced = person.observe(\.name, queue: queue) { person in
            coalescedSeen.append(person.name)
            timeline.callback("coalesced token: name is \(quoted(person.name))  (end of tick)")
        }
        timeline.step(#"let immediate = person.observe(\.name, options: .immediate) { … }"#)
        timeline.step(#"let coalesced = person.observe(\.name) { … }"#)

        for name in ["Ada", "Ada", "Linus", "Margaret"] {
            timeline.step(
                "person.name = \(quoted(name))" + (name == person.name ? "  — equal to the current value" : ""))
            person.name = name
        }
        timeline.endTick(draining: queue)

        timeline.expect(
            "the immediate token ran on each real change, not on the equal set", immediateSeen.values,
            equals: ["Ada", "Linus", "Margaret"])
        timeline.expect(
            "the coalesced token ran once, with the final value", coalescedSeen.values, equals: ["Margaret"])
        withExtendedLifetime((immediate, coalesced)) {}
    }

    static let mainThreadDelivery = DemoCase(
        "main-thread-delivery",
        group: .coalescing,
        summary: "A set on a background thread is delivered on the main thread.",
        shows: """
            with the default queue, `CoalescingQueue.main`, callbacks run on the main thread whatever \
            thread set the property. The first set of a tick schedules a drain on the main queue; the \
            tick ends when the main thread next serves that queue — in an app, on the next turn of its \
            run loop.
            """
    ) { timeline in
        let progress = DownloadProgress()
        let seen = Recorder<String>()
        let setterThreads = Recorder<String>()

        let token = progress.observe(\.percent) { progress in
            seen.append("\(progress.percent)% on the \(currentThreadName())")
            timeline.callback("callback on the \(currentThreadName()): percent is \(progress.percent)")
        }
        timeline.step(#"let token = progress.observe(\.percent) { … }  — default queue: CoalescingQueue.main"#)

        timeline.step("start a background thread; the main thread waits for it to finish")
        runOnBackgroundThreadAndWait {
            for percent in [25, 50, 100] {
                progress.percent = percent
                setterThreads.append(currentThreadName())
                timeline.step("progress.percent = \(percent)  — set on the \(currentThreadName())")
            }
        }
        let callbacksBeforeMainWasFree = seen.count
        timeline.step("the background thread has finished; callbacks so far: \(callbacksBeforeMainWasFree)")
        timeline.note("(the main thread was busy waiting, so the main queue could not run the drain yet)")
        timeline.note("the main thread now runs its run loop, which serves the main queue:")
        timeline.note("— end of tick —")
        let delivered = runMainRunLoop(until: { seen.count > 0 }, timeoutSeconds: 5)
        if !delivered { timeline.note("no callback within 5 seconds") }

        timeline.expect(
            "the three sets ran on a background thread", setterThreads.values,
            equals: Array(repeating: "background thread", count: 3))
        timeline.expect("no callback ran while the main thread was busy", callbacksBeforeMainWasFree, equals: 0)
        timeline.expect(
            "one callback, on the main thread, with the last value", seen.values,
            equals: ["100% on the main thread"])
        withExtendedLifetime(token) {}
    }
}

/// "main thread" or "background thread", for the timeline.
func currentThreadName() -> String {
    Thread.isMainThread ? "main thread" : "background thread"
}

/// Runs `body` on a new thread and blocks the calling thread until it has finished.
func runOnBackgroundThreadAndWait(_ body: @escaping @Sendable () -> Void) {
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        finished.signal()
    }
    thread.start()
    finished.wait()
}

/// Runs the main thread's run loop, which drains `DispatchQueue.main`, until `condition` holds
/// or the timeout passes. Returns whether `condition` held. Call it on the main thread.
@MainActor
func runMainRunLoop(until condition: () -> Bool, timeoutSeconds: Double) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
    while !condition() {
        guard Date() < deadline else { return false }
        _ = RunLoop.main.run(mode: .default, before: min(deadline, Date(timeIntervalSinceNow: 0.01)))
    }
    return true
}
