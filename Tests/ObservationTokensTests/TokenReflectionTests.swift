import Testing

@testable import ObservationTokens

/// Walks a value's mirror the way a test framework describes a failed expectation's values.
private func reflectedLabels(of value: Any, depth: Int = 4) -> [String] {
    guard depth > 0 else { return [] }
    return Mirror(reflecting: value).children.flatMap { child in
        [child.label ?? "_"] + reflectedLabels(of: child.value, depth: depth - 1)
    }
}

@Suite struct TokenReflectionTests {
    @Test func aTokenReflectsItsStateAndNotItsInternals() {
        // Given a token made with an observer that has gone away, the token still live
        let queue = CoalescingQueue(target: .manual)
        let node = CbNode()
        var observer: CbObserver? = CbObserver(name: "gone")
        let token = node.observe(.changes(\.a), observer: observer!, queue: queue) { observer, _, _ in
            observer.record("fired")
        }
        observer = nil

        // When its mirror is walked, as Swift Testing does for a failed `#expect(token…)`
        let labels = reflectedLabels(of: token)

        // Then it shows whether it is valid and where it was made, and nothing past it (the
        // subscription's noncopyable callback and its reference to the gone observer, which a
        // mirror can't copy or read, crashed the process)
        #expect(labels == ["isValid", "site"])
        withExtendedLifetime(token) {}
    }
}
