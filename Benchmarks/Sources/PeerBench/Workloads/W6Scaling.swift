import ObservationTokens

/// W6: does creating and ending a token get slower when many tokens are alive?
///
/// All live tokens sit on the SAME property of the SAME object: the worst case for the
/// per-property bookkeeping (one weak set with every token in it), where any O(n) step in
/// attach or detach would show. Spreading them over objects would only test the allocator.
/// With `live` tokens in place, a round creates a batch of 100 tokens on that property and
/// releases it, 100 times (W3 and W4's cycle); the number is ns per token for create + end.
func runW6(_ settings: Settings) -> [Row] {
    let sizes = settings.quick ? [1_000, 10_000, 100_000] : [1_000, 100_000, 1_000_000]
    let batches = opaque(settings.size(full: 100, quick: 20))
    var costs: [Int: Double] = [:]
    for live in sizes {
        let queue = CoalescingQueue(target: .manual)
        let model = OTCounter()
        let tally = Tally()
        var liveTokens: [ObservationToken] = []
        liveTokens.reserveCapacity(live)
        for _ in 0..<live { liveTokens.append(model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }) }
        let cycle = createEndCycle(settings, batches: batches) {
            model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }
        } end: { tokens in
            tokens.removeAll(keepingCapacity: true)
        }
        costs[live] = cycle.create + cycle.end
        verify(model.observerCount(of: \.value) == live, "W6: live tokens must stay live")
        liveTokens.removeAll()
    }
    let smallest = sizes[0]
    return sizes.dropFirst().map { live in
        Row(
            workload: "W6", title: "create+end per token, \(grouped(live)) live tokens on the property",
            ours: costs[live]!, peer: "ours with \(grouped(smallest)) live", peerValue: costs[smallest]!,
            ratioKind: .oursOverPeer, target: live == sizes.last ? .ratioAtMost(1.5) : nil,
            note: live == sizes.last ? "ratio = cost at \(grouped(live)) / cost at \(grouped(smallest))" : nil)
    }
}
