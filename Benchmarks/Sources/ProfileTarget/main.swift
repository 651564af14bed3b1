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

import Dispatch
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

/// W3 + W4: 100 batches of 100 tokens created (`*w3measuredCreate*`, W3), then released
/// (`*w4measuredEnd*`, W4); `*measured*` counts both.
func w3w4() {
    let model = Counter()
    var tokens: [ObservationToken] = []
    tokens.reserveCapacity(100)
    for _ in 0..<opaque(100) {
        w3measuredCreate(model, &tokens)
        w4measuredEnd(&tokens)
    }
}

@inline(never)
func w3measuredCreate(_ model: Counter, _ tokens: inout [ObservationToken]) {
    for _ in 0..<100 { tokens.append(model.observe(\.value, queue: queue) { _ in tally.count &+= 1 }) }
}

@inline(never)
func w4measuredEnd(_ tokens: inout [ObservationToken]) {
    tokens.removeAll(keepingCapacity: true)
}

/// W3 with a key path that is not a literal at the call site (a parameter): the key path
/// reaches `observe` as a value, so its closures keep it in a context.
func w3variable() {
    measuredCreateEndVariable(Counter(), keyPath: opaqueKeyPath(\Counter.value))
}

@inline(never)
func opaqueKeyPath(_ keyPath: KeyPath<Counter, Int>) -> KeyPath<Counter, Int> { keyPath }

@inline(never)
func measuredCreateEndVariable(_ model: Counter, keyPath: KeyPath<Counter, Int>) {
    var tokens: [ObservationToken] = []
    tokens.reserveCapacity(100)
    for _ in 0..<opaque(100) {
        for _ in 0..<100 { tokens.append(model.observe(keyPath, queue: queue) { _ in tally.count &+= 1 }) }
        tokens.removeAll(keepingCapacity: true)
    }
}

/// W6's measured part: 100 batches of 100 tokens created, then released.
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

/// R3: 1,000 tokens on one property, 10 ticks of 100 sets then a drain: every set after a
/// tick's first finds the 1,000 tokens pending already (issue 16: a further set in a tick is
/// O(1) however many tokens are pending). Count `*measuredSets*` and divide by 1,000 sets.
func r3() {
    let model = Counter()
    let tokens = (0..<1_000).map { _ in model.observe(\.value, queue: queue) { _ in tally.count &+= 1 } }
    r3measured(model)
    withExtendedLifetime(tokens) {}
}

func r3measured(_ model: Counter) {
    for tick in 0..<opaque(10) {
        r3measuredSets(model, from: tick * 100)
        precondition(queue.drain() == 1_000)  // not counted: `--toggle-collect='*measuredSets*'`
    }
}

@inline(never)
func r3measuredSets(_ model: Counter, from start: Int) {
    for value in start..<start + 100 { setValue(model, value + 1) }
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
    let tokens = (0..<1_000).map { _ in root.observe(.chain(chain), queue: queue) { _, value in tally.count &+= value | 1 } }
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

final class Sum: ObservableModel {
    @Observed var a = 0
    @Observed var b = 0
    @Observed var c = 0
    var sum: Int { a + b + c }
}

/// W9: a tracked token on a computed property over 3 `@Observed`; 1,000 × (set one, drain).
func w9() {
    let model = Sum()
    let token = model.observe(\.sum, queue: queue) { model in tally.count &+= model.sum | 1 }
    w9measured(model)
    withExtendedLifetime(token) {}
}

@inline(never)
func w9measured(_ model: Sum) {
    for change in 1...opaque(1_000) {
        switch change % 3 {
        case 0: model.a = change
        case 1: model.b = change
        default: model.c = change
        }
        precondition(queue.drain() == 1)
    }
}

final class CachedSum: ObservableModel {
    @Observed var input = 1
    @Computed({ (model: CachedSum) in model.input &* 2 }) var doubled: Int
}

/// W11: 100,000 reads of a valid cached `@Computed`, then as many of a plain `@Observed`.
func w11() {
    let model = CachedSum()
    blackHole(model.doubled)
    w11measuredComputedReads(model)
    w11measuredPlainReads(model)
    w11measuredInputSets(model)
}

/// 10,000 sets of the input of the unobserved (and, after the first, already invalid)
/// computed property.
@inline(never)
func w11measuredInputSets(_ model: CachedSum) {
    for value in 0..<opaque(10_000) { model.input = value }
}

@inline(never)
func w11measuredComputedReads(_ model: CachedSum) {
    var sink = 0
    for _ in 0..<opaque(100_000) { sink &+= model.doubled }
    blackHole(sink)
}

@inline(never)
func w11measuredPlainReads(_ model: CachedSum) {
    var sink = 0
    for _ in 0..<opaque(100_000) { sink &+= model.input }
    blackHole(sink)
}

final class OptionalRoot: ObservableModel {
    @Observed var a: OptionalMiddle? = OptionalMiddle()
}

final class OptionalMiddle: ObservableModel {
    @Observed var b: OptionalLeaf? = OptionalLeaf()
}

final class OptionalLeaf: ObservableModel {
    @Observed var c = 0
}

/// W10: 1,000 tracked tokens on `\.a?.b?.c`; 20 × (replace the middle, drain).
func w10() {
    let root = OptionalRoot()
    let middles = [root.a!, OptionalMiddle()]
    let tokens = (0..<1_000).map { _ in
        root.observe(\.a?.b?.c, queue: queue) { root in tally.count &+= (root.a?.b?.c ?? 0) | 1 }
    }
    w10measured(root, middles)
    withExtendedLifetime(tokens) {}
}

/// W10's peer row: the same path as a `KeyPathChain`, 1,000 tokens, 20 × (replace, drain).
func w10chain() {
    let root = OptionalRoot()
    let middles = [root.a!, OptionalMiddle()]
    let chain = KeyPathChain(\OptionalRoot.a).then(\.b).then(\.c)
    let tokens = (0..<1_000).map { _ in
        root.observe(.chain(chain), queue: queue) { _, value in tally.count &+= (value ?? 0) | 1 }
    }
    w10measured(root, middles)
    withExtendedLifetime(tokens) {}
}

@inline(never)
func w10measured(_ root: OptionalRoot, _ middles: [OptionalMiddle]) {
    for tick in 1...opaque(20) {
        root.a = middles[tick & 1]
        precondition(queue.drain() == 1_000)
    }
}

/// R1: 1,000,000 gets of a property that has no token (the getter's fast path).
func r1() {
    let model = Counter()
    blackHole(r1measured(model))
}

@inline(never)
func getValue(_ model: Counter) -> Int { model.value }

@inline(never)
func r1measured(_ model: Counter) -> Int {
    var sum = 0
    for _ in 0..<opaque(1_000_000) { sum &+= getValue(model) }
    return sum
}

/// W16: 100,000 ticks of (one set, drain, one `next()` of a `values(of:)` sequence), on a task.
func w16() {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await w16measured(Counter())
        done.signal()
    }
    done.wait()
}

@inline(never)
func w16measured(_ model: Counter) async {
    var iterator = model.values(of: \.value, includingCurrent: false, queue: queue).makeAsyncIterator()
    for value in 1...opaque(100_000) {
        setValue(model, value)
        queue.drain()
        let next = await iterator.next()
        precondition(next == value)
    }
}

/// W15: a one-way binding with `map` to a plain object; 1,000,000 sets, one drain; then 100
/// batches of 100 bindings created and released.
final class Plain {
    var value = 0
}

func w15() {
    let model = Counter()
    let target = Plain()
    let token = model.pipeline(of: \.value).map { $0 &* 2 }.bind(to: target, \.value, queue: queue)
    w15measuredSets(model)
    precondition(target.value == 2_000_000)
    withExtendedLifetime(token) {}
    w15measuredCreate(model, target)
}

@inline(never)
func w15measuredSets(_ model: Counter) {
    // (The marker call keeps the optimizer from merging this body with `w2measured`'s, which is
    // the same code: callgrind would then see a jump and count nothing here.)
    blackHole(15)
    for value in 1...opaque(1_000_000) { setValue(model, value) }
    precondition(queue.drain() == 1)
}

@inline(never)
func w15measuredCreate(_ model: Counter, _ target: Plain) {
    var tokens: [ObservationToken] = []
    tokens.reserveCapacity(100)
    for _ in 0..<opaque(100) {
        for _ in 0..<100 {
            tokens.append(model.pipeline(of: \.value).map { $0 &* 2 }.bind(to: target, \.value, queue: queue))
        }
        tokens.removeAll(keepingCapacity: true)
    }
}

switch CommandLine.arguments.dropFirst().first?.uppercased() {
case "R1": r1()
case "R2": r2()
case "R3": r3()
case "W16": w16()
case "W1": w1()
case "W2": w2()
case "W3", "W4": w3w4()
case "W3VAR": w3variable()
case "W5": w5()
case "W6": w6(live: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 1_000)
case "W8": w8()
case "W9": w9()
case "W10": w10()
case "W10CHAIN": w10chain()
case "W11": w11()
case "W12": w12(size: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 100_000)
case "W13": w13()
case "W14": w14()
case "W15": w15()
case "W17": w17(ticks: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 200)
case "W18": w18(count: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 100_000)
case "W19": w19()
case "W20": w20(ticks: Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 200)
default:
    let usage =
        "usage: ProfileTarget R1|R2|R3|W1|W2|W3|W4|W3var|W5|W6 [live]|W8|W9|W10|W10chain|W11|W12 [size]|W13|W14|W15|W16|W17 [ticks]|W18 [count]|W19|W20 [ticks]\n"
    _ = usage.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(64)
}
blackHole(tally.count)
