/// One self-checking scenario of the tour: a name to run it by, a one-line summary for `list`,
/// a sentence saying what it shows, and the code that tells the story on a ``Timeline``.
struct DemoCase: Sendable {
    /// The sections of `TokenDemo list`, in tour order.
    enum Group: String, CaseIterable, Sendable {
        case lifecycle = "Token lifecycle"
        case coalescing = "Coalescing and delivery"
        case keyPaths = "Key paths"
        case tracking = "Tracking"
        case concurrency = "Swift concurrency"
        case bindings = "Bindings and pipelines"
        case collections = "Collections"
        case debugging = "Debugging"
        case synthetic = "Synthetic properties"
    }

    let name: String
    let group: Group
    /// One line for `TokenDemo list`.
    let summary: String
    /// The sentence under the case's header: what a newcomer should take away.
    let shows: String
    let body: @MainActor @Sendable (Timeline) -> Void

    init(
        _ name: String,
        group: Group,
        summary: String,
        shows: String,
        body: @escaping @MainActor @Sendable (Timeline) -> Void
    ) {
        self.name = name
        self.group = group
        self.summary = summary
        self.shows = shows
        self.body = body
    }

    /// Every case, in the order `swift run TokenDemo` runs them.
    static let all: [DemoCase] =
        lifecycleCases + coalescingCases + keyPathCases + hardeningCases + trackingCases + concurrencyCases
        + bindingCases + collectionCases + debuggingCases + syntheticCases

    /// The case with this name, or with this number (1-based, as the headers and `list` show).
    static func named(_ name: String) -> DemoCase? {
        if let number = Int(name), all.indices.contains(number - 1) { return all[number - 1] }
        return all.first { $0.name == name }
    }

    /// This case's number in ``all`` (1-based), as the headers and `list` show it.
    var number: Int { (DemoCase.all.firstIndex { $0.name == name } ?? 0) + 1 }
}

/// Runs cases one after another and prints each one's story and verdict.
enum DemoRunner {
    /// Width of header rules and wrapped text.
    static let width = 96

    /// Runs `cases` in order and returns the names of those with a failed expectation.
    @MainActor
    static func run(_ cases: [DemoCase]) -> [String] {
        var failed: [String] = []
        for (index, demoCase) in cases.enumerated() {
            if index > 0 { print("") }
            printHeader(of: demoCase)
            let timeline = Timeline()
            demoCase.body(timeline)
            if !timeline.failures.isEmpty { failed.append(demoCase.name) }
        }
        if cases.count > 1 { printSummary(total: cases.count, failed: failed) }
        return failed
    }

    /// The header names the case and its number in the whole tour, so `3/49` runs again with
    /// `swift run TokenDemo 3`.
    private static func printHeader(of demoCase: DemoCase) {
        let title = "── \(demoCase.number)/\(DemoCase.all.count)  \(demoCase.name) "
        print(title + String(repeating: "─", count: max(3, width - title.count)))
        for line in wrap("What this shows: " + demoCase.shows, width: width) { print(line) }
        print("")
    }

    private static func printSummary(total: Int, failed: [String]) {
        print("")
        print(String(repeating: "═", count: width))
        if failed.isEmpty {
            print("All \(total) cases passed.")
        } else {
            print("\(total - failed.count) of \(total) cases passed; FAILED: \(failed.joined(separator: ", "))")
            print("Run one failing case alone with `swift run TokenDemo <case>`.")
        }
    }
}
