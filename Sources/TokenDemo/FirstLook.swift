import ObservationTokens

/// What a user writes, shown first: a model, one observation, one tick, and what it prints.
///
/// `run()` prints the code, then runs the same code (below, verbatim) and checks its output.
/// README.md shows the same block; scripts/check-doc-snippets.py checks that it appears here.
enum FirstLook {
    /// The lines `run()` shows; the same as the code in `example()`.
    static let code = """
        final class Address: ObservableModel {
            @Observed var zipCode = ""
        }

        let address = Address()
        let queue = CoalescingQueue(target: .manual)
        let token = address.observe(\\.zipCode, queue: queue) { address in
            print("zip code is now", address.zipCode)
        }
        address.zipCode = "97210"
        address.zipCode = "97211"
        queue.drain()   // one callback for the tick: prints "zip code is now 97211"
        """

    /// What `example()` printed, for the check.
    static let printed = Recorder<String>()

    /// Prints like `Swift.print` and records the line; `example()`'s `print` calls land here.
    static func print(_ items: Any...) {
        let line = items.map { "\($0)" }.joined(separator: " ")
        printed.append(line)
        Swift.print("  → " + line)
    }

    // swift-format-ignore
    /// The shown code, verbatim.
    static func example() -> ObservationToken {
        final class Address: ObservableModel {
            @Observed var zipCode = ""
        }

        let address = Address()
        let queue = CoalescingQueue(target: .manual)
        let token = address.observe(\.zipCode, queue: queue) { address in
            print("zip code is now", address.zipCode)
        }
        address.zipCode = "97210"
        address.zipCode = "97211"
        queue.drain()   // one callback for the tick: prints "zip code is now 97211"
        return token
    }

    /// Shows the code, runs it, and reports whether it printed what it says.
    @MainActor
    static func run() -> Bool {
        Swift.print("What you write: a model, one observation, one tick.")
        Swift.print("")
        for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
            Swift.print(line.isEmpty ? "" : "    " + line)
        }
        Swift.print("")
        Swift.print("Running it prints:")
        withExtendedLifetime(example()) {}
        let passed = printed.values == ["zip code is now 97211"]
        Swift.print(passed ? "  PASS: one callback, with the tick's last value" : "  FAIL: printed \(printed.values)")
        Swift.print("")
        return passed
    }
}
