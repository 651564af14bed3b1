import Testing

@testable import ObservationTokens

@Suite("Collection tokens across threads")
struct CollectionThreadingTests {
    @Test func tokensComeAndGoOnOtherThreadsWhileOneThreadMutates() async {
        let mutations = RelScale.iterations(4_000, tsanDivisor: 8)
        let shared = CollShared(numbers: [], settings: [:])
        let numbers = shared.numbers
        let settings = shared.settings
        let counted = CoreCounter()
        // An immediate token: exactly one callback per change of the count.
        let countToken = numbers.observe(\.count, options: .immediate) { _ in counted.increment() }
        let keyCounted = CoreCounter()
        let keyToken = settings.observe(.key(0), options: .immediate) { _ in keyCounted.increment() }
        // A key through a string path, whose cell is looked up on each walk, while other
        // threads make and end string paths on the same keys.
        let names = shared.names
        let pathCounted = CoreCounter()
        let pathToken = try? names.observe(.path("0"), options: .immediate) { _ in pathCounted.increment() }
        let queue = CoalescingQueue(target: .manual)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The only thread that touches the contents.
                for value in 0..<mutations {
                    shared.numbers.append(value)
                    shared.settings[value % 3] = value
                }
            }
            for worker in 0..<2 {
                group.addTask {
                    let numbers = shared.numbers
                    let settings = shared.settings
                    for round in 0..<(mutations / 4) {
                        let tokens = [
                            numbers.observe(.element(at: (round + worker) % 50), queue: queue) { _ in },
                            numbers.observe(.mutations, queue: queue) { _, _ in },
                            settings.observe(.key(round % 5), queue: queue) { _ in },
                            (try? shared.names.observe(.path("\(round % 5)"), queue: queue) { _ in })
                                ?? numbers.observe(.mutations, queue: queue) { _, _ in },
                            settings.observe(.mutations, queue: queue) { _, _ in },
                        ]
                        if round % 2 == 0 { tokens.forEach { $0.invalidate() } }
                    }
                }
            }
        }
        _ = queue.drain()
        names[0] = 1
        names[1] = 1
        #expect(pathCounted.value == 1)
        #expect(names.keyCellCount == 1)
        #expect(counted.value == mutations)
        #expect(keyCounted.value == (mutations + 2) / 3)
        #expect(numbers.attachedEdgeCount == 1)
        #expect(settings.attachedEdgeCount == 1)
        // Cells of keys come and go with their tokens; key 0's stayed for its tokens throughout.
        #expect(settings.keyCellCount == 1)
        withExtendedLifetime((numbers, settings, countToken, keyToken, pathToken)) {}
    }
}
