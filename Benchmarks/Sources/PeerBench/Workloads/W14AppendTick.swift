import ObservationTokens
import OpenCombine

/// W14: 1,000 appends in one tick to an observed array of 1,000 elements, one observer that
/// wants to know what changed. Reported per append.
/// - ours: `ObservedArray` + `observeMutations` on a `.manual` queue, `drain()`: one callback
///   with the 1,000 inserted indexes;
/// - OpenCombine: `@Published var items: [Int]` + `sink`: every append copies the array into
///   the publisher and delivers the whole array to the sink (which reads its count).
func runW14(_ settings: Settings) -> [Row] {
    let base = opaque(1_000)
    let appends = opaque(1_000)
    let ticks = opaque(settings.size(full: 50, quick: 10))

    let queue = CoalescingQueue(target: .manual)
    let items = ObservedArray(0..<base)
    let tally = Tally()
    let token = items.observe(.mutations, queue: queue) { _, changes in tally.count &+= changes.inserted.count }
    let oursNs = medianOfRounds(settings) {
        var elapsed = Duration.zero
        for _ in 0..<ticks {
            elapsed += time {
                for value in 0..<appends { appendNumber(items, value) }
                verify(queue.drain() == 1, "W14 ours: one callback per tick")
            }
            items.removeLast(appends)
            _ = queue.drain()
        }
        return elapsed.nanoseconds / Double(ticks * appends)
    }
    verify(tally.count >= appends, "W14 ours: the change list names the inserted indexes")
    withExtendedLifetime(token) {}

    let model = CombineList(count: base)
    let combineTally = Tally()
    let cancellable = model.$items.sink { items in combineTally.count &+= items.count }
    let combineNs = medianOfRounds(settings) {
        var elapsed = Duration.zero
        for _ in 0..<ticks {
            let before = combineTally.count
            elapsed += time {
                for value in 0..<appends { appendCombine(model, value) }
            }
            verify(combineTally.count > before, "W14 OpenCombine: the sink ran")
            model.items.removeLast(appends)
        }
        return elapsed.nanoseconds / Double(ticks * appends)
    }
    withExtendedLifetime(cancellable) {}

    return [
        Row(
            workload: "W14", title: "1,000 appends in one tick to an array of 1,000, one observer",
            ours: oursNs, peer: "OpenCombine `@Published var items: [Int]` + `sink`", peerValue: combineNs,
            target: .ratioAtLeast(10), note: "ns per append, delivery included",
            counted: CountPair(ours: .ours("W14", operations: 50_000), peer: .peer("W14-combine", operations: 50_000)))
    ]
}

final class CombineList {
    @Published var items: [Int]
    init(count: Int) { items = Array(0..<count) }
}

@inline(never)
func appendNumber(_ items: ObservedArray<Int>, _ value: Int) { items.append(value) }

@inline(never)
func appendCombine(_ model: CombineList, _ value: Int) { model.items.append(value) }
