import Dispatch
import Foundation
import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W2: a burst of sets of one observed property within one tick, then the end of the tick.
///
/// Ours: one token on a `.manual` queue; the sets coalesce and `drain()` runs ONE callback.
/// The peers do what their users would do for "keep observing this property":
/// - OpenCombine `@Published` + `sink`: no coalescing, the sink runs on EVERY set (that is the
///   point of the comparison: it's what a Combine user pays for a burst);
/// - `withObservationTracking`: fires once on the first set of the tick; the end of the tick
///   runs the callback and registers again (the usual re-arming loop);
/// - `Observations` (async sequence): coalesces by itself; the end of the tick is one `await`;
/// - NotificationCenter: a post per set, delivered synchronously per set.
func runW2(_ settings: Settings) -> [Row] {
    let count = opaque(settings.size(full: 1_000_000, quick: 100_000))
    let title = "\(grouped(count)) sets in one tick, then deliver"

    // Ours.
    let queue = CoalescingQueue(target: .manual)
    let ours = OTCounter()
    let oursTally = Tally()
    let token = ours.observe(\.value, queue: queue) { _ in oursTally.count &+= 1 }
    let oursNs = perTick(settings, count, set: { setOurs(ours, $0) }) {
        verify(queue.drain() == 1, "W2 ours: one drain must run exactly one callback")
    }
    withExtendedLifetime(token) {}

    // OpenCombine @Published + sink.
    let published = CombineCounter()
    let combineTally = Tally()
    let cancellable = published.$value.sink { _ in combineTally.count &+= 1 }
    var before = combineTally.count
    let combineNs = perTick(settings, count, set: { setCombine(published, $0) }) {
        verify(combineTally.count - before == count, "W2 OpenCombine: one sink call per set")
        before = combineTally.count
    }
    cancellable.cancel()

    // NotificationCenter: post per set.
    let center = NotificationCenter()
    let notifying = NotifyingCounter(center: center)
    let noteTally = Tally()
    let observer = center.addObserver(forName: NotifyingCounter.didChange, object: notifying, queue: nil) { _ in
        noteTally.count &+= 1
    }
    // Posting is ~100× slower than a set: fewer sets keep this row from dominating the run.
    let postCount = opaque(count / 10)
    var posted = noteTally.count
    let notificationNs = perTick(settings, postCount, set: { setNotifying(notifying, $0) }) {
        verify(noteTally.count - posted == postCount, "W2 NotificationCenter: one call per post")
        posted = noteTally.count
    }
    center.removeObserver(observer)

    var trackingNs: Double?
    var observationsNs: Double?
    #if canImport(Observation)
        trackingNs = observationTrackingW2(settings, count)
        observationsNs = observationsW2(settings, count)
    #endif

    let unavailable = trackingNs == nil ? appleUnavailable : nil
    return [
        Row(
            workload: "W2", title: title, ours: oursNs, peer: "OpenCombine `@Published` + `sink`",
            peerValue: combineNs, target: .ratioAtLeast(10),
            note: "per set; ours runs 1 callback per tick, the sink runs on every set",
            counted: CountPair(
                ours: .ours("W2", operations: 1_000_000), peer: .peer("W2-combine", "100000", operations: 100_000))),
        Row(
            workload: "W2", title: title, ours: oursNs,
            peer: "Observation `withObservationTracking`, re-armed per tick",
            peerValue: trackingNs, note: unavailable ?? "fires once per tick, like ours"),
        Row(
            workload: "W2", title: title, ours: oursNs, peer: "Observation `Observations` async sequence",
            peerValue: observationsNs, note: unavailable ?? "one `await next()` per tick"),
        Row(
            workload: "W2", title: title, ours: oursNs, peer: "NotificationCenter post per set",
            peerValue: notificationNs,
            note: "observer runs on every post; measured with \(grouped(postCount)) posts per tick"),
    ]
}

/// ns per set of one tick: `count` sets (each a real change), then `endOfTick`, median of rounds.
@inline(__always)
func perTick(_ settings: Settings, _ count: Int, set: (Int) -> Void, endOfTick: () -> Void) -> Double {
    var next = opaque(0)
    return medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<count {
                next &+= 1
                set(next)
            }
            endOfTick()
        }
        return elapsed.nanoseconds / Double(count)
    }
}

#if canImport(Observation)
    private func observationTrackingW2(_ settings: Settings, _ count: Int) -> Double {
        let model = AppleCounter()
        let fired = Tally()
        let delivered = Tally()
        func arm() {
            withObservationTracking {
                blackHole(model.value)
            } onChange: {
                fired.count += 1
            }
        }
        arm()
        return perTick(settings, count, set: { setApple(model, $0) }) {
            // End of tick: run the callback once and re-arm, as a user of this API must.
            verify(fired.count == 1, "W2 withObservationTracking: onChange fires once per tick")
            fired.count = 0
            delivered.count &+= 1
            arm()
        }
    }

    /// Runs the `Observations` measurement on a detached task (the sequence is async) and waits.
    private func observationsW2(_ settings: Settings, _ count: Int) -> Double? {
        final class Result: @unchecked Sendable {  // written by the task before it signals, read after
            var nanoseconds: Double?
        }
        let result = Result()
        let done = DispatchSemaphore(value: 0)
        let model = AppleCounter()
        let rounds = settings.warmupRounds + settings.rounds
        let warmup = settings.warmupRounds
        Task.detached {
            let values = Observations { model.value }
            var iterator = values.makeAsyncIterator()
            _ = await iterator.next()  // the initial value
            var next = opaque(0)
            var samples: [Double] = []
            for round in 0..<rounds {
                let start = clock.now
                for _ in 0..<count {
                    next &+= 1
                    setApple(model, next)
                }
                let value = await iterator.next()
                let elapsed = start.duration(to: clock.now)
                verify(value == next, "W2 Observations: the tick's last value")
                if round >= warmup { samples.append(elapsed.nanoseconds / Double(count)) }
            }
            result.nanoseconds = median(samples)
            done.signal()
        }
        done.wait()
        return result.nanoseconds
    }
#endif
