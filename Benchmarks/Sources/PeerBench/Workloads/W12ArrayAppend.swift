import ObservationTokens

/// W12: append one element to an observed array that has 1,000 object-following tokens on it,
/// at 1k, 100k and 1M elements. Reported per append; the issue asks that the cost not grow with
/// the array (≤ 1.5× from 1k to 1M elements): an append touches no followed element, so it must
/// cost O(tokens touched), not O(n).
///
/// Each round appends `appends` items and then (untimed) removes them again, so the array
/// keeps its size. No token fires (nothing leaves); the drain is checked to deliver nothing.
func runW12(_ settings: Settings) -> [Row] {
    let sizes = settings.quick ? [1_000, 10_000, 100_000] : [1_000, 100_000, 1_000_000]
    let tokenCount = opaque(1_000)
    let appends = opaque(settings.size(full: 10_000, quick: 2_000))
    var costs: [Int: Double] = [:]
    for size in sizes {
        let queue = CoalescingQueue(target: .manual)
        let items = ObservedArray((0..<size).map { _ in OTCounter() })
        let tally = Tally()
        let tokens = (0..<tokenCount).map { index in
            items.observe(.object(at: index % size), queue: queue) { _, _ in tally.count &+= 1 }
        }
        let extra = (0..<appends).map { _ in OTCounter() }
        costs[size] = medianOfRounds(settings) {
            let elapsed = time {
                for item in extra { appendOurs(items, item) }
            }
            items.removeLast(appends)
            verify(queue.drain() == 0 && tally.count == 0, "W12: appends must not fire object-following tokens")
            return elapsed.nanoseconds / Double(appends)
        }
        verify(items.count == size, "W12: size restored")
        withExtendedLifetime(tokens) {}
    }
    let smallest = sizes[0]
    return sizes.map { size in
        Row(
            workload: "W12", title: "append to an array of \(grouped(size)) with 1,000 object-following tokens",
            ours: costs[size]!, peer: size == smallest ? "target: report" : "ours at \(grouped(smallest)) elements",
            peerValue: size == smallest ? nil : costs[smallest]!, ratioKind: size == smallest ? .none : .oursOverPeer,
            target: size == sizes.last ? .ratioAtMost(1.5) : nil,
            note: size == smallest ? "ns per append" : "ratio = cost at \(grouped(size)) / cost at \(grouped(smallest))"
        )
    }
}

@inline(never)
func appendOurs(_ items: ObservedArray<OTCounter>, _ item: OTCounter) { items.append(item) }
