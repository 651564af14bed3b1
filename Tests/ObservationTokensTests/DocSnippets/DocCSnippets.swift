// swift-format-ignore-file
// The code blocks of the DocC landing page (ObservationTokens.docc/ObservationTokens.md),
// verbatim (see scripts/check-doc-snippets.py).

import ObservationTokens
import Testing

enum DocCLanding {
    final class Address: ObservableModel {
        @Observed var zipCode = ""
    }

    static func firstExample() -> ObservationToken {
        final class Address: ObservableModel {
            @Observed var zipCode = ""
        }

        let address = Address()
        let token = address.observe(\.zipCode) { address in
            print("zip code is now", address.zipCode)
        }
        address.zipCode = "97210"
        address.zipCode = "97211"   // one callback at the end of the tick, on the main queue (an app's;
                            // a command-line program has none running: use a .manual queue, below)
        return token
    }
}

@Suite struct DocCSnippetTests {
    @Test func landingExamples() {
        // Runs the first example; its callback needs the main queue to run (an app's), and when
        // that happens depends on the test runner, so only the manual-queue example is checked.
        // (The first example's object lives until that delivery and may be deinitializing on the
        // main thread right now: its token's description would be a race, see debugDescription.)
        let first = DocCLanding.firstExample()
        _ = first
        let address = DocCLanding.Address()
        let queue = CoalescingQueue(target: .manual)
        let token = address.observe(\.zipCode, queue: queue) { address in
            print("zip code is now", address.zipCode)
        }
        address.zipCode = "97210"
        queue.drain()   // prints "zip code is now 97210"
        #expect(token.isValid)
        #expect(String(describing: token).contains("zipCode"))
    }
}
