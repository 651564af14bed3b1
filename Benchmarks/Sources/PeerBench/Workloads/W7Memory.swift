import Foundation
import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W7: heap bytes per live single-property token, registration included.
///
/// Measured as the growth of glibc's `mallinfo2()` (`uordblks + hblkhd`: bytes in use in the
/// main arena plus mmapped chunks) while N registrations are created and kept alive, divided by
/// N. That counts every allocation the registration makes (token, subscription, closure
/// contexts, the slot in the property's weak set, amortized array growth) at malloc's real
/// chunk sizes. Runs on the main thread, whose allocations all go to the main arena.
///
/// Two shapes:
/// - N registrations on ONE property of one object (the row with the target): the per-object
///   parts (our registry, OpenCombine's subject) are shared and already exist;
/// - one registration on each of N fresh objects: includes the per-object parts, created by the
///   first registration (our `Registry`, OpenCombine's lazily created `@Published` subject).
func runW7(_ settings: Settings) -> [Row] {
    guard heapAccountingAvailable else {
        return [
            Row(
                workload: "W7", title: "bytes per live token", unit: .bytes, ours: .nan, peer: "OpenCombine `sink`",
                note: "mallinfo2() needs glibc; not measured on this platform")
        ]
    }
    let count = opaque(settings.size(full: 10_000, quick: 1_000))
    let queue = CoalescingQueue(target: .manual)
    let tally = Tally()

    // One property, many registrations.
    let model = OTCounter()
    let oursShared = bytesPerRegistration(settings, count) {
        model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }
    }
    let published = CombineCounter()
    let combineShared = bytesPerRegistration(settings, count) {
        published.$value.sink { _ in tally.count &+= 1 }
    }
    let center = NotificationCenter()
    let notifying = NotifyingCounter(center: center)
    // Releasing an observer token doesn't unregister it; the registrations of all rounds stay
    // in `center` until it is released at the end of this function.
    let notificationShared = bytesPerRegistration(settings, count) {
        center.addObserver(forName: NotifyingCounter.didChange, object: notifying, queue: nil) { _ in
            tally.count &+= 1
        }
    }

    var appleShared: Double?
    #if canImport(Observation)
        let apple = AppleCounter()
        appleShared = bytesPerRegistration(settings, count) {
            withObservationTracking {
                blackHole(apple.value)
            } onChange: {
                tally.count &+= 1
            }
        }
        setApple(apple, 1)  // fires (and so frees) every registration
    #endif

    // One registration per fresh object.
    let oursFresh = bytesPerRegistration(settings, count) {
        (0..<count).map { _ in OTCounter() }
    } make: { models, index in
        models[index].observe(\.value, queue: queue) { _ in tally.count &+= 1 }
    }
    let combineFresh = bytesPerRegistration(settings, count) {
        (0..<count).map { _ in CombineCounter() }
    } make: { models, index in
        models[index].$value.sink { _ in tally.count &+= 1 }
    }

    let title = "bytes per live single-property token"
    return [
        Row(
            workload: "W7", title: title + ", many on one property", unit: .bytes, ours: oursShared,
            peer: "OpenCombine `$value.sink`", peerValue: combineShared, target: .ratioAtLeast(2),
            note: "ours ≤ 50% of the sink means ratio ≥ 2×; mallinfo2() deltas over \(grouped(count)) live tokens"),
        Row(
            workload: "W7", title: title + ", many on one property", unit: .bytes, ours: oursShared,
            peer: "NotificationCenter `addObserver`", peerValue: notificationShared),
        Row(
            workload: "W7", title: title + ", many on one property", unit: .bytes, ours: oursShared,
            peer: "Observation `withObservationTracking`", peerValue: appleShared,
            note: appleShared == nil ? appleUnavailable : "one-shot registration"),
        Row(
            workload: "W7", title: title + ", first on a fresh object", unit: .bytes, ours: oursFresh,
            peer: "OpenCombine `$value.sink`", peerValue: combineFresh,
            note: "includes the per-object parts: our registry, OpenCombine's `@Published` subject"),
    ]
}

/// Median over rounds of heap bytes per registration while `count` registrations are alive.
private func bytesPerRegistration<Handle>(_ settings: Settings, _ count: Int, _ make: () -> Handle) -> Double {
    bytesPerRegistration(settings, count) {
    } make: { _, _ in
        make()
    }
}

/// The same, with per-round objects from `prepare` (created before the first reading, so they
/// are not counted; fresh each round, so what the first registration creates on them is).
private func bytesPerRegistration<Context, Handle>(
    _ settings: Settings, _ count: Int, prepare: () -> Context, make: (Context, Int) -> Handle
) -> Double {
    var handles: [Handle] = []
    handles.reserveCapacity(count)
    return medianOfRounds(settings, rounds: 3) {
        let context = prepare()
        let before = heapBytesInUse()
        for index in 0..<count { handles.append(make(context, index)) }
        let after = heapBytesInUse()
        handles.removeAll(keepingCapacity: true)
        withExtendedLifetime(context) {}
        return Double(after - before) / Double(count)
    }
}
