// A small hand-rolled harness rather than ordo-one/benchmark 1.38.1.
//
// Why: the issue asks for ONE process run that prints ONE table with ours, every peer and the
// ratio side by side, plus `--check` against per-row targets. package-benchmark runs each
// benchmark through its `swift package benchmark` plugin and reports them separately (ratios
// would need a post-processing step), pulls in six more packages (argument parser, system,
// atomics, HdrHistogram, TextTable, malloc-interposer with the MallocInterposer trait) that
// roughly double a cold build on these 2-core machines, and its malloc counters count calls,
// not live bytes, so W7 would still need mallinfo2(). What we need is modest: a monotonic clock
// (ContinuousClock), a warm-up round, several measured rounds and their median, and opaque
// sinks so the optimizer can't delete the work. That is this file.

import CHeapStats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How big and how long a run is.
struct Settings {
    /// `--quick`: smaller sizes and fewer rounds, for a CI smoke run of a few seconds.
    var quick = false
    /// Count instructions with callgrind for the rows that have profiling cases: `--check`
    /// without `--quick` (unless `--wall-clock`), or `--instructions`.
    var countInstructions = false
    /// Workloads to run (`--only W2,W5`); empty means all.
    var only: Set<String> = []

    /// Measured rounds per case; the reported value is their median.
    var rounds: Int { quick ? 3 : 7 }
    /// Unmeasured rounds before the measured ones (caches, lazy statics, allocator arenas).
    var warmupRounds: Int { 1 }

    func size(full: Int, quick quickSize: Int) -> Int { quick ? quickSize : full }

    func runs(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
}

// MARK: - Opaque sinks

/// Consumes a value so the optimizer must compute it. `@_optimize(none)` keeps the body (and so
/// every call) from being analyzed away; `@inline(never)` keeps it out of the measured loop.
@inline(never) @_optimize(none)
func blackHole(_ value: Int) {}

/// Consumes an object reference (see `blackHole(_: Int)`).
@inline(never) @_optimize(none)
func blackHole(_ value: AnyObject?) {}

/// Returns its argument through a call the optimizer can't see into: sizes and start values
/// become run-time values, so loops can't be folded.
@inline(never) @_optimize(none)
func opaque(_ value: Int) -> Int { value }

// MARK: - Timing

let clock = ContinuousClock()

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}

/// Wall time of `body` on the monotonic clock.
@inline(__always)
func time(_ body: () -> Void) -> Duration {
    let start = clock.now
    body()
    return start.duration(to: clock.now)
}

func median(_ samples: [Double]) -> Double {
    precondition(!samples.isEmpty)
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    let value = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    spreads[value.bitPattern] = value == 0 ? 0 : (sorted.last! - sorted.first!) / value
    return value
}

/// The spread of the rounds behind every median computed so far, `(max − min) / median`, keyed
/// by the median's bits: the table looks up each row's two numbers here, so the workloads report
/// a median as a plain `Double` and nothing else. A number that is not a median (derived from
/// one, or counted) has no entry. `nonisolated(unsafe)`: `median` runs on one thread at a time
/// (the workloads that compute a median on a task wait for it on the main thread).
nonisolated(unsafe) var spreads: [UInt64: Double] = [:]

/// The spread of the rounds whose median is `value`; nil if `value` is not such a median.
func spread(of value: Double?) -> Double? {
    value.flatMap { spreads[$0.bitPattern] }
}

/// Runs `round` for the warm-up rounds, then for the measured rounds, and returns the median of
/// what the measured rounds returned (ns per operation).
func medianOfRounds(_ settings: Settings, rounds: Int? = nil, _ round: () -> Double) -> Double {
    for _ in 0..<settings.warmupRounds { _ = round() }
    return median((0..<(rounds ?? settings.rounds)).map { _ in round() })
}

/// Like `medianOfRounds`, for rounds that measure two things at once (create and end):
/// the median of each component separately.
func medianOfRounds2(_ settings: Settings, _ round: () -> (Double, Double)) -> (Double, Double) {
    for _ in 0..<settings.warmupRounds { _ = round() }
    let samples = (0..<settings.rounds).map { _ in round() }
    return (median(samples.map(\.0)), median(samples.map(\.1)))
}

/// Fails loudly when a benchmark didn't do the work it claims (a wrong callback count would
/// make every number in its row meaningless).
func verify(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        printError("PeerBench: verification failed: \(message())")
        exit(2)
    }
}

// MARK: - Memory

/// Bytes currently allocated by malloc in the main arena, including chunks served by mmap
/// (glibc's `mallinfo2()`). Call it on the main thread only: other threads may allocate from
/// other arenas.
func heapBytesInUse() -> Int {
    Int(cheapstats_heap_bytes_in_use())
}

/// Whether `heapBytesInUse()` means anything on this platform (glibc 2.33 or later).
var heapAccountingAvailable: Bool {
    cheapstats_heap_bytes_in_use() >= 0
}

// MARK: - Results

/// One line of the table: our number, one peer's number, and what the issue demands of them.
struct Row {
    enum Unit {
        case nanoseconds
        case bytes
    }

    /// What the ratio column shows for this row.
    enum RatioKind {
        /// peer / ours: how many times faster (or smaller) we are. Higher is better.
        case peerOverOurs
        /// ours / peer: used by W6, where the "peer" is our own cost at the smallest size.
        case oursOverPeer
        /// No ratio: the target is an absolute bound on our number (W8).
        case none
    }

    enum Target {
        case ratioAtLeast(Double)
        case ratioAtMost(Double)
        case oursAtMost(Double)

        var text: String {
            switch self {
            case .ratioAtLeast(let x): "≥ \(formatFactor(x))"
            case .ratioAtMost(let x): "≤ \(formatFactor(x))"
            case .oursAtMost(let x): "≤ \(formatNumber(x)) ns"
            }
        }
    }

    var workload: String
    var title: String
    var unit: Unit = .nanoseconds
    var ours: Double
    var peer: String
    /// Nil when the peer can't run here (say why in `note`).
    var peerValue: Double?
    var ratioKind: RatioKind = .peerOverOurs
    var target: Target?
    var note: String?
    /// The two sides as the profiling programs count them (callgrind); nil for rows measured by
    /// wall clock only (memory, scaling, absolute bounds, async workloads).
    var counted: CountPair? = nil
    /// Instructions per operation of our side and the peer's, when they were counted.
    var oursInstructions: Double? = nil
    var peerInstructions: Double? = nil

    /// The wall-clock ratio (medians of the rounds).
    var ratio: Double? { ratio(ours: ours, peer: peerValue) }

    /// The same ratio of instruction counts.
    var instructionRatio: Double? {
        oursInstructions.flatMap { ratio(ours: $0, peer: peerInstructions) }
    }

    /// Whether the target is decided on instruction counts (both sides counted) rather than on
    /// the wall-clock ratio.
    var decidedByInstructions: Bool {
        switch target {
        case .ratioAtLeast?, .ratioAtMost?: instructionRatio != nil
        case .oursAtMost?, nil: false
        }
    }

    /// The ratio the target is decided on: instructions when both sides were counted, else
    /// wall clock.
    var decidingRatio: Double? { decidedByInstructions ? instructionRatio : ratio }

    private func ratio(ours: Double, peer: Double?) -> Double? {
        guard let peer else { return nil }
        switch ratioKind {
        case .peerOverOurs: return peer / ours
        case .oursOverPeer: return ours / peer
        case .none: return nil
        }
    }

    /// Nil when there is no target or it can't be evaluated (peer unavailable).
    var passes: Bool? {
        guard let target else { return nil }
        switch target {
        case .ratioAtLeast(let bound): return decidingRatio.map { $0 >= bound }
        case .ratioAtMost(let bound): return decidingRatio.map { $0 <= bound }
        case .oursAtMost(let bound): return ours <= bound
        }
    }
}

func formatNumber(_ value: Double) -> String {
    if value >= 100 { return String(Int(value.rounded())) }
    if value >= 10 { return String(format1(value)) }
    return format2(value)
}

func formatFactor(_ value: Double) -> String {
    (value >= 10 ? format1(value) : format2(value)) + "×"
}

private func format1(_ value: Double) -> String { fixed(value, digits: 1) }
private func format2(_ value: Double) -> String { fixed(value, digits: 2) }

/// `value` with `digits` decimals, without Foundation's `String(format:)`.
private func fixed(_ value: Double, digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale)
    var fraction = String(abs(scaled) % Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return (scaled < 0 && whole == 0 ? "-" : "") + "\(whole).\(fraction)"
}

/// `1000000` → `1,000,000`.
func grouped(_ value: Int) -> String {
    var digits = String(value.magnitude)
    var groups: [Substring] = []
    while digits.count > 3 {
        groups.insert(digits.suffix(3), at: 0)
        digits.removeLast(3)
    }
    groups.insert(Substring(digits), at: 0)
    return (value < 0 ? "-" : "") + groups.joined(separator: ",")
}

/// Writes a line to standard error (progress and failures; the table goes to standard output).
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
