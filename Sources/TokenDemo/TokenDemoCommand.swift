import Foundation

/// `swift run TokenDemo [list | <case>… | --help]`: a guided, self-checking tour of
/// ObservationTokens.
///
/// The entry point is synchronous on purpose: everything runs on the main thread, and the
/// `main-thread-delivery` case runs `RunLoop.main` while it waits, which is what drains
/// `DispatchQueue.main` (and so `CoalescingQueue.main`) on the main thread. An `async` main would
/// not do on Linux: there the runtime calls `dispatch_main()`, which ends the main thread and lets
/// a worker thread serve the main queue from the first suspension on.
@main
enum TokenDemoCommand {
    /// Exit statuses.
    enum Status: Int32 {
        case passed = 0
        case failed = 1
        case usageError = 2
    }

    @MainActor
    static func main() {
        let status = run(arguments: Array(CommandLine.arguments.dropFirst()))
        exit(status.rawValue)
    }

    @MainActor
    static func run(arguments: [String]) -> Status {
        switch arguments.first {
        case nil, "all":
            guard arguments.count <= 1 else { return usageError("`all` takes no further arguments") }
            let firstLook = FirstLook.run()
            printIntroduction()
            return firstLook && runCases(DemoCase.all) == .passed ? .passed : .failed
        case "-h", "--help", "help":
            printHelp()
            return .passed
        case "list":
            printList()
            return .passed
        case let option? where option.hasPrefix("-"):
            return usageError("unknown option '\(option)'")
        default:
            var cases: [DemoCase] = []
            for name in arguments {
                guard let demoCase = DemoCase.named(name) else { return unknownCase(name) }
                cases.append(demoCase)
            }
            return runCases(cases)
        }
    }

    @MainActor
    private static func runCases(_ cases: [DemoCase]) -> Status {
        let failed = DemoRunner.run(cases)
        return failed.isEmpty ? .passed : .failed
    }

    // MARK: Output

    private static func printIntroduction() {
        let introduction = """
            ObservationTokens in \(DemoCase.all.count) small cases. Each prints what happens, in order: numbered \
            steps are what the code does and what the library does in response; "→" lines are \
            callbacks; "— end of tick —" is where the coalescing queue delivers. Setting a property \
            never calls back directly: it marks tokens pending, and each pending token is called once \
            at the end of the tick. An app keeps the default queue, as above: the tick ends when the main \
            queue next runs. The cases below use a manual queue instead, `CoalescingQueue(target: \
            .manual)`, and end each tick by calling `queue.drain()`, so that a tick ends exactly where \
            the case says and the output is the same on every run. Each case then checks what it \
            expected: PASS or FAIL.
            """
        for line in wrap(introduction, width: DemoRunner.width) { print(line) }
        print("")
    }

    private static func printHelp() {
        print(
            """
            TokenDemo — a guided, self-checking tour of ObservationTokens.

            Usage:
              swift run TokenDemo              run every case, printing a timeline of each
              swift run TokenDemo list         list the cases with a one-line summary
              swift run TokenDemo <case>…      run only the named or numbered case(s), e.g.
                                               `swift run TokenDemo invalidate` or `swift run TokenDemo 3`
              swift run TokenDemo --help       show this help (also -h)

            Reading the output:
              1. …                numbered steps: what the demo does and what the library does in response
              → …                 a callback (or deinit notice) running
              — end of tick —     the coalescing queue delivers: each pending token is called once
              PASS: / FAIL: …     each case checks its own expectations

            Exit status: 0 when every case passed, 1 when a case failed, 2 for an unknown case or option.
            """)
    }

    private static func printList() {
        let nameWidth = DemoCase.all.map(\.name.count).max() ?? 0
        let numberWidth = String(DemoCase.all.count).count
        print(
            "Cases, in the order `swift run TokenDemo` runs them (run one: `swift run TokenDemo <case>` or `<number>`):"
        )
        for group in DemoCase.Group.allCases {
            print("")
            print("\(group.rawValue):")
            for demoCase in DemoCase.all where demoCase.group == group {
                let padding = String(repeating: " ", count: nameWidth - demoCase.name.count)
                let number = String(demoCase.number)
                let numberPadding = String(repeating: " ", count: numberWidth - number.count)
                print("  \(numberPadding)\(number)  \(demoCase.name)\(padding)  \(demoCase.summary)")
            }
        }
    }

    // MARK: Errors

    private static func unknownCase(_ name: String) -> Status {
        var message = "TokenDemo: unknown case '\(name)'."
        if let suggestion = closestCaseName(to: name) { message += " Did you mean '\(suggestion)'?" }
        message += "\nValid cases:\n" + DemoCase.all.map { "  \($0.name)" }.joined(separator: "\n")
        message += "\nRun `swift run TokenDemo list` for what each one shows."
        printError(message)
        return .usageError
    }

    private static func usageError(_ problem: String) -> Status {
        printError("TokenDemo: \(problem). Run `swift run TokenDemo --help` for usage.")
        return .usageError
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// The case name within a few edits of `name`, for typos.
    private static func closestCaseName(to name: String) -> String? {
        let scored = DemoCase.all.map { ($0.name, editDistance($0.name, name.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, name.count / 3) else { return nil }
        return best.0
    }
}

/// Levenshtein distance between two short strings.
func editDistance(_ lhs: String, _ rhs: String) -> Int {
    let lhs = Array(lhs)
    let rhs = Array(rhs)
    var previous = Array(0...rhs.count)
    for (i, left) in lhs.enumerated() {
        var current = [i + 1]
        for (j, right) in rhs.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1)))
        }
        previous = current
    }
    return previous[rhs.count]
}
