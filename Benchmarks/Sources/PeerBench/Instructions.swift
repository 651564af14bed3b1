// Instruction counts for the gate: `PeerBench --check` decides a row's target on callgrind
// instruction counts of both sides where valgrind is present, and prints the wall-clock ratio
// beside them. Wall-clock medians on a shared machine move by tens of percent from run to run;
// instruction counts of the same code with the same inputs repeat (the programs run with
// deterministic hashing: ours repeat exactly, OpenCombine's within 0.1 %), so a target is met or
// missed the same way on every run.
//
// Both sides are counted by the package's profiling programs: `ProfileTarget` (ours) and
// `PeerProfile` (the peers), whose measured functions' names contain `measured` (see
// Benchmarks/README.md, "Profiling"). The W17–W20 cases run the very code PeerBench times (the
// `AppWorkloads` target); the others mirror PeerBench's loops.

import Foundation

/// One side of a counted row: which program, which case, which measured function, and how many
/// operations that function performs.
struct CountSpec: Hashable {
    enum Program: String {
        /// Our side: `ProfileTarget`.
        case ours = "ProfileTarget"
        /// The peers' side: `PeerProfile`.
        case peers = "PeerProfile"
    }

    var program: Program
    var arguments: [String]
    /// `--toggle-collect` pattern: the instructions inside matching functions are counted.
    var function: String
    var operations: Int

    init(_ program: Program, _ arguments: [String], function: String = "*measured*", operations: Int) {
        self.program = program
        self.arguments = arguments
        self.function = function
        self.operations = operations
    }

    var label: String { "\(program.rawValue) \(arguments.joined(separator: " ")) [\(function)]" }
}

/// Both sides of a counted row.
struct CountPair {
    var ours: CountSpec
    var peer: CountSpec
}

/// Runs the profiling programs under callgrind and returns instructions per operation.
final class InstructionCounter {
    private let valgrind: String
    private var programs: [CountSpec.Program: String] = [:]
    private let directory: String
    private var cache: [CountSpec: Double] = [:]

    /// Why instructions can't be counted here.
    struct Unavailable: Error {
        var reason: String
    }

    /// Finds valgrind, builds the profiling programs next to this executable (a no-op when they
    /// are current) and copies them without debug information (valgrind 3.19 rejects the DWARF
    /// that Swift 6.3 emits).
    /// - Throws: ``Unavailable`` naming the step that failed.
    static func make() throws(Unavailable) -> InstructionCounter {
        guard let valgrind = findInPath("valgrind") else { throw Unavailable(reason: "valgrind is not installed") }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let binDirectory = executable.deletingLastPathComponent()
        // `…/<package>/.build/<triple>/<configuration>/PeerBench`: rebuild the profiling
        // programs from the same package and configuration, so they count today's code.
        let components = binDirectory.pathComponents
        if let buildIndex = components.lastIndex(of: ".build"), let swift = findInPath("swift") {
            let package = NSString.path(withComponents: Array(components[..<buildIndex]))
            let configuration = binDirectory.lastPathComponent == "debug" ? "debug" : "release"
            for product in ["ProfileTarget", "PeerProfile"] {
                printError("PeerBench: building \(product) for instruction counts…")
                let status = run(
                    swift, ["build", "-c", configuration, "--package-path", package, "--product", product],
                    output: FileHandle.standardError)
                guard status == 0 else {
                    throw Unavailable(reason: "`swift build --product \(product)` failed (status \(status))")
                }
            }
        }
        let directory = NSTemporaryDirectory() + "PeerBench-callgrind-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let counter = InstructionCounter(valgrind: valgrind, directory: directory)
        for program in [CountSpec.Program.ours, .peers] {
            let built = binDirectory.appendingPathComponent(program.rawValue).path
            guard FileManager.default.isExecutableFile(atPath: built) else {
                throw Unavailable(reason: "\(built) is missing (swift build -c release --package-path Benchmarks)")
            }
            let stripped = directory + "/" + program.rawValue
            if let strip = findInPath("strip"),
                run(strip, ["--strip-debug", "-o", stripped, built], output: nil) == 0
            {
                counter.programs[program] = stripped
            } else {
                counter.programs[program] = built
            }
        }
        return counter
    }

    private init(valgrind: String, directory: String) {
        self.valgrind = valgrind
        self.directory = directory
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Instructions per operation of `spec`'s measured function; nil (with a line on standard
    /// error) if the program fails. Each spec runs once per PeerBench run.
    func perOperation(_ spec: CountSpec) -> Double? {
        if let known = cache[spec] { return known }
        guard let program = programs[spec.program] else { return nil }
        let output = directory + "/callgrind.out.\(cache.count)"
        printError("PeerBench: counting \(spec.label)…")
        // Deterministic hashing: `Set` and `Dictionary` probe the same slots in every run.
        let status = run(
            valgrind,
            ["--tool=callgrind", "--toggle-collect=\(spec.function)", "--callgrind-out-file=\(output)", program]
                + spec.arguments,
            output: nil, environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        defer { try? FileManager.default.removeItem(atPath: output) }
        guard status == 0, let total = Self.totalInstructions(output), total > 0 else {
            printError("PeerBench: counting \(spec.label) failed (status \(status))")
            return nil
        }
        let value = Double(total) / Double(spec.operations)
        cache[spec] = value
        return value
    }

    /// The `totals:` (or `summary:`) line of a callgrind output file.
    private static func totalInstructions(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n").reversed()
        where line.hasPrefix("totals:") || line.hasPrefix("summary:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    private static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `executable` and waits; its standard output goes to `output` (nil: discarded), its
    /// standard error is discarded.
    @discardableResult
    private static func run(
        _ executable: String, _ arguments: [String], output: FileHandle?, environment: [String: String] = [:]
    ) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = output ?? FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func run(
        _ executable: String, _ arguments: [String], output: FileHandle?, environment: [String: String] = [:]
    ) -> Int32 {
        Self.run(executable, arguments, output: output, environment: environment)
    }
}

// MARK: - Naming the counted sides

extension CountSpec {
    /// Our side, counted in `ProfileTarget`.
    static func ours(_ arguments: String..., function: String = "*measured*", operations: Int) -> CountSpec {
        CountSpec(.ours, arguments, function: function, operations: operations)
    }

    /// A peer's side, counted in `PeerProfile`.
    static func peer(_ arguments: String..., function: String = "*measured*", operations: Int) -> CountSpec {
        CountSpec(.peers, arguments, function: function, operations: operations)
    }
}
