// Our side of the app-shaped workloads W17–W19 (the code lives in AppWorkloads, shared with
// PeerBench and PeerProfile). Under callgrind, divide the `*measured*` instructions by the
// operations: W17 by the sets (ticks × 5,000), W18 by the objects, W19 by the models (per order).

import AppWorkloads
import ObservationTokens

/// W17: `ticks` ticks of 5,000 sets over 1,000 models with 3 tokens each.
func w17(ticks: Int) {
    let sets = appSets(models: 1_000, count: 5_000 * ticks)
    let state = W17Ours(models: 1_000)
    state.measuredTicks(sets, perTick: 5_000)
    precondition(state.callbacks > 0)
    state.tearDown()
}

/// W18: one token on each of `count` fresh objects: create, set, deliver, end.
func w18(count: Int) {
    let cells = (0..<count).map { _ in OTCell() }
    precondition(measuredW18Ours(cells, queue: queue, tally: AppTally()) == count)
}

/// W19: 10,000 models with 3 live tokens each, models first; then 10,000 more, tokens first.
func w19() {
    var modelsFirst = W19Ours(models: 10_000, queue: queue)
    W19Ours.measuredModelsFirst(&modelsFirst)
    var tokensFirst = W19Ours(models: 10_000, queue: queue)
    W19Ours.measuredTokensFirst(&tokensFirst)
    precondition(queue.drain() == 0)
}

/// R2: 1,000,000 sets of an `@Observed` optional model reference (`owner: OTItem?`) that no
/// token observes, alternating between two objects and nil: the identity comparison and the
/// store, without any delivery.
func r2() {
    let item = OTItem()
    let others: [OTItem?] = [OTItem(), nil, OTItem()]
    r2measured(item, others)
    blackHole(item.owner == nil ? 0 : 1)
}

@inline(never)
func r2measured(_ item: OTItem, _ others: [OTItem?]) {
    for index in 0..<opaque(1_000_000) { setOwner(item, others[index % 3]) }
}

@inline(never)
func setOwner(_ item: OTItem, _ owner: OTItem?) { item.owner = owner }

/// W20: `ticks` ticks of 5,000 input sets over 1,000 models with a 3-deep computed chain and one
/// token each (on both inputs and the end of the chain), checked against the plan.
func w20(ticks: Int) {
    let plan = DerivedPlan(models: 1_000, perTick: 5_000, ticks: ticks)
    let state = W20Ours(models: 1_000)
    state.measuredTicks(plan)
    if let mismatch = derivedMismatch(state.report, expected: plan.changedModels, side: "ours") {
        fatalError(mismatch)
    }
    print("callbacks: \(state.report.callbacks)")
}
