import Synchronization
import Testing

@testable import ObservationTokens

// The observer forms of `observe(_:observer:…)` with a payload hand the caller's callback to the
// source as it was passed (reinterpreted, not wrapped in a second closure): whatever the source
// and the payload's type, the callback gets the observer given and the source's payload, never
// runs for an observer that is gone, and is released when the token ends.

final class CbNode: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = ""
    @Observed var child: CbNode?
}

/// An observer class with a subclass, passed as the subclass.
class CbObserverBase: @unchecked Sendable {
    let name: String
    private let log = RelLock<[String]>([])
    init(name: String) { self.name = name }
    func record(_ entry: String) { log.withLock { $0.append(entry) } }
    var entries: [String] { log.withLock { $0 } }
}

final class CbObserver: CbObserverBase, @unchecked Sendable {}

/// A payload wider than the registers a payload could travel in (five words).
struct CbWide: Sendable, Equatable {
    var a: Int
    var b: Int
    var c: String
    var d: Int
}

/// Held only by a callback's context.
final class CbCaptured: Sendable {}

@Suite struct ObserverCallbackTests {
    @Test func observerCallbacksGetTheirObserverAndPayloadForEverySource() throws {
        // Given an observer (a subclass) and tokens on sources of several payload types
        let node = CbNode()
        node.child = CbNode()
        let observer = CbObserver(name: "vm")
        let queue = CoalescingQueue(target: .manual)
        var tokens: [ObservationToken] = []
        tokens.append(
            node.observe(.chain(KeyPathChain(\CbNode.child).then(\.a)), observer: observer, queue: queue) {
                observer, node, value in
                observer.record("chain \(observer.name) \(node.a) \(value.map(String.init) ?? "nil")")
            })
        tokens.append(
            node.observe(.changes(\.b), observer: observer, queue: queue) { observer, _, change in
                observer.record("changes \(observer.name) \(change.old)→\(change.new)")
            })
        tokens.append(
            node.observe(.endpoint(of: KeyPathChain(\CbNode.child).then(\.b)), observer: observer, queue: queue) {
                observer, _, endpoint in
                observer.record("endpoint \(observer.name) \(endpoint)")
            })
        tokens.append(
            node.observe(.value { CbWide(a: $0.a, b: $0.a * 2, c: $0.b, d: -1) }, observer: observer, queue: queue) {
                observer, _, wide in
                observer.record("value \(observer.name) \(wide.a) \(wide.b) \(wide.c) \(wide.d)")
            })
        tokens.append(
            node.observe(.whichOf([\.a, \.b]), observer: observer as CbObserverBase, queue: queue) {
                observer, _, changed in
                observer.record("whichOf \(observer.name) \(changed.contains(\.a)) \(changed.contains(\.b))")
            })
        tokens.append(
            node.observe(.changes(\.a), observer: observer as AnyObject, queue: queue) { observer, _, change in
                (observer as? CbObserver)?.record("anyObject \((observer as? CbObserver)?.name ?? "?") \(change.new)")
            })

        // When what they watch changes
        node.a = 3
        node.b = "x"
        node.child?.a = 7
        node.child?.b = "y"

        // Then each callback ran once, with the observer given and its source's payload
        #expect(queue.drain() == 6)
        #expect(
            observer.entries.sorted() == [
                "anyObject vm 3", "chain vm 3 7", "changes vm →x", "endpoint vm value(Optional(\"y\"))",
                "value vm 3 6 x -1",
                "whichOf vm true true",
            ])
        withExtendedLifetime(tokens) {}
    }

    @Test func observerCallbacksDoNotRunForAGoneObserverAndTheirTokensEnd() {
        // Given chain and change tokens on behalf of an observer
        let node = CbNode()
        let queue = CoalescingQueue(target: .manual)
        let calls = Atomic<Int>(0)
        var observer: CbObserver? = CbObserver(name: "vm")
        weak let weakObserver = observer
        let chain = node.observe(.chain(KeyPathChain(\CbNode.child).then(\.a)), observer: observer!, queue: queue) {
            _, _, _ in calls.add(1, ordering: .relaxed)
        }
        let change = node.observe(.changes(\.a), observer: observer!, queue: queue) { _, _, _ in
            calls.add(1, ordering: .relaxed)
        }

        // When the observer goes away before the delivery
        node.a = 1
        node.child = CbNode()
        observer = nil

        // Then nothing runs, the tokens end, and the observer was not kept alive
        #expect(weakObserver == nil)
        #expect(queue.drain() == 0)
        #expect(calls.load(ordering: .relaxed) == 0)
        #expect(!chain.isValid)
        #expect(!change.isValid)
    }

    @Test func observerCallbacksAreReleasedWhenTheTokenEnds() {
        // Given a chain token whose callback alone holds an object
        let node = CbNode()
        let observer = CbObserver(name: "vm")
        let queue = CoalescingQueue(target: .manual)
        var captured: CbCaptured? = CbCaptured()
        weak let weakCaptured = captured
        let token = node.observe(.chain(KeyPathChain(\CbNode.child).then(\.a)), observer: observer, queue: queue) {
            [captured] observer, _, _ in
            withExtendedLifetime(captured) { observer.record("chain") }
        }
        captured = nil
        #expect(weakCaptured != nil)

        // When the token ends
        token.invalidate()

        // Then the callback, and what it held, are released
        #expect(weakCaptured == nil)
        node.a = 1
        #expect(queue.drain() == 0)
        #expect(observer.entries.isEmpty)
    }

    @Test func observerCallbacksAreReleasedWhenTheModelGoesFirst() {
        // Given a model with a chain token whose callback alone holds an object
        var node: CbNode? = CbNode()
        weak let weakNode = node
        let observer = CbObserver(name: "vm")
        let queue = CoalescingQueue(target: .manual)
        var captured: CbCaptured? = CbCaptured()
        weak let weakCaptured = captured
        let token = node!.observe(.chain(KeyPathChain(\CbNode.child).then(\.a)), observer: observer, queue: queue) {
            [captured] observer, _, _ in
            withExtendedLifetime(captured) { observer.record("chain") }
        }
        captured = nil

        // When the model goes away before the token
        node = nil

        // Then the model is gone, the token ended, and its callback was released
        #expect(weakNode == nil)
        #expect(!token.isValid)
        #expect(weakCaptured == nil)
        #expect(queue.drain() == 0)
    }
}
