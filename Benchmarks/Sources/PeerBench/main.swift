// PeerBench: ObservationTokens against its peers, in one run, as one Markdown table.
//
//   swift run -c release --package-path Benchmarks PeerBench [--quick] [--check] [--only W1,W5]
//
// See Benchmarks/README.md for what each workload does.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    usage: PeerBench [--quick] [--check] [--instructions | --wall-clock] [--only W1,W2,...]
      --quick          small sizes, 3 rounds: a smoke run of a few seconds (for CI); no valgrind
      --check          compare every ratio with the issue's targets; exit 1 naming each miss.
                       Where valgrind is installed (and without --quick), a row whose two sides
                       the profiling programs count is decided on callgrind instruction counts
      --instructions   count instructions as --check does, without checking
      --wall-clock     decide --check on wall-clock ratios only
      --only           run only these workloads
    """

var settings = Settings()
var check = false
var instructions: Bool?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": settings.quick = true
    case "--check": check = true
    case "--instructions": instructions = true
    case "--wall-clock": instructions = false
    case "--only":
        guard let list = arguments.popFirst() else {
            printError(usage)
            exit(64)
        }
        settings.only = Set(list.split(separator: ",").map { $0.uppercased() })
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        printError("unknown argument \(argument)\n" + usage)
        exit(64)
    }
}
settings.countInstructions = instructions ?? (check && !settings.quick)

let workloads: [(id: String, run: (Settings) -> [Row])] = [
    ("W1", runW1), ("W2", runW2), ("W3", runW3), ("W4", runW4),
    ("W5", runW5), ("W6", runW6), ("W7", runW7), ("W8", runW8),
    ("W9", runW9), ("W10", runW10),
    ("W11", runW11),
    ("W16", runW16),
    ("W15", runW15),
    ("W12", runW12),
    ("W13", runW13),
    ("W14", runW14),
    ("W17", runW17), ("W18", runW18), ("W19", runW19),
    ("W20", runW20),
]

var rows: [Row] = []
let started = clock.now
for (id, run) in workloads where settings.runs(id) {
    printError("PeerBench: running \(id)…")
    let workloadStart = clock.now
    rows += run(settings)
    printError("PeerBench: \(id) took \(formatNumber(workloadStart.duration(to: clock.now).nanoseconds / 1e9)) s")
}

// MARK: - Instruction counts

/// Why the rows are not decided on instruction counts, if they aren't.
var countingNote: String?
/// Rows whose counts failed although counting works here (a profiling case that crashed or
/// counted nothing): `--check` stops on them rather than decide them on wall clock unnoticed.
var countFailures: [Row] = []
if settings.countInstructions {
    do {
        let counter = try InstructionCounter.make()
        for index in rows.indices {
            // A peer that can't run here (Observation on an older toolchain) has no case either.
            guard let pair = rows[index].counted, rows[index].peerValue != nil else { continue }
            rows[index].oursInstructions = counter.perOperation(pair.ours)
            rows[index].peerInstructions = counter.perOperation(pair.peer)
            if rows[index].instructionRatio == nil { countFailures.append(rows[index]) }
        }
    } catch {
        countingNote = "instructions not counted: \(error.reason); every target is decided on wall clock"
        printError("PeerBench: " + countingNote!)
    }
}
let counting = rows.contains { $0.oursInstructions != nil }
let totalSeconds = started.duration(to: clock.now).nanoseconds / 1e9

// MARK: - Table

func cell(_ value: Double, _ unit: Row.Unit) -> String {
    guard value.isFinite else { return "n/a" }
    switch unit {
    case .nanoseconds: return formatNumber(value) + " ns"
    case .bytes: return formatNumber(value) + " B"
    }
}

func loadAverage() -> String {
    guard let file = fopen("/proc/loadavg", "r") else { return "unknown" }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 64)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "unknown" }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// `12%`: a spread of the rounds as a percentage of their median.
func percent(_ value: Double?) -> String {
    guard let value else { return "—" }
    return String(Int((value * 100).rounded())) + "%"
}

/// `3,300`: instructions per operation.
func instructionCell(_ value: Double?) -> String {
    guard let value else { return "" }
    return value >= 100 ? grouped(Int(value.rounded())) : formatNumber(value)
}

var notes: [String] = []
var lines: [String] = []
if counting {
    lines.append(
        "| Workload | ObservationTokens | Peer | Peer result | Wall ratio | Spread | Instructions: ours | peer | Instruction ratio | Target | Result |"
    )
    lines.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
} else {
    lines.append("| Workload | ObservationTokens | Peer | Peer result | Ratio | Spread | Target | Result |")
    lines.append("|---|---:|---|---:|---:|---:|---|---|")
}
var previousTitle = ""
for row in rows {
    let title = row.title == previousTitle ? "″" : "**\(row.workload)** \(row.title)"
    previousTitle = row.title
    var peer = row.peer
    if let note = row.note {
        notes.append(note)
        peer += " [\(notes.count)]"
    }
    let peerCell = row.peerValue.map { cell($0, row.unit) } ?? (row.ratioKind == .none ? "—" : "unavailable")
    let ratio = row.ratio.map(formatFactor) ?? "—"
    let spreadCell = "\(percent(spread(of: row.ours))) / \(percent(spread(of: row.peerValue)))"
    var result: String =
        switch row.passes {
        case true?: "pass"
        case false?: "**MISS**"
        case nil: row.target == nil ? "info" : "not checked"
        }
    if counting, row.passes != nil {
        result += row.decidedByInstructions ? " (instr.)" : " (wall)"
    }
    if counting {
        let instructionRatio = row.instructionRatio.map(formatFactor) ?? ""
        lines.append(
            "| \(title) | \(cell(row.ours, row.unit)) | \(peer) | \(peerCell) | \(ratio) | \(spreadCell) | "
                + "\(instructionCell(row.oursInstructions)) | \(instructionCell(row.peerInstructions)) | "
                + "\(instructionRatio) | \(row.target?.text ?? "") | \(result) |")
    } else {
        lines.append(
            "| \(title) | \(cell(row.ours, row.unit)) | \(peer) | \(peerCell) | \(ratio) | \(spreadCell) | \(row.target?.text ?? "") | \(result) |"
        )
    }
}

let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
print("### PeerBench (\(settings.quick ? "quick" : "full") run)")
print()
print(
    "Median of \(settings.rounds) rounds after \(settings.warmupRounds) warm-up round; \(cores) cores; "
        + "load average at the end \(loadAverage()); \(formatNumber(totalSeconds)) s in all.")
print(
    "Ratio = peer / ours (higher is better) unless a note says otherwise. "
        + "Spread = (slowest − fastest round) / median, ours / peer.")
if counting {
    print(
        "Instructions per operation: callgrind, `--toggle-collect` on the measured functions of `ProfileTarget` (ours) and "
            + "`PeerProfile` (peers). A target is decided on the instruction ratio where both sides were counted (instr.), "
            + "else on the wall-clock ratio (wall).")
} else if let countingNote {
    print(countingNote.prefix(1).uppercased() + countingNote.dropFirst() + ".")
}
print()
for line in lines { print(line) }
if !notes.isEmpty {
    print()
    for (index, note) in notes.enumerated() { print("\(index + 1). \(note)") }
}

// MARK: - Check

if check {
    if !countFailures.isEmpty {
        print()
        for row in countFailures {
            print("check: could not count \(row.workload) \(row.title) vs \(row.peer) (see standard error)")
        }
        exit(2)
    }
    let misses = rows.filter { $0.passes == false }
    let unchecked = rows.filter { $0.target != nil && $0.passes == nil }
    print()
    for row in unchecked {
        print("not checked: \(row.workload) \(row.title) vs \(row.peer): \(row.note ?? "no peer result")")
    }
    let decided = rows.filter { $0.passes != nil }
    let byInstructions = decided.filter(\.decidedByInstructions).count
    let how = "\(byInstructions) decided on instruction counts, \(decided.count - byInstructions) on wall clock"
    if misses.isEmpty {
        print("check: all \(decided.count) targets met (\(how))")
    } else {
        print("check: \(misses.count) of \(decided.count) target(s) missed (\(how)):")
        for row in misses {
            let got: String =
                if case .oursAtMost = row.target { cell(row.ours, row.unit) } else {
                    (row.decidingRatio.map(formatFactor) ?? "?")
                        + (row.decidedByInstructions
                            ? " in instructions (wall clock \(row.ratio.map(formatFactor) ?? "?"))" : "")
                }
            print("  MISS \(row.workload) \(row.title) vs \(row.peer): \(got), target \(row.target!.text)")
        }
        exit(1)
    }
}
