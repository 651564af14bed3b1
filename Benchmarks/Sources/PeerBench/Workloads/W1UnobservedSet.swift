import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W1: set a property that nobody observes.
///
/// Each flavour stores a value derived from the loop index through its own non-inlined setter.
/// Ours has never been observed (no registry); `@Observable` has never been tracked; the
/// `@Published` property has never been subscribed to.
func runW1(_ settings: Settings) -> [Row] {
    let count = opaque(settings.size(full: 2_000_000, quick: 200_000))
    let title = "set of an unobserved property"

    let ours = OTCounter()
    let oursNs = perSet(settings, count) { setOurs(ours, $0) }
    blackHole(ours.value)

    let plain = PlainCounter()
    let plainNs = perSet(settings, count) { setPlain(plain, $0) }
    blackHole(plain.value)

    let empty = PlainCounter()
    let floorNs = perSet(settings, count) { setNothing(empty, $0) }

    let published = CombineCounter()
    let publishedNs = perSet(settings, count) { setCombine(published, $0) }
    blackHole(published.value)

    var appleNs: Double?
    #if canImport(Observation)
        let apple = AppleCounter()
        appleNs = perSet(settings, count) { setApple(apple, $0) }
        blackHole(apple.value)
    #endif

    let floorNote =
        "every W1/W2 number includes one non-inlined call per set (call floor here: \(formatNumber(floorNs)) ns)"
    return [
        Row(
            workload: "W1", title: title, ours: oursNs, peer: "Observation `@Observable`, untracked",
            peerValue: appleNs, target: .ratioAtLeast(10), note: appleNs == nil ? appleUnavailable : nil,
            counted: CountPair(
                ours: .ours("W1", operations: 1_000_000), peer: .peer("W1-observation", operations: 1_000_000))),
        Row(
            workload: "W1", title: title, ours: oursNs, peer: "plain stored property", peerValue: plainNs,
            target: .ratioAtLeast(1.0 / 3.0),
            note: "≤ 3× a plain store means ratio ≥ 0.33×; " + floorNote,
            counted: CountPair(
                ours: .ours("W1", operations: 1_000_000), peer: .peer("W1-plain", operations: 1_000_000))),
        Row(
            workload: "W1", title: title, ours: oursNs, peer: "OpenCombine `@Published`, no subscriber",
            peerValue: publishedNs),
    ]
}

/// ns per set: `count` sets, each with a value that differs from the previous one (a running
/// counter that continues across rounds), median of rounds. Inlined so that `set` is a direct
/// call in the loop, not a closure call.
@inline(__always)
func perSet(_ settings: Settings, _ count: Int, _ set: (Int) -> Void) -> Double {
    var next = opaque(0)
    return medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<count {
                next &+= 1
                set(next)
            }
        }
        return elapsed.nanoseconds / Double(count)
    }
}
