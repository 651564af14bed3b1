import ObservationTokens
import OpenCombine

/// W15: a one-way binding with `map`, from an observed property to a plain object's property.
///
/// - ours: `model.pipeline(of: \.value).map { $0 &* 2 }.bind(to: target, \.value, queue:)` on a
///   `.manual` queue: the sets of a tick coalesce and `drain()` writes the target ONCE, with
///   the tick's last value;
/// - OpenCombine: `$value.map { $0 &* 2 }.assign(to: \.value, on: target)`, which is synchronous
///   and does not coalesce: every set runs the map and writes the target.
///
/// Both write the current value once at creation (ours: the default `.initial`; `@Published`:
/// the value it sends on subscription), so the creation rows compare the same work.
func runW15(_ settings: Settings) -> [Row] {
    let count = opaque(settings.size(full: 1_000_000, quick: 100_000))
    let title = "binding with `map`: \(grouped(count)) sets in one tick, then deliver"

    let queue = CoalescingQueue(target: .manual)
    let ours = OTCounter()
    let oursTarget = PlainCounter()
    let token = ours.pipeline(of: \.value).map { $0 &* 2 }.bind(to: oursTarget, \.value, queue: queue)
    var next = 0
    let oursNs = perTick(
        settings, count,
        set: { value in
            next = value; setOurs(ours, value)
        }
    ) {
        verify(queue.drain() == 1, "W15 ours: one drain must run exactly one push")
        verify(oursTarget.value == next &* 2, "W15 ours: the target holds the tick's last value, mapped")
    }
    withExtendedLifetime(token) {}

    let published = CombineCounter()
    let combineTarget = PlainCounter()
    let cancellable = published.$value.map { $0 &* 2 }.assign(to: \.value, on: combineTarget)
    var combineNext = 0
    let combineNs = perTick(
        settings, count,
        set: { value in
            combineNext = value; setCombine(published, value)
        }
    ) {
        verify(combineTarget.value == combineNext &* 2, "W15 OpenCombine: the target holds the last value, mapped")
    }
    cancellable.cancel()

    let creation = BindingCreationCosts(settings)
    return [
        Row(
            workload: "W15", title: title, ours: oursNs, peer: "OpenCombine `$value.map(…).assign(to:on:)`",
            peerValue: combineNs, target: .ratioAtLeast(10),
            note: "per set; ours coalesces into 1 push per tick, `assign` is synchronous and writes on every set",
            counted: CountPair(
                ours: .ours("W15", function: "*w15measuredSets*", operations: 1_000_000),
                peer: .peer("W15-combine-sets", "100000", function: "*w15measuredSetsCombine*", operations: 100_000))),
        Row(
            workload: "W15", title: "create a binding with `map` (writes the current value)", ours: creation.ours,
            peer: "OpenCombine `$value.map(…).assign(to:on:)`", peerValue: creation.combine,
            target: .ratioAtLeast(3), note: "batches of 100, then released (release not timed)",
            counted: CountPair(
                ours: .ours("W15", function: "*w15measuredCreate*", operations: 10_000),
                peer: .peer("W15-combine", function: "*w15measuredCreateCombine*", operations: 10_000))),
    ]
}

/// ns per creation of a binding, in batches of `createEndBatch`.
struct BindingCreationCosts {
    var ours: Double
    var combine: Double

    init(_ settings: Settings) {
        let batches = opaque(settings.size(full: 100, quick: 10))
        let queue = CoalescingQueue(target: .manual)
        let model = OTCounter()
        let target = PlainCounter()
        ours =
            createEndCycle(settings, batches: batches) {
                model.pipeline(of: \.value).map { $0 &* 2 }.bind(to: target, \.value, queue: queue)
            } end: { tokens in
                tokens.removeAll(keepingCapacity: true)
            }
            .create

        let published = CombineCounter()
        let combineTarget = PlainCounter()
        combine =
            createEndCycle(settings, batches: batches) {
                published.$value.map { $0 &* 2 }.assign(to: \.value, on: combineTarget)
            } end: { cancellables in
                cancellables.removeAll(keepingCapacity: true)
            }
            .create
    }
}
