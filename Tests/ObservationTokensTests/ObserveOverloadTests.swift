import ObservationTokens
import Synchronization
import Testing

// Every observe overload, called as users write them: inline array literals (also with
// `observer:`, which once crashed the type checker), trailing closures, default arguments. The
// file's first job is to compile; each test then checks that every token fires exactly once for
// one change of what it watches.

final class OvlNode: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = ""
    @Observed var child: OvlNode?
}

final class OvlObserver: Sendable {}

/// Counts callbacks per overload name.
final class OvlCalls: Sendable {
    private let counts = RelLock<[String: Int]>([:])
    func hit(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
    var all: [String: Int] { counts.withLock { $0 } }
}

@MainActor @Suite struct ObserveOverloadTests {
    @Test func everyNonisolatedOverloadFiresOnceForOneChange() throws {
        let node = OvlNode()
        node.child = OvlNode()
        let observer = OvlObserver()
        let queue = CoalescingQueue(target: .manual)
        let calls = OvlCalls()
        let chain = KeyPathChain(\OvlNode.child).then(\.a)
        var tokens: [ObservationToken] = []

        tokens.append(node.observe(\.a, queue: queue) { _ in calls.hit("property") })
        tokens.append(node.observe(\.a, observer: observer, queue: queue) { _, _ in calls.hit("property+observer") })
        tokens.append(node.observe([\.a, \.b], queue: queue) { _ in calls.hit("properties") })
        tokens.append(
            node.observe([\.a, \.b], observer: observer, queue: queue) { _, _ in calls.hit("properties+observer") })
        tokens.append(node.observe([\.a, \.b], queue: queue) { _ in calls.hit("variadic") })
        tokens.append(node.observe(.changes(\.a), queue: queue) { _, _ in calls.hit("changes") })
        tokens.append(node.observe(.chain(chain), queue: queue) { _, _ in calls.hit("chain") })
        tokens.append(
            node.observe(.chain(chain), observer: observer, queue: queue) { _, _, _ in calls.hit("chain+observer") })
        tokens.append(
            node.observe(
                .chains([
                    AnyKeyPathChain(KeyPathChain(\OvlNode.child).then(\.a)), AnyKeyPathChain(KeyPathChain(\OvlNode.b)),
                ]), queue: queue
            ) { _ in
                calls.hit("chains")
            })
        tokens.append(try node.observe(.path("child.a"), queue: queue) { _ in calls.hit("path") })
        tokens.append(
            try node.observe(.path("child.a"), observer: observer, queue: queue) { _, _ in calls.hit("path+observer") })
        tokens.append(try node.observe(.paths(["child.a", "b"]), queue: queue) { _ in calls.hit("paths") })
        tokens.append(
            node.observe(queue: queue) { node in
                _ = node.a; calls.hit("tracking")
            })
        tokens.append(
            node.observe(observer: observer, queue: queue) { _, node in
                _ = node.a; calls.hit("tracking+observer")
            })
        tokens.append(node.observe(.value({ $0.a }), queue: queue) { _, _ in calls.hit("value") })
        tokens.append(node.observe(.changes(of: { $0.a }), queue: queue) { _, _ in calls.hit("value changes") })
        tokens.append(try node.observe(checking: \.a, queue: queue) { _ in calls.hit("checking") })
        tokens.append(node.observe(.whichOf([\.a, \.b]), queue: queue) { _, _ in calls.hit("whichOf") })
        tokens.append(node.observe(.all, queue: queue) { _ in calls.hit("all") })
        tokens.append(node.observe(.endpoint(of: chain), queue: queue) { _, _ in calls.hit("endpointOf") })
        tokens.append(
            node.observe(.changes(\.a), observer: observer, queue: queue) { _, _, _ in calls.hit("changes+observer") })
        tokens.append(node.observe(.changes(chain), queue: queue) { _, _ in calls.hit("chain changes") })
        tokens.append(
            node.observe(
                .chains([AnyKeyPathChain(KeyPathChain(\OvlNode.child).then(\.a))]), observer: observer, queue: queue
            ) {
                _, _ in calls.hit("chains+observer")
            })
        tokens.append(
            try node.observe(.paths(["child.a", "b"]), observer: observer, queue: queue) { _, _ in
                calls.hit("paths+observer")
            })
        tokens.append(
            node.observe(.whichOf([\.a, \.b]), observer: observer, queue: queue) { _, _, _ in
                calls.hit("whichOf+observer")
            })
        tokens.append(
            node.observe(.endpoint(of: chain), observer: observer, queue: queue) { _, _, _ in
                calls.hit("endpointOf+observer")
            })
        tokens.append(node.observe(.all, observer: observer, queue: queue) { _, _ in calls.hit("all+observer") })
        // A tracking closure is its own callback: it runs once at creation.
        #expect(calls.all == ["tracking": 1, "tracking+observer": 1])

        node.a = 1
        node.child?.a = 1
        node.b = "x"
        queue.drain()
        let expected = [
            "property", "property+observer", "properties", "properties+observer", "variadic", "changes", "chain",
            "chain+observer", "chains", "path", "path+observer", "paths", "tracking", "tracking+observer", "value",
            "value changes", "checking", "whichOf", "all", "endpointOf", "changes+observer", "chain changes",
            "chains+observer", "paths+observer", "whichOf+observer", "endpointOf+observer", "all+observer",
        ]
        let creationRuns = ["tracking": 1, "tracking+observer": 1]
        #expect(calls.all == Dictionary(uniqueKeysWithValues: expected.map { ($0, 1 + creationRuns[$0, default: 0]) }))
        withExtendedLifetime((tokens, observer)) {}
    }

    @Test func everyMainActorOverloadFiresOnceForOneChange() throws {
        let node = OvlNode()
        node.child = OvlNode()
        let observer = OvlObserver()
        let queue = CoalescingQueue(target: .manual)
        let calls = OvlCalls()
        let chain = KeyPathChain(\OvlNode.child).then(\.a)
        let main = MainActor.shared
        var tokens: [ObservationToken] = []

        tokens.append(node.observe(\.a, queue: queue, isolation: main) { _ in calls.hit("property") })
        tokens.append(
            node.observe(\.a, observer: observer, queue: queue, isolation: main) { _, _ in
                calls.hit("property+observer")
            })
        tokens.append(node.observe([\.a, \.b], queue: queue, isolation: main) { _ in calls.hit("properties") })
        tokens.append(
            node.observe([\.a, \.b], observer: observer, queue: queue, isolation: main) { _, _ in
                calls.hit("properties+observer")
            })
        tokens.append(node.observe([\.a, \.b], queue: queue, isolation: main) { _ in calls.hit("variadic") })
        tokens.append(node.observe(.changes(\.a), queue: queue, isolation: main) { _, _ in calls.hit("changes") })
        tokens.append(node.observe(.chain(chain), queue: queue, isolation: main) { _, _ in calls.hit("chain") })
        tokens.append(
            node.observe(.chain(chain), observer: observer, queue: queue, isolation: main) { _, _, _ in
                calls.hit("chain+observer")
            })
        tokens.append(
            node.observe(
                .chains([AnyKeyPathChain(KeyPathChain(\OvlNode.child).then(\.a))]), queue: queue, isolation: main
            ) {
                _ in
                calls.hit("chains")
            })
        tokens.append(try node.observe(.path("child.a"), queue: queue, isolation: main) { _ in calls.hit("path") })
        tokens.append(
            try node.observe(.path("child.a"), observer: observer, queue: queue, isolation: main) { _, _ in
                calls.hit("path+observer")
            })
        tokens.append(
            try node.observe(.paths(["child.a", "b"]), queue: queue, isolation: main) { _ in calls.hit("paths") })
        node.tell(observer, when: \OvlNode.a, queue: queue, isolation: main) { _, _ in calls.hit("tell") }
        node.tell(observer, whenAnyOf: [\.a, \.b], queue: queue, isolation: main) { _, _ in calls.hit("tell any") }

        node.a = 1
        node.child?.a = 1
        node.b = "x"
        queue.drain()
        let expected = [
            "property", "property+observer", "properties", "properties+observer", "variadic", "changes", "chain",
            "chain+observer", "chains", "path", "path+observer", "paths", "tell", "tell any",
        ]
        #expect(calls.all == Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }))
        node.stopTelling(observer, about: [\.a, \.b])
        withExtendedLifetime((tokens, observer)) {}
    }

    @Test func tellFiresOnceAndStopTellingEndsIt() throws {
        let node = OvlNode()
        let observer = OvlObserver()
        let queue = CoalescingQueue(target: .manual)
        let calls = OvlCalls()
        node.tell(observer, when: \OvlNode.a, queue: queue) { _, _ in calls.hit("tell") }
        node.tell(observer, whenAnyOf: [\.a, \.b], queue: queue) { _, _ in calls.hit("tell any") }
        node.child = OvlNode()
        node.tell(observer, when: KeyPathChain(\OvlNode.child).then(\.a), queue: queue) { _, _ in
            calls.hit("tell chain")
        }
        try node.tell(observer, whenPath: "child.b", queue: queue) { _, _ in calls.hit("tell path") }
        queue.drain()
        node.a = 1
        node.b = "x"
        node.child?.a = 1
        node.child?.b = "y"
        queue.drain()
        #expect(calls.all == ["tell": 1, "tell any": 1, "tell chain": 1, "tell path": 1])
        node.stopTelling(observer, about: [\.a, \.b])
        node.stopTelling(observer, about: KeyPathChain(\OvlNode.child).then(\.a))
        node.stopTelling(observer, aboutPath: "child.b")
        node.a = 2
        node.child?.a = 2
        node.child?.b = "z"
        queue.drain()
        #expect(calls.all == ["tell": 1, "tell any": 1, "tell chain": 1, "tell path": 1])
        withExtendedLifetime(observer) {}
    }
}
