import ObservationTokens

// MARK: - Models

final class OTSynthetic: ObservableModel {
    @Observed var input = 1
    @Observed var items = [Int](repeating: 1, count: 10_000)
    /// Cheap to compute.
    @Computed({ (model: OTSynthetic) in model.input &* 2 }) var doubled: Int
    /// Expensive to compute: O(10,000).
    @Computed({ (model: OTSynthetic) in model.items.reduce(model.input, &+) }) var total: Int
}

final class OTPlainInput: ObservableModel {
    @Observed var input = 1
}

/// Only the cheap computed property over `input`.
final class OTCheapSynthetic: ObservableModel {
    @Observed var input = 1
    @Computed({ (model: OTCheapSynthetic) in model.input &* 2 }) var doubled: Int
}

// MARK: - W11

/// W11: `@Computed` costs.
///
/// - a read of a valid cached computed property, against a read of a plain `@Observed` one
///   (target: at most 3×);
/// - a change of the input of an unobserved computed property whose computation costs
///   O(10,000), against a set of an `@Observed` property nothing depends on: the set marks the
///   value invalid and computes nothing, so its cost does not depend on the computation.
func runW11(_ settings: Settings) -> [Row] {
    let reads = opaque(settings.size(full: 100_000, quick: 10_000))
    let model = OTSynthetic()
    let plain = OTPlainInput()
    blackHole(model.doubled)
    var sink = 0
    let computedNs = perOperation(settings, count: reads) { sink &+= model.doubled }
    let plainNs = perOperation(settings, count: reads) { sink &+= plain.input }
    blackHole(sink)

    let sets = opaque(settings.size(full: 10_000, quick: 1_000))
    blackHole(model.total)  // computed once: its dependency edges are in place
    var next = 0
    let invalidateNs = perOperation(settings, count: sets) {
        next &+= 1
        model.input = next
    }
    verify(model.total == 10_000 &+ next, "W11: the total is current after the sets")
    let cheap = OTCheapSynthetic()
    blackHole(cheap.doubled)
    let cheapSetNs = perOperation(settings, count: sets) {
        next &+= 1
        cheap.input = next
    }
    verify(cheap.doubled == next &* 2, "W11: the cheap value is current after the sets")
    let plainSetNs = perOperation(settings, count: sets) {
        next &+= 1
        plain.input = next
    }

    return [
        Row(
            workload: "W11", title: "read of a valid cached `@Computed` property, \(grouped(reads)) reads",
            ours: computedNs, peer: "plain `@Observed` read", peerValue: plainNs, ratioKind: .oursOverPeer,
            target: .ratioAtMost(3),
            counted: CountPair(
                ours: .ours("W11", function: "*w11measuredComputedReads*", operations: 100_000),
                peer: .ours("W11", function: "*w11measuredPlainReads*", operations: 100_000))),
        Row(
            workload: "W11",
            title:
                "set of the input of an unobserved `@Computed` whose computation is O(10,000), \(grouped(sets)) sets",
            ours: invalidateNs, peer: "set of an `@Observed` nothing depends on", peerValue: plainSetNs,
            ratioKind: .oursOverPeer,
            note: "marks the value invalid; nothing is computed until the next read"),
        Row(
            workload: "W11",
            title:
                "set of the input of an unobserved `@Computed` whose computation is O(10,000), \(grouped(sets)) sets",
            ours: invalidateNs, peer: "same, computation O(1)", peerValue: cheapSetNs, ratioKind: .oursOverPeer,
            note: "≈ 1× means the set's cost does not depend on the computation: O(1)"),
    ]
}

private func perOperation(_ settings: Settings, count: Int, _ operation: () -> Void) -> Double {
    medianOfRounds(settings) {
        let elapsed = time {
            for _ in 0..<count { operation() }
        }
        return elapsed.nanoseconds / Double(count)
    }
}
