import ObservationTokens

/// W13: insert one element at index 0 of a 100,000-element observed array with 1,000
/// index-following tokens (on indexes 0 to 999), and deliver. Every token fires (the element at
/// its index changed). Reported per insert and per token delivered; the issue asks for a report
/// (O(tokens on the array) per insert), not a target. The insert itself moves 100,000 elements
/// (as `Array.insert(_:at: 0)` does); the row shows that cost too.
func runW13(_ settings: Settings) -> [Row] {
    let size = opaque(settings.size(full: 100_000, quick: 10_000))
    let tokenCount = opaque(1_000)
    let inserts = opaque(settings.size(full: 200, quick: 50))
    let queue = CoalescingQueue(target: .manual)
    let numbers = ObservedArray(0..<size)
    let tally = Tally()
    let tokens = (0..<tokenCount).map { index in
        numbers.observe(.element(at: index), queue: queue) { _ in tally.count &+= 1 }
    }
    let oursNs = medianOfRounds(settings) {
        let elapsed = time {
            for value in 0..<inserts {
                insertOurs(numbers, value)
                verify(queue.drain() == tokenCount, "W13: every index-following token fires once")
            }
        }
        numbers.removeFirst(inserts)
        _ = queue.drain()
        return elapsed.nanoseconds / Double(inserts)
    }
    withExtendedLifetime(tokens) {}

    // The same insert into an unobserved array: the floor.
    let plain = ObservedArray(0..<size)
    let plainNs = medianOfRounds(settings) {
        let elapsed = time {
            for value in 0..<inserts { insertOurs(plain, value) }
        }
        plain.removeFirst(inserts)
        return elapsed.nanoseconds / Double(inserts)
    }
    let title = "insert at 0 of \(grouped(size)) elements with 1,000 index-following tokens, deliver"
    return [
        Row(
            workload: "W13", title: title, ours: oursNs, peer: "target: report", ratioKind: .none,
            note: "ns per insert, 1,000 callbacks included (\(formatNumber(oursNs / Double(tokenCount))) ns per token)"),
        Row(
            workload: "W13", title: title, ours: oursNs, peer: "the same insert with no tokens", peerValue: plainNs,
            ratioKind: .oursOverPeer, note: "ratio = with tokens / without"),
    ]
}

@inline(never)
func insertOurs(_ numbers: ObservedArray<Int>, _ value: Int) { numbers.insert(value, at: 0) }
