import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// W8: 1,000 tokens watch the depth-3 path `root.middle.leaf.value`; replace the middle object
/// (`root.middle = other`, where `other` has its own leaf) and deliver. Reported per token.
///
/// Each token moves 2 of its 3 edges (from the old middle and leaf to the new ones) and runs its
/// callback once. Two middle objects take turns, so every set is a real change.
/// - ours: `KeyPathChain(\.middle).then(\.leaf).then(\.value)`, `.manual` queue, `drain()`;
/// - OpenCombine: `$middle.map(\.$leaf).switchToLatest().map(\.$value).switchToLatest().sink`,
///   the Combine way to follow a path: replacing the middle re-subscribes the inner publishers
///   and the sink runs once;
/// - Observation: `withObservationTracking { root.middle.leaf.value }`; the set fires every
///   handler; the end of the tick runs the callback and re-registers, which reads the new path.
func runW8(_ settings: Settings) -> [Row] {
    let tokenCount = opaque(1_000)
    let ticks = opaque(settings.size(full: 20, quick: 4))
    let title = "replace the middle of a depth-3 path watched by \(grouped(tokenCount)) tokens, deliver"

    // Ours.
    let queue = CoalescingQueue(target: .manual)
    let root = OTRoot()
    let middles = [root.middle, OTMiddle()]
    let chain = KeyPathChain(\OTRoot.middle).then(\.leaf).then(\.value)
    let tally = Tally()
    let tokens = (0..<tokenCount).map { _ in root.observe(.chain(chain), queue: queue) { _, value in tally.count &+= value | 1 }
    }
    var turn = 0
    let oursNs = perToken(settings, ticks: ticks, tokens: tokenCount) {
        turn &+= 1
        root.middle = middles[turn & 1]
        verify(queue.drain() == tokenCount, "W8 ours: one callback per token")
    }
    verify(root.observerCount(of: \.middle) == tokenCount, "W8 ours: tokens still attached")
    withExtendedLifetime(tokens) {}

    // OpenCombine switchToLatest chain.
    let combineRoot = CombineRoot()
    let combineMiddles = [combineRoot.middle, CombineMiddle()]
    let combineTally = Tally()
    let cancellables = (0..<tokenCount).map { _ in
        combineRoot.$middle.map(\.$leaf).switchToLatest().map(\.$value).switchToLatest()
            .sink { value in combineTally.count &+= value | 1 }
    }
    var sunk = combineTally.count
    turn = 0
    let combineNs = perToken(settings, ticks: ticks, tokens: tokenCount) {
        turn &+= 1
        combineRoot.middle = combineMiddles[turn & 1]
        verify(combineTally.count - sunk == tokenCount, "W8 OpenCombine: one sink call per chain")
        sunk = combineTally.count
    }
    withExtendedLifetime(cancellables) {}

    var appleNs: Double?
    #if canImport(Observation)
        let appleRoot = AppleRoot()
        let appleMiddles = [appleRoot.middle, AppleMiddle()]
        let fired = Tally()
        let appleTally = Tally()
        func arm() {
            withObservationTracking {
                blackHole(appleRoot.middle.leaf.value)
            } onChange: {
                fired.count &+= 1
            }
        }
        for _ in 0..<tokenCount { arm() }
        turn = 0
        appleNs = perToken(settings, ticks: ticks, tokens: tokenCount) {
            turn &+= 1
            appleRoot.middle = appleMiddles[turn & 1]
            verify(fired.count == tokenCount, "W8 Observation: one onChange per registration")
            for _ in 0..<fired.count {
                appleTally.count &+= appleRoot.middle.leaf.value | 1
                arm()
            }
            fired.count = 0
        }
    #endif

    return [
        Row(
            workload: "W8", title: title, ours: oursNs, peer: "target: ≤ 1 µs per token", ratioKind: .none,
            target: .oursAtMost(1_000), note: "ns per token retarget, callback included"),
        Row(
            workload: "W8", title: title, ours: oursNs, peer: "OpenCombine `switchToLatest` chain", peerValue: combineNs
        ),
        Row(
            workload: "W8", title: title, ours: oursNs, peer: "Observation, re-armed per tick", peerValue: appleNs,
            note: appleNs == nil ? appleUnavailable : nil),
    ]
}

/// ns per token: `ticks` replacements per round, each retargeting and delivering `tokens`.
@inline(__always)
private func perToken(_ settings: Settings, ticks: Int, tokens: Int, _ tick: () -> Void) -> Double {
    medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<ticks { tick() }
        }
        return elapsed.nanoseconds / Double(ticks * tokens)
    }
}
