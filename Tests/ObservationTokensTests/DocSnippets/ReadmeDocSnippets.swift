// swift-format-ignore-file
// The README's code blocks that no other test holds, verbatim (see scripts/check-doc-snippets.py;
// the first example is in DocSnippetTests.swift and DefaultIsolationTests).

import Testing

@testable import ObservationTokens

@Suite struct ReadmeDocSnippetTests {
    @Test func tableViewChanges() {
        let list = CollList()
        list.items = [CollItem("a"), CollItem("b")]
        let token = list.items.observeMutations { items, changes in
            // changes.removed / changes.inserted / changes.replaced, folded over the tick
        }
        #expect(token.isValid)
    }
}
