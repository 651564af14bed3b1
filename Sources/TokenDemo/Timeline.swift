import ObservationTokens
import Synchronization

/// Prints one case's story as it happens: numbered steps, notes, tick boundaries and a
/// `PASS:`/`FAIL:` line for each expectation.
///
/// Callbacks print through it from whatever thread they run on, so every line is written
/// under one lock and the numbering stays in the order things really happened.
final class Timeline: Sendable {
    private struct State {
        var stepNumber = 0
        var failures: [String] = []
    }

    private let state = Mutex(State())

    /// Text column of steps and notes: `"  1. "` is five characters wide.
    private static let indent = "     "

    /// The expectations that failed so far.
    var failures: [String] {
        state.withLock { $0.failures }
    }

    /// Lines longer than this are wrapped, continuing under the text with a small indent.
    private static let width = 110

    /// A numbered line: something the demo code did, or something the library did in response.
    func step(_ text: String) {
        state.withLock { state in
            state.stepNumber += 1
            let number = String(state.stepNumber)
            let prefix = String(repeating: " ", count: max(0, 3 - number.count)) + number + ". "
            Self.printWrapped(prefix + text)
        }
    }

    /// A numbered line written by a token's callback (or a deinit notice).
    func callback(_ text: String) {
        step("→ " + text)
    }

    /// An unnumbered explanation under the step before it.
    func note(_ text: String) {
        state.withLock { _ in Self.printWrapped(Self.indent + text) }
    }

    /// A blank line and a short heading, to split a case into parts.
    func part(_ title: String) {
        state.withLock { _ in
            print("")
            Self.printWrapped(Self.indent + title)
        }
    }

    private static func printWrapped(_ line: String) {
        guard line.count > width else { return print(line) }
        for wrapped in wrap(line, width: width, indent: indent + "  ") { print(wrapped) }
    }

    /// Ends the tick of a manual queue: prints the boundary, drains, and says how many
    /// callbacks ran. Callback lines appear between the two.
    @discardableResult
    func endTick(draining queue: CoalescingQueue) -> Int {
        state.withLock { _ in print(Self.indent + "— end of tick —") }
        let delivered = queue.drain()
        note("queue.drain() returned \(delivered): \(delivered == 1 ? "1 callback" : "\(delivered) callbacks") ran")
        return delivered
    }

    /// Checks an expectation and prints `PASS: …` or `FAIL: … (got …)`.
    func expect(_ expectation: String, _ passed: Bool, got actual: @autoclosure () -> String) {
        let got = passed ? "" : actual()
        state.withLock { state in
            if passed {
                print("  PASS: \(expectation)")
            } else {
                print("  FAIL: \(expectation) (got \(got))")
                state.failures.append(expectation)
            }
        }
    }

    /// Checks that `actual == expected`, showing `actual` on failure.
    func expect<Value: Equatable>(_ expectation: String, _ actual: Value, equals expected: Value) {
        expect(expectation, actual == expected, got: "\(actual)")
    }

    /// Checks a sequence of recorded values, showing them as `[a, b, c]` on failure.
    func expect(_ expectation: String, _ actual: [String], equals expected: [String]) {
        expect(expectation, actual == expected, got: "[" + actual.joined(separator: ", ") + "]")
    }
}

// MARK: Text helpers

/// Breaks `text` into lines of at most `width` characters at spaces.
///
/// Leading spaces of `text` are kept; continuation lines start with `indent`. Words are split
/// at single spaces, so runs of spaces inside the text (used for alignment) survive.
func wrap(_ text: String, width: Int, indent: String = "") -> [String] {
    let leading = String(text.prefix { $0 == " " })
    var lines: [String] = []
    var line = leading
    var lineHasWords = false
    for word in text.dropFirst(leading.count).split(separator: " ", omittingEmptySubsequences: false) {
        if lineHasWords, line.count + 1 + word.count > width {
            lines.append(line)
            line = indent
            lineHasWords = false
        }
        line += (lineHasWords ? " " : "") + word
        lineHasWords = true
    }
    lines.append(line)
    return lines
}

/// Quotes a string the way Swift source would show it.
func quoted(_ text: String) -> String {
    "\"\(text)\""
}

/// Shows an optional endpoint value: quoted when reachable, `nil` otherwise.
func quoted(_ text: String?) -> String {
    text.map(quoted) ?? "nil"
}
