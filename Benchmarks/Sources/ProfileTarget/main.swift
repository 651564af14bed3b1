// Our side of one PeerBench workload, alone, for instruction-level profiling:
//
//   swift build -c release --package-path Benchmarks --product ProfileTarget
//   valgrind --tool=callgrind --toggle-collect='*measured*' --callgrind-out-file=/tmp/cg.W2 \
//       Benchmarks/.build/release/ProfileTarget W2
//   callgrind_annotate /tmp/cg.W2 | head -40
//
// The sizes match one round of PeerBench's full run. Each workload's measured part is a
// non-inlined function whose name contains `measured`, so `--toggle-collect='*measured*'` counts
// only what PeerBench times (not the setup). Instruction counts repeat exactly run to run.

import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

final class Counter: ObservableModel {
    @Observed var value = 0
}

final class Root: ObservableModel {
    @Observed var middle = Middle()
}

final class Middle: ObservableModel {
    @Observed var leaf = Leaf()
}

final class Leaf: ObservableModel {
    @Observed var value = 0
}

/// `@unchecked Sendable`: callbacks run synchronously in `drain()` on the main thread only.
final class Tally: @unchecked Sendable {
    var count = 0
}

@inline(never) @_optimize(none)
func blackHole(_ value: Int) {}

@inline(never) @_optimize(none)
func opaque(_ value: Int) -> Int { value }

@inline(never)
func setValue(_ model: Counter, _ value: Int) { model.value = value }

let tally = Tally()
let queue = CoalescingQueue(target: .manual)

/// W1: 1,000,000 sets of a property that has no token.
func w1() {
    let model = Counter()
    w1measured(model)
    blackHole(model.value)
}

@inline(never)
func w1measured(_ model: Counter) {
    for value in 0..<opaque(1_000_000) { setValue(model, value) }
}

/// W2: 1,000,000 sets of an observed property, one drain.
func w2() {
    let model = Counter()
    let token = model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }
    w2measured(model)
    withExtendedLifetime(token) {}
}

@inline(never)
func w2measured(_ model: Counter) {
    for value in 1...opaque(1_000_000) { setValue(model, value) }
    precondition(queue.drain() == 1)
}

/// W3 + W4: 100 batches of 100 tokens created, then released.
func w3w4() {
    measuredCreateEnd(Counter())
}

/// 100 batches: create 100 tokens (W3), release them (W4). Also W6's measured part.
@inline(never)
func measuredCreateEnd(_ model: Counter) {
    var tokens: [ObservationToken] = []
    tokens.reserveCapacity(100)
    for _ in 0..<opaque(100) {
        for _ in 0..<100 { tokens.append(model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }) }
        tokens.removeAll(keepingCapacity: true)
    }
}

/// W5: 10,000 tokens on one property, 5 × (one set, drain).
func w5() {
    let model = Counter()
    let tokens = (0..<10_000).map { _ in model.observe(\.value, queue: queue) { _ in tally.count &+= 1 } }
    w5measured(model)
    withExtendedLifetime(tokens) {}
}

@inline(never)
func w5measured(_ model: Counter) {
    for tick in 1...opaque(5) {
        setValue(model, tick)
        precondition(queue.drain() == 10_000)
    }
}

/// W6: with `live` tokens on the property, 100 batches of 100 tokens created and released.
func w6(live: Int) {
    let model = Counter()
    let liveTokens = (0..<live).map { _ in model.observe(\.value, queue: queue) { _ in tally.count &+= 1 } }
    measuredCreateEnd(model)
    withExtendedLifetime(liveTokens) {}
}

/// W8: 1,000 tokens on `root.middle.leaf.value`; 20 × (replace the middle, drain).
func w8() {
    let root = Root()
    let middles = [root.middle, Middle()]
    let chain = KeyPathChain(\Root.middle).then(\.leaf).then(\.value)
    let tokens = (0..<1_000).map { _ in root.observe(chain, queue: queue) { _, value in tally.count &+= value | 1 } }
    w8measured(root, middles)
    withExtendedLifetime(tokens) {}
}

@inline(never)
func w8measured(_ root: Root, _ middles: [Middle]) {
    for tick in 1...opaque(20) {
        root.middle = middles[tick & 1]
        precondition(queue.drain() == 1_000)
    }
}

switch CommandLine.arguments.dropFirst().first?.uppercased() {
case "W1": w1()
case "W2": w2()
case "W3", "W4": w3w4()
case "W5": w5()
case "W6": w6(live: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 1_000)
case "W8": w8()
case "W12": w12(size: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 100_000)
case "W13": w13()
case "W14": w14()
default:
    let usage = "usage: ProfileTarget W1|W2|W3|W4|W5|W6 [live]|W8|W12 [size]|W13|W14\n"
    _ = usage.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(64)
}
blackHole(tally.count)
