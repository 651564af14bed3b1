import Dispatch
import ObservationTokens

#if canImport(Observation)
    import Observation
#endif

/// W16: changes across ticks consumed by one task with `for await`-style iteration.
///
/// Each tick is one change of one property followed by the consumer taking the element:
/// - ours: `values(of:)` on a `.manual` queue; the end of the tick is `drain()`, then
///   `await next()` (the element is already in the sequence's slot);
/// - Observation's `Observations { model.value }`: the end of the tick is `await next()`.
/// Time is per delivered element (one change, one element); both loops verify each value.
///
/// Memory: heap bytes per live sequence (sequence + iterator, observation started), ours only:
/// `Observations` registers lazily inside `next()`, which can't be measured on the main thread.
func runW16(_ settings: Settings) -> [Row] {
    let count = opaque(settings.size(full: 100_000, quick: 10_000))
    let title = "\(grouped(count)) changes across ticks, one `for await` consumer"
    let oursNs = onDetachedTask { await oursW16(settings, count) }
    var appleNs: Double?
    #if canImport(Observation)
        appleNs = onDetachedTask { await observationsW16(settings, count) }
    #endif
    var rows = [
        Row(
            workload: "W16", title: title, ours: oursNs, peer: "Observation `Observations` async sequence",
            peerValue: appleNs, target: .ratioAtLeast(3),
            note: appleNs == nil ? appleUnavailable : "per delivered element: one set, end of tick, one `next()`")
    ]
    if heapAccountingAvailable {
        rows.append(
            Row(
                workload: "W16", title: "bytes per live `values(of:)` sequence", unit: .bytes,
                ours: bytesPerSequence(settings, settings.size(full: 10_000, quick: 1_000)),
                peer: "—", note: "sequence + iterator, observation started; ours only"))
    }
    return rows
}

/// Runs `body` on a detached task and waits for its result on this thread.
private func onDetachedTask(_ body: @escaping @Sendable () async -> Double) -> Double {
    final class Result: @unchecked Sendable {  // written by the task before it signals, read after
        var value = Double.nan
    }
    let result = Result()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        result.value = await body()
        done.signal()
    }
    done.wait()
    return result.value
}

private func oursW16(_ settings: Settings, _ count: Int) async -> Double {
    let model = OTCounter()
    let queue = CoalescingQueue(target: .manual)
    var iterator = model.values(of: \.value, includingCurrent: false, queue: queue).makeAsyncIterator()
    var next = opaque(0)
    var samples: [Double] = []
    for round in 0..<(settings.warmupRounds + settings.rounds) {
        let start = clock.now
        for _ in 0..<count {
            next &+= 1
            setOurs(model, next)
            queue.drain()
            let value = await iterator.next()
            verify(value == next, "W16 ours: each tick's value")
        }
        let elapsed = start.duration(to: clock.now)
        if round >= settings.warmupRounds { samples.append(elapsed.nanoseconds / Double(count)) }
    }
    return median(samples)
}

#if canImport(Observation)
    private func observationsW16(_ settings: Settings, _ count: Int) async -> Double {
        let model = AppleCounter()
        let values = Observations { model.value }
        var iterator = values.makeAsyncIterator()
        _ = await iterator.next()  // the initial value
        var next = opaque(0)
        var samples: [Double] = []
        for round in 0..<(settings.warmupRounds + settings.rounds) {
            let start = clock.now
            for _ in 0..<count {
                next &+= 1
                setApple(model, next)
                let value = await iterator.next()
                verify(value == next, "W16 Observations: each tick's value")
            }
            let elapsed = start.duration(to: clock.now)
            if round >= settings.warmupRounds { samples.append(elapsed.nanoseconds / Double(count)) }
        }
        return median(samples)
    }
#endif

/// Heap bytes per live sequence with its iterator, on the main thread (see W7).
private func bytesPerSequence(_ settings: Settings, _ count: Int) -> Double {
    let model = OTCounter()
    let queue = CoalescingQueue(target: .manual)
    var live: [ObservedValues<Int>.Iterator] = []
    live.reserveCapacity(count)
    return medianOfRounds(settings, rounds: 3) {
        let before = heapBytesInUse()
        for _ in 0..<count {
            live.append(model.values(of: \.value, includingCurrent: false, queue: queue).makeAsyncIterator())
        }
        let after = heapBytesInUse()
        live.removeAll(keepingCapacity: true)
        return Double(after - before) / Double(count)
    }
}
