import ObservationTokens

#if canImport(Observation)
    import Observation
#endif
#if canImport(Dispatch)
    import Dispatch
#endif

// MARK: - Models

final class OTSum: ObservableModel {
    @Observed var a = 0
    @Observed var b = 0
    @Observed var c = 0
    var sum: Int { a + b + c }
}

final class OTOptionalRoot: ObservableModel {
    @Observed var a: OTOptionalMiddle? = OTOptionalMiddle()
}

final class OTOptionalMiddle: ObservableModel {
    @Observed var b: OTOptionalLeaf? = OTOptionalLeaf()
}

final class OTOptionalLeaf: ObservableModel {
    @Observed var c = 0
}

#if canImport(Observation)
    /// `@unchecked Sendable`: `Observations` captures the model in a `@Sendable` closure; W9 hands
    /// it to one task and waits for it, so no two threads touch it at once.
    @Observable
    final class AppleSum: @unchecked Sendable {
        var a = 0
        var b = 0
        var c = 0
        var sum: Int { a + b + c }
    }
#endif

// MARK: - W9

/// W9: a token on a computed property over 3 `@Observed` properties; 1,000 changes, each in its
/// own tick and delivered. Reported per delivered change.
///
/// - ours: `observe(\.sum)`, a tracked token (`.manual` queue, set one of the three, `drain()`);
///   each delivery re-evaluates `sum` and finds the same 3 dependencies;
/// - Observation: `withObservationTracking { model.sum } onChange:`, re-armed after every change
///   (read the value, register again), which is what a continuous observation costs with it;
/// - `Observations { model.sum }`: one change awaited at a time, from a task (information).
func runW9(_ settings: Settings) -> [Row] {
    let changes = opaque(settings.size(full: 1_000, quick: 200))
    let title = "token on a computed property over 3 `@Observed`, \(grouped(changes)) changes, each delivered"

    let queue = CoalescingQueue(target: .manual)
    let model = OTSum()
    let tally = Tally()
    let token = model.observe(\.sum, queue: queue) { model in tally.count &+= model.sum | 1 }
    var next = 0
    let oursNs = perChange(settings, changes: changes) {
        next &+= 1
        switch next % 3 {
        case 0: model.a = next
        case 1: model.b = next
        default: model.c = next
        }
        verify(queue.drain() == 1, "W9 ours: one delivery per change")
    }
    withExtendedLifetime(token) {}

    var appleNs: Double?
    var observationsNs: Double?
    #if canImport(Observation)
        let appleModel = AppleSum()
        let fired = Tally()
        let appleTally = Tally()
        func arm() {
            withObservationTracking {
                blackHole(appleModel.sum)
            } onChange: {
                fired.count &+= 1
            }
        }
        arm()
        next = 0
        appleNs = perChange(settings, changes: changes) {
            next &+= 1
            switch next % 3 {
            case 0: appleModel.a = next
            case 1: appleModel.b = next
            default: appleModel.c = next
            }
            verify(fired.count == 1, "W9 Observation: one onChange per change")
            fired.count = 0
            appleTally.count &+= appleModel.sum | 1
            arm()
        }
        observationsNs = measureObservations(settings, changes: changes)
    #endif

    return [
        Row(
            workload: "W9", title: title, ours: oursNs, peer: "Observation, re-armed per change", peerValue: appleNs,
            target: .ratioAtLeast(5), note: appleNs == nil ? appleUnavailable : nil,
            counted: CountPair(ours: .ours("W9", operations: 1_000), peer: .peer("W9-observation", operations: 1_000))),
        Row(
            workload: "W9", title: title, ours: oursNs, peer: "`Observations`, one change awaited at a time",
            peerValue: observationsNs,
            note: observationsNs == nil
                ? "`Observations` needs Swift 6.2's Observation module"
                : "set, then await the next element, from a task"),
    ]
}

#if canImport(Observation)
    /// ns per change with `Observations`: a task sets a property and awaits the next element,
    /// `changes` times per round. The main thread waits on a semaphore.
    private func measureObservations(_ settings: Settings, changes: Int) -> Double? {
        guard #available(macOS 26, iOS 26, *) else { return nil }
        let model = AppleSum()
        return medianOfRounds(settings) {
            let done = DispatchSemaphore(value: 0)
            let result = ResultBox()
            Task {
                let sequence = Observations { model.sum }
                var iterator = sequence.makeAsyncIterator()
                _ = await iterator.next()  // the current value
                let elapsed = await timeAsync {
                    for step in 1...changes {
                        model.a &+= step
                        guard let value = await iterator.next() else { break }
                        blackHole(value)
                    }
                }
                result.value = elapsed.nanoseconds / Double(changes)
                done.signal()
            }
            done.wait()
            return result.value
        }
    }

    /// `@unchecked Sendable`: written by the task before it signals, read after the wait.
    private final class ResultBox: @unchecked Sendable {
        var value = 0.0
    }

    private func timeAsync(_ body: () async -> Void) async -> Duration {
        let start = clock.now
        await body()
        return start.duration(to: clock.now)
    }
#endif

// MARK: - W10

/// W10: 1,000 tracked tokens on the composed optional key path `\.a?.b?.c`; replace the middle
/// object (two take turns) and deliver. Reported per token, next to the same path as a
/// `KeyPathChain` measured in the same run (W8's mechanism, on this optional path).
///
/// Each tracked delivery re-evaluates the key path once, attaching the edges of the 2 storages
/// it reads for the first time as it reads them, and detaches the 2 it no longer reads.
func runW10(_ settings: Settings) -> [Row] {
    let tokenCount = opaque(1_000)
    let ticks = opaque(settings.size(full: 20, quick: 4))
    let title = "replace the middle of `\\.a?.b?.c` watched by \(grouped(tokenCount)) tracked tokens, deliver"

    func measure(_ observe: (OTOptionalRoot, CoalescingQueue, Tally) -> ObservationToken) -> Double {
        let queue = CoalescingQueue(target: .manual)
        let root = OTOptionalRoot()
        let middles = [root.a!, OTOptionalMiddle()]
        let tally = Tally()
        let tokens = (0..<tokenCount).map { _ in observe(root, queue, tally) }
        var turn = 0
        let ns = medianOfRounds(settings) {
            let elapsed = time {
                for _ in 0..<ticks {
                    turn &+= 1
                    root.a = middles[turn & 1]
                    verify(queue.drain() == tokenCount, "W10: one callback per token")
                }
            }
            return elapsed.nanoseconds / Double(ticks * tokenCount)
        }
        verify(middles[turn & 1].b!.observerCount(of: \.c) == tokenCount, "W10: tokens follow the new middle")
        verify(middles[(turn + 1) & 1].b!.observerCount(of: \.c) == 0, "W10: the old middle is left")
        withExtendedLifetime(tokens) {}
        return ns
    }

    let trackedNs = measure { root, queue, tally in
        root.observe(\.a?.b?.c, queue: queue) { root in tally.count &+= (root.a?.b?.c ?? 0) | 1 }
    }
    // The same dependencies read by a tracking closure. (The key path above is applied as direct
    // getter calls too: the inlinable `observe` hands the literal to a closure the optimizer
    // moves it into.)
    let closureNs = measure { root, queue, tally in
        root.observe(queue: queue) { root in tally.count &+= (root.a?.b?.c ?? 0) | 1 }
    }
    let chain = KeyPathChain(\OTOptionalRoot.a).then(\.b).then(\.c)
    let chainNs = measure { root, queue, tally in
        root.observe(.chain(chain), queue: queue) { _, value in tally.count &+= (value ?? 0) | 1 }
    }
    return [
        Row(
            workload: "W10", title: title, ours: trackedNs, peer: "the same path as a `KeyPathChain` (W8's way)",
            peerValue: chainNs, ratioKind: .oursOverPeer, target: .ratioAtMost(2),
            note: "ratio = tracked / chain (lower is better)",
            counted: CountPair(ours: .ours("W10", operations: 20_000), peer: .ours("W10CHAIN", operations: 20_000))),
        Row(
            workload: "W10", title: title, ours: closureNs, peer: "the same path as a `KeyPathChain` (W8's way)",
            peerValue: chainNs, ratioKind: .oursOverPeer,
            note: "ours = a tracking closure `observe { $0.a?.b?.c }` instead of the key path; ratio = tracked / chain"),
    ]
}

/// ns per change: `changes` single-change ticks per round.
@inline(__always)
private func perChange(_ settings: Settings, changes: Int, _ tick: () -> Void) -> Double {
    medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<changes { tick() }
        }
        return elapsed.nanoseconds / Double(changes)
    }
}
