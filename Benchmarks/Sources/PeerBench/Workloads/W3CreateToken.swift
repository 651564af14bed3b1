import Foundation
import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W3: create a token on a property.
///
/// Every flavour registers a callback on the same property of one object, in batches of
/// `createEndBatch`; W4 ends them. So at most 100 registrations are live on the object at any
/// time. The callback closure captures one object (a `Tally`) in every flavour.
/// - ours: `observe(\.value, queue:)` on a `.manual` queue;
/// - NotificationCenter: `addObserver(forName:object:queue:using:)` on a private center;
/// - OpenCombine: `$value.sink` (which also delivers the current value once, synchronously:
///   that is part of what a `@Published` subscription costs);
/// - Observation: one `withObservationTracking` registration (informational: it has no token,
///   it can't be ended, and it ends by firing once).
func runW3(_ settings: Settings) -> [Row] {
    let costs = CreateEndCosts(settings)
    let title = "create a token on a property"
    let apple = costs.appleCreate
    return [
        Row(
            workload: "W3", title: title, ours: costs.ours.create, peer: "NotificationCenter `addObserver`",
            peerValue: costs.notification.create, target: .ratioAtLeast(2.5),
            counted: createEndCounts(peer: "W3-notification", function: "*w3measuredCreate*")),
        Row(
            workload: "W3", title: title, ours: costs.ours.create, peer: "OpenCombine `$value.sink`",
            peerValue: costs.combine.create, target: .ratioAtLeast(15),
            note: "the sink also receives the current value on subscription",
            counted: createEndCounts(peer: "W3-combine", function: "*w3measuredCreate*")),
        Row(
            workload: "W3", title: title, ours: costs.ours.create, peer: "Observation `withObservationTracking`",
            peerValue: apple,
            note: apple == nil ? appleUnavailable : "one-shot registration, not a token: it can't be cancelled"),
    ]
}

/// W3's and W4's counted sides: 100 batches of 100 registrations, created (`*w3measuredCreate*`)
/// or ended (`*w4measuredEnd*`), in `ProfileTarget W3` and the peer's `PeerProfile` case.
func createEndCounts(peer: String, function: String) -> CountPair {
    CountPair(
        ours: .ours("W3", function: function, operations: 10_000),
        peer: .peer(peer, function: function, operations: 10_000))
}

/// Registrations created per batch in W3 and W4 (and W6), then ended.
let createEndBatch = 100

/// W3 and W4 measure the two halves of one cycle: create a batch, end the batch.
struct CreateEndCosts {
    var ours: (create: Double, end: Double)
    var notification: (create: Double, end: Double)
    var combine: (create: Double, end: Double)
    var appleCreate: Double?

    init(_ settings: Settings) {
        let batches = opaque(settings.size(full: 100, quick: 10))
        let tally = Tally()

        let queue = CoalescingQueue(target: .manual)
        let model = OTCounter()
        ours = createEndCycle(settings, batches: batches) {
            model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }
        } end: { tokens in
            tokens.removeAll(keepingCapacity: true)
        }

        let center = NotificationCenter()
        let notifying = NotifyingCounter(center: center)
        notification = createEndCycle(settings, batches: batches) {
            center.addObserver(forName: NotifyingCounter.didChange, object: notifying, queue: nil) { _ in
                tally.count &+= 1
            }
        } end: { observers in
            for observer in observers { center.removeObserver(observer) }
            observers.removeAll(keepingCapacity: true)
        }

        let published = CombineCounter()
        combine = createEndCycle(settings, batches: batches) {
            published.$value.sink { _ in tally.count &+= 1 }
        } end: { cancellables in
            cancellables.removeAll(keepingCapacity: true)
        }

        #if canImport(Observation)
            let apple = AppleCounter()
            var next = 0
            appleCreate =
                createEndCycle(settings, batches: batches) {
                    withObservationTracking {
                        blackHole(apple.value)
                    } onChange: {
                        tally.count &+= 1
                    }
                } end: { registrations in
                    // Not an "end": a registration can only fire. Fire them all so none accumulate.
                    next &+= 1
                    setApple(apple, next)
                    registrations.removeAll(keepingCapacity: true)
                }
                .create
        #endif
        blackHole(tally.count)
    }
}

/// Creates `createEndBatch` handles, then ends them all, `batches` times per round. Returns the
/// median over rounds of ns per create and ns per end.
@inline(__always)
func createEndCycle<Handle>(
    _ settings: Settings, batches: Int, create: () -> Handle, end: (inout [Handle]) -> Void
) -> (create: Double, end: Double) {
    var handles: [Handle] = []
    handles.reserveCapacity(createEndBatch)
    return medianOfRounds2(settings) {
        var creating = Duration.zero
        var ending = Duration.zero
        for _ in 0..<batches {
            creating += time {
                for _ in 0..<createEndBatch { handles.append(create()) }
            }
            ending += time { end(&handles) }
        }
        let operations = Double(batches * createEndBatch)
        return (creating.nanoseconds / operations, ending.nanoseconds / operations)
    }
}
