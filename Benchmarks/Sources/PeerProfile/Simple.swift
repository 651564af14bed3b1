// The peers' side of the single-object workloads whose targets PeerBench --check decides on
// instruction counts (W1–W5, W14, W15), shaped like PeerBench's timed loops and like
// ProfileTarget's cases for ours. Each measured function's name contains `measured` and names its
// flavour, so `--toggle-collect` picks one (see Benchmarks/README.md, "Profiling").

import AppWorkloads
import Foundation
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

/// `@unchecked Sendable`: every callback here runs synchronously on the main thread.
final class ProfileTally: @unchecked Sendable {
    var count = 0
}

@inline(never) @_optimize(none)
func profileOpaque(_ value: Int) -> Int { value }

// MARK: - W1: a set nobody observes; W2: a set with one subscriber

final class PlainValue {
    var value = 0
}

@inline(never)
func setPlainValue(_ model: PlainValue, _ value: Int) { model.value = value }

@inline(never)
func w1measuredPlain(_ model: PlainValue, sets: Int) {
    for value in 0..<profileOpaque(sets) { setPlainValue(model, value) }
}

@inline(never)
func setCombineValue(_ model: ProfileCombineCounter, _ value: Int) { model.value = value }

/// W2's OpenCombine peer: every set runs the sink.
@inline(never)
func w2measuredCombine(_ model: ProfileCombineCounter, sets: Int, tally: ProfileTally) {
    for value in 1...profileOpaque(sets) { setCombineValue(model, value) }
    precondition(tally.count == sets + 1)
}

#if canImport(Observation)
    @Observable
    final class ProfileAppleCounter {
        var value = 0
    }

    @inline(never)
    func setAppleValue(_ model: ProfileAppleCounter, _ value: Int) { model.value = value }

    @inline(never)
    func w1measuredApple(_ model: ProfileAppleCounter, sets: Int) {
        for value in 0..<profileOpaque(sets) { setAppleValue(model, value) }
    }
#endif

// MARK: - W3 and W4: create a registration, end it (batches of 100)

final class ProfileNotifying {
    static let didChange = Notification.Name("PeerProfile.ProfileNotifying.didChange")
    let center = NotificationCenter()
}

@inline(never)
func w3measuredCreateNotification(
    _ model: ProfileNotifying, _ observers: inout [any NSObjectProtocol], tally: ProfileTally
) {
    for _ in 0..<100 {
        observers.append(
            model.center.addObserver(forName: ProfileNotifying.didChange, object: model, queue: nil) { _ in
                tally.count &+= 1
            })
    }
}

@inline(never)
func w4measuredEndNotification(_ model: ProfileNotifying, _ observers: inout [any NSObjectProtocol]) {
    for observer in observers { model.center.removeObserver(observer) }
    observers.removeAll(keepingCapacity: true)
}

@inline(never)
func w3measuredCreateCombine(
    _ model: ProfileCombineCounter, _ cancellables: inout [AnyCancellable], tally: ProfileTally
) {
    for _ in 0..<100 { cancellables.append(model.$value.sink { _ in tally.count &+= 1 }) }
}

@inline(never)
func w4measuredEndCombine(_ cancellables: inout [AnyCancellable]) {
    cancellables.removeAll(keepingCapacity: true)
}

/// W3/W4 for NotificationCenter: `batches` × (100 `addObserver`, then 100 `removeObserver`).
func w3w4Notification(batches: Int) {
    let model = ProfileNotifying()
    let tally = ProfileTally()
    var observers: [any NSObjectProtocol] = []
    observers.reserveCapacity(100)
    for _ in 0..<profileOpaque(batches) {
        w3measuredCreateNotification(model, &observers, tally: tally)
        w4measuredEndNotification(model, &observers)
    }
}

/// W3/W4 for OpenCombine: `batches` × (100 `$value.sink`, then 100 `AnyCancellable`s released).
func w3w4Combine(batches: Int) {
    let model = ProfileCombineCounter()
    let tally = ProfileTally()
    var cancellables: [AnyCancellable] = []
    cancellables.reserveCapacity(100)
    for _ in 0..<profileOpaque(batches) {
        w3measuredCreateCombine(model, &cancellables, tally: tally)
        w4measuredEndCombine(&cancellables)
    }
    precondition(tally.count == batches * 100)  // each sink receives the current value once
}

// MARK: - W5: fan-out

/// W5's OpenCombine peer: 10,000 sinks on a `PassthroughSubject`, `ticks` sends.
@inline(never)
func w5measuredCombine(_ subject: PassthroughSubject<Int, Never>, ticks: Int, fanOut: Int, tally: ProfileTally) {
    for tick in 1...profileOpaque(ticks) {
        subject.send(tick)
        precondition(tally.count == tick * fanOut)
    }
}

func w5Combine(ticks: Int) {
    let fanOut = 10_000
    let subject = PassthroughSubject<Int, Never>()
    let tally = ProfileTally()
    let sinks = (0..<fanOut).map { _ in subject.sink { _ in tally.count &+= 1 } }
    w5measuredCombine(subject, ticks: ticks, fanOut: fanOut, tally: tally)
    withExtendedLifetime(sinks) {}
}

// MARK: - W14: appends in one tick, one observer

final class ProfileCombineList {
    @Published var items: [Int]
    init(count: Int) { items = Array(0..<count) }
}

@inline(never)
func appendProfileCombine(_ model: ProfileCombineList, _ value: Int) { model.items.append(value) }

/// One tick of W14's OpenCombine peer: 1,000 appends, each copying and delivering the array.
@inline(never)
func w14measuredCombine(_ model: ProfileCombineList) {
    for value in 0..<profileOpaque(1_000) { appendProfileCombine(model, value) }
}

func w14Combine(ticks: Int) {
    let model = ProfileCombineList(count: 1_000)
    let tally = ProfileTally()
    let cancellable = model.$items.sink { items in tally.count &+= items.count }
    for _ in 0..<profileOpaque(ticks) {
        w14measuredCombine(model)
        model.items.removeLast(1_000)
    }
    withExtendedLifetime(cancellable) {}
}

// MARK: - W15: a binding with `map`, per set

/// W15's OpenCombine peer for sets: `assign` writes the target on every set.
@inline(never)
func w15measuredSetsCombine(_ model: ProfileCombineCounter, _ target: ProfilePlainTarget, sets: Int) {
    for value in 1...profileOpaque(sets) { setCombineValue(model, value) }
    precondition(target.value == sets &* 2)
}
