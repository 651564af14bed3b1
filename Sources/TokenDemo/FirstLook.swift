import ObservationTokens

/// What an app writes, shown first: a model, a main-actor object that observes it, and one tick
/// delivered on the main queue.
///
/// The code is the README's first example (the model and the label, which compile in an app
/// target, whose default isolation is the main actor) with the label printing what it shows,
/// and the four lines that use them. `run()` prints the code, runs the same code (below,
/// verbatim: keep `code` and the declarations below identical), lets the main queue deliver as
/// an app's run loop does, and checks what it printed.
enum FirstLook {
    /// The lines `run()` shows; the same as `Address`, `AddressLabel` and `example()` below.
    static let code = """
        final class Address: ObservableModel {
            @Observed var zipCode = ""
        }

        @MainActor final class AddressLabel {
            var text = "" { didSet { print("the label shows", text) } }
            private var tokens = Set<ObservationToken>()

            init(address: Address) {
                address.observe(\\.zipCode, observer: self, isolation: MainActor.shared) { label, address in
                    label.text = address.zipCode      // main-actor code; no `self` captured, no retain cycle
                }
                .store(in: &tokens)                   // the label's lifetime is the observation's
            }
        }

        let address = Address()
        let label = AddressLabel(address: address)
        address.zipCode = "97210"
        address.zipCode = "97211"   // one callback, at the end of the tick, on the main queue
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
    // The shown code, verbatim: the declarations (an app's file scope; here nested in
    // `FirstLook`, so that `print` is `FirstLook.print`) …
    final class Address: ObservableModel {
        @Observed var zipCode = ""
    }

    // swift-format-ignore
    @MainActor final class AddressLabel {
        var text = "" { didSet { print("the label shows", text) } }
        private var tokens = Set<ObservationToken>()

        init(address: Address) {
            address.observe(\.zipCode, observer: self, isolation: MainActor.shared) { label, address in
                label.text = address.zipCode      // main-actor code; no `self` captured, no retain cycle
            }
            .store(in: &tokens)                   // the label's lifetime is the observation's
        }
    }

    // swift-format-ignore
    /// … and the code that uses them. Returns what it made, to keep it alive until the tick ends.
    @MainActor
    static func example() -> (Address, AddressLabel) {
        let address = Address()
        let label = AddressLabel(address: address)
        address.zipCode = "97210"
        address.zipCode = "97211"   // one callback, at the end of the tick, on the main queue
        return (address, label)
    }

    /// Shows the code, runs it, and reports whether it printed what it says.
    @MainActor
    static func run() -> Bool {
        Swift.print("What an app writes: a model, a main-actor object observing it, one tick.")
        Swift.print("")
        for line in code.split(separator: "\n", omittingEmptySubsequences: false) {
            Swift.print(line.isEmpty ? "" : "    " + line)
        }
        Swift.print("")
        Swift.print("Running it, and letting the main queue run as an app's run loop does, prints:")
        let objects = example()
        let printedBeforeTheTick = printed.count
        let delivered = runMainRunLoop(until: { printed.count > 0 }, timeoutSeconds: 5)
        withExtendedLifetime(objects) {}
        let passed = delivered && printedBeforeTheTick == 0 && printed.values == ["the label shows 97211"]
        Swift.print(
            passed
                ? "  PASS: nothing ran inside the setters; one callback, on the main queue, with the tick's last value"
                : "  FAIL: printed \(printed.values) (\(printedBeforeTheTick) before the tick)")
        Swift.print("")
        return passed
    }
}
