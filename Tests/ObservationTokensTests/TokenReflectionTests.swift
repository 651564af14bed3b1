import Testing

@testable import ObservationTokens

/// Walks a value's mirror the way a test framework describes a failed expectation's values.
private func reflectedLabels(of value: Any, depth: Int = 4) -> [String] {
    guard depth > 0 else { return [] }
    return Mirror(reflecting: value).children.flatMap { child in
        [child.label ?? "_"] + reflectedLabels(of: child.value, depth: depth - 1)
    }
}

final class RefChild: ObservableModel, @unchecked Sendable {  // one test's thread only
    @Observed var x = 1
}

/// Synthetic properties that read another object, which the tests then let go.
final class RefParent: ObservableModel, @unchecked Sendable {  // one test's thread only
    @Observed var child: RefChild? = RefChild()
    @Computed({ (parent: RefParent) in parent.child?.x ?? 0 }) var computed: Int
    @Lazy({ (parent: RefParent) in parent.child?.x ?? 0 }) var loaded: Int
    @Hybrid({ (parent: RefParent) in parent.child?.x ?? 0 }) var hybrid: Int
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

    @Test func aTellObservationReflectsItsStateAndNotItsInternals() {
        // Given a `tell` observation whose observer has gone away, the observed object alive
        let queue = CoalescingQueue(target: .manual)
        let node = CbNode()
        var observer: CbObserver? = CbObserver(name: "gone")
        let observation = node.tell(observer!, when: \.a, queue: queue) { observer, _ in observer.record("fired") }
        observer = nil

        // When its mirror is walked, as Swift Testing does for a failed `#expect(observation…)`
        let labels = reflectedLabels(of: observation)

        // Then it shows whether it is active and where it was made, and nothing past it (the
        // walk went on through the weak reference into the subscription and read its
        // reference to the gone observer: the process trapped)
        #expect(labels == ["isActive", "site"])
        #expect(!observation.isActive)
        withExtendedLifetime(node) {}
    }

    /// Given a model whose `@Computed`, `@Lazy` and `@Hybrid` properties read another object,
    /// which then deinitialized; when the model's mirror is walked, as Swift Testing does for
    /// a failed `#expect(model…)`; then each property shows whether its cached value is valid
    /// and the value, and nothing past it. The walk went on into the computation's
    /// dependencies, reached the registry of the deinitialized object and read its owner: a
    /// segmentation fault for `@Computed`, a read of freed memory for `@Hybrid`; `@Lazy`
    /// (which records no dependencies) showed the lock's and the registry's internals.
    @Test(arguments: ["_computed", "_loaded", "_hybrid"])
    func aSyntheticPropertyReflectsItsCacheAndNotItsDependencies(storage label: String) {
        // Given
        let parent = RefParent()
        let tokens = [
            parent.observe(\.computed, queue: CoalescingQueue(target: .manual)) { _ in },
            parent.observe(\.hybrid, queue: CoalescingQueue(target: .manual)) { _ in },
        ]
        #expect([parent.computed, parent.loaded, parent.hybrid] == [1, 1, 1])
        weak let child = parent.child
        parent.child = nil
        #expect(child == nil)

        // When
        let everything = reflectedLabels(of: parent, depth: 12)
        let storage = Mirror(reflecting: parent).children.first { $0.label == label }?.value
        let labels = storage.map { Mirror(reflecting: $0).children.map(\.label) }

        // Then
        #expect(everything.contains(label))
        #expect(labels == ["isValid", "cachedValue"])
        withExtendedLifetime(tokens) {}
    }
}
