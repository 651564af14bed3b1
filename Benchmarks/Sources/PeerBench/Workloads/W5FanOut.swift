import Foundation
import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W5: fan-out. 10,000 registrations on one property; one change; every callback runs once.
/// Reported per delivered callback.
/// - ours: one set, then `drain()` of the `.manual` queue (10,000 callbacks);
/// - OpenCombine: `PassthroughSubject.send` to 10,000 sinks (synchronous);
/// - NotificationCenter: one post to 10,000 observers of that name and object;
/// - Observation: one set fires 10,000 `withObservationTracking` handlers; the end of the tick
///   runs each callback and re-registers it, so the next tick is observed too (like ours).
func runW5(_ settings: Settings) -> [Row] {
    let fanOut = opaque(10_000)
    let ticks = opaque(settings.size(full: 5, quick: 2))
    let title = "fan-out: \(grouped(fanOut)) tokens, one set, deliver"
    var next = opaque(0)

    // Ours.
    let queue = CoalescingQueue(target: .manual)
    let model = OTCounter()
    let oursTally = Tally()
    let tokens = (0..<fanOut).map { _ in model.observe(\.value, queue: queue) { _ in oursTally.count &+= 1 } }
    let oursNs = perCallback(settings, ticks: ticks, fanOut: fanOut) {
        next &+= 1
        setOurs(model, next)
        verify(queue.drain() == fanOut, "W5 ours: one callback per token")
    }
    withExtendedLifetime(tokens) {}

    // OpenCombine PassthroughSubject.
    let subject = PassthroughSubject<Int, Never>()
    let combineTally = Tally()
    let sinks = (0..<fanOut).map { _ in subject.sink { _ in combineTally.count &+= 1 } }
    var sent = combineTally.count
    let combineNs = perCallback(settings, ticks: ticks, fanOut: fanOut) {
        next &+= 1
        subject.send(next)
        verify(combineTally.count - sent == fanOut, "W5 OpenCombine: one call per sink")
        sent = combineTally.count
    }
    withExtendedLifetime(sinks) {}

    // NotificationCenter.
    let center = NotificationCenter()
    let notifying = NotifyingCounter(center: center)
    let noteTally = Tally()
    let observers = (0..<fanOut).map { _ in
        center.addObserver(forName: NotifyingCounter.didChange, object: notifying, queue: nil) { _ in
            noteTally.count &+= 1
        }
    }
    var posted = noteTally.count
    let notificationNs = perCallback(settings, ticks: ticks, fanOut: fanOut) {
        next &+= 1
        setNotifying(notifying, next)
        verify(noteTally.count - posted == fanOut, "W5 NotificationCenter: one call per observer")
        posted = noteTally.count
    }
    for observer in observers { center.removeObserver(observer) }

    var appleNs: Double?
    #if canImport(Observation)
        let apple = AppleCounter()
        let fired = Tally()
        let appleTally = Tally()
        func arm() {
            withObservationTracking {
                blackHole(apple.value)
            } onChange: {
                fired.count &+= 1
            }
        }
        for _ in 0..<fanOut { arm() }
        appleNs = perCallback(settings, ticks: ticks, fanOut: fanOut) {
            next &+= 1
            setApple(apple, next)
            verify(fired.count == fanOut, "W5 Observation: one onChange per registration")
            for _ in 0..<fired.count {
                appleTally.count &+= 1
                arm()
            }
            fired.count = 0
        }
    #endif

    return [
        Row(
            workload: "W5", title: title, ours: oursNs, peer: "OpenCombine `PassthroughSubject`, 10,000 sinks",
            peerValue: combineNs, target: .ratioAtLeast(3), note: "per delivered callback",
            counted: CountPair(ours: .ours("W5", operations: 50_000), peer: .peer("W5-combine", operations: 50_000))),
        Row(
            workload: "W5", title: title, ours: oursNs, peer: "NotificationCenter, 10,000 observers",
            peerValue: notificationNs),
        Row(
            workload: "W5", title: title, ours: oursNs, peer: "Observation, 10,000 trackings re-armed",
            peerValue: appleNs, note: appleNs == nil ? appleUnavailable : "onChange + re-registration per callback"),
    ]
}

/// ns per delivered callback: `ticks` changes per round, each delivering `fanOut` callbacks.
@inline(__always)
private func perCallback(_ settings: Settings, ticks: Int, fanOut: Int, _ tick: () -> Void) -> Double {
    medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<ticks { tick() }
        }
        return elapsed.nanoseconds / Double(ticks * fanOut)
    }
}
