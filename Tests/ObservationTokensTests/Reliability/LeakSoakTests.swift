import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Used on the test's thread only; callbacks receive it as their argument.
final class RelLeakModel: ObservableModel {
    @Observed var value = 0
}

/// `@unchecked Sendable`: callbacks run on the test's thread (its `.manual` queue drains there).
final class RelLeakObserver: @unchecked Sendable {
    var seen = 0
}

/// Weak references to everything an observation involves.
struct RelLeakRefs {
    weak var token: ObservationToken?
    weak var canary: RelCanary?
    weak var observer: RelLeakObserver?
    weak var observed: RelLeakModel?
}

/// One observation with every part held by a variable the test can clear: the observed object,
/// the observer (held weakly by the token), the token, and a canary captured by the closure.
struct RelLeakScene {
    var observed: RelLeakModel?
    var observer: RelLeakObserver?
    var token: ObservationToken?
    let refs: RelLeakRefs
    let queue: CoalescingQueue

    init() {
        let queue = CoalescingQueue(target: .manual)
        let observed = RelLeakModel()
        let observer = RelLeakObserver()
        let canary = RelCanary("captured by the callback")
        let token = observed.observe(\.value, observer: observer, queue: queue) { [canary] observer, _ in
            _ = canary
            observer.seen += 1
        }
        self.queue = queue
        self.observed = observed
        self.observer = observer
        self.token = token
        refs = RelLeakRefs(token: token, canary: canary, observer: observer, observed: observed)
    }
}

/// Every way an observation ends frees the token, the closure's captures, the observer and the
/// observed object; and a million observations leave nothing behind.
@Suite(.threadStress, .serialized) struct LeakSoakTests {
    /// Given an observation (with or without a delivery pending);
    /// when its token is dropped;
    /// then the token and the closure's captures are freed at once, the pending delivery is
    /// cancelled, and observer and observed object are freed as soon as the test lets go.
    @Test(arguments: [false, true])
    func droppingTheTokenFreesEverything(withPendingDelivery: Bool) {
        var scene = RelLeakScene()
        if withPendingDelivery { scene.observed!.value = 1 }

        scene.token = nil

        #expect(scene.refs.token == nil)
        #expect(scene.refs.canary == nil)
        #expect(scene.observed!.observedPropertyCount == 0)
        scene.observer = nil
        scene.observed = nil
        #expect(scene.refs.observer == nil)
        #expect(scene.refs.observed == nil, "a cancelled delivery must not keep the object alive")
        #expect(scene.queue.drain() == 0)
    }

    /// Given an observation (with or without a delivery pending);
    /// when `invalidate()` is called and the token is kept;
    /// then the closure's captures are freed inside `invalidate()`, the token keeps neither end
    /// alive, and the token itself is freed when dropped.
    @Test(arguments: [false, true])
    func invalidatingFreesEverythingButTheTokenItself(withPendingDelivery: Bool) {
        var scene = RelLeakScene()
        if withPendingDelivery { scene.observed!.value = 1 }

        scene.token!.invalidate()

        #expect(scene.refs.canary == nil)
        #expect(scene.observed!.observedPropertyCount == 0)
        scene.observer = nil
        scene.observed = nil
        #expect(scene.refs.observer == nil)
        #expect(scene.refs.observed == nil)
        #expect(scene.queue.drain() == 0)
        #expect(scene.refs.token != nil)
        scene.token = nil
        #expect(scene.refs.token == nil)
    }

    /// Given an observation with no delivery pending;
    /// when the observed object is released;
    /// then it is freed at once, the token ends and releases the closure's captures, and the
    /// token and observer are freed when dropped.
    @Test func releasingTheObservedObjectEndsTheTokenAndFreesEverything() {
        var scene = RelLeakScene()

        scene.observed = nil

        #expect(scene.refs.observed == nil)
        #expect(scene.token!.isValid == false)
        #expect(scene.refs.canary == nil)
        #expect(scene.queue.drain() == 0)
        scene.observer = nil
        scene.token = nil
        #expect(scene.refs.observer == nil)
        #expect(scene.refs.token == nil)
    }

    /// Given an observation with a delivery pending;
    /// when the observed object is released;
    /// then the pending delivery keeps it alive until it runs (documented), and after the drain
    /// everything is freed.
    @Test func releasingTheObservedObjectWithAPendingDeliveryFreesEverythingAfterTheDrain() {
        var scene = RelLeakScene()
        scene.observed!.value = 1

        scene.observed = nil
        #expect(scene.refs.observed != nil, "a pending delivery retains the object until it runs")
        #expect(scene.queue.drain() == 1)

        #expect(scene.refs.observed == nil)
        #expect(scene.token!.isValid == false)
        #expect(scene.refs.canary == nil)
        scene.observer = nil
        scene.token = nil
        #expect(scene.refs.observer == nil)
        #expect(scene.refs.token == nil)
    }

    /// Given an observation (with or without a delivery pending);
    /// when the observer is released;
    /// then it is freed at once (the token holds it weakly), the next delivery finds it gone,
    /// skips the callback and ends the token, releasing the closure's captures; then the
    /// observed object and the token are freed when dropped.
    @Test(arguments: [false, true])
    func releasingTheObserverEndsTheTokenAtTheNextDelivery(withPendingDelivery: Bool) {
        var scene = RelLeakScene()
        if withPendingDelivery { scene.observed!.value = 1 }

        scene.observer = nil
        #expect(scene.refs.observer == nil)
        if !withPendingDelivery { scene.observed!.value = 2 }
        #expect(scene.queue.drain() == 0)

        #expect(scene.token!.isValid == false)
        #expect(scene.refs.canary == nil)
        #expect(scene.observed!.observedPropertyCount == 0)
        scene.observed = nil
        scene.token = nil
        #expect(scene.refs.observed == nil)
        #expect(scene.refs.token == nil)
    }

    /// Given an observer-lifetime observation (`tell`, no token);
    /// when the observer is released and the property changes;
    /// then the delivery finds the observer gone and releases the closure's captures, and the
    /// observed object is freed when dropped.
    @Test func releasingTheObserverOfATellObservationFreesEverything() {
        let queue = CoalescingQueue(target: .manual)
        var observed: RelLeakModel? = RelLeakModel()
        var observer: RelLeakObserver? = RelLeakObserver()
        var canary: RelCanary? = RelCanary("captured by tell")
        weak let weakObserved = observed
        weak let weakObserver = observer
        weak let weakCanary = canary
        observed!.tell(observer!, when: \.value, queue: queue) { [canary] observer, _ in
            _ = canary
            observer.seen += 1
        }
        canary = nil

        observer = nil
        observed!.value = 1
        #expect(queue.drain() == 0)

        #expect(weakObserver == nil)
        #expect(weakCanary == nil)
        #expect(observed!.observedPropertyCount == 0)
        observed = nil
        #expect(weakObserved == nil)
    }

    /// Given a token with a delivery pending on its own `.manual` queue;
    /// when the token is dropped, and then the queue is dropped without another drain;
    /// then the queue is freed: the cancelled delivery of an ended token must not keep its
    /// queue (and itself) alive.
    @Test func endedTokenWithAPendingDeliveryDoesNotKeepAnUndrainedQueueAlive() {
        let observed = RelLeakModel()
        var queue: CoalescingQueue? = CoalescingQueue(target: .manual)
        weak let weakQueue = queue
        var token: ObservationToken? = observed.observe(\.value, queue: queue!) { _ in }
        observed.value = 1

        withExtendedLifetime(token) {}
        token = nil
        queue = nil

        #expect(weakQueue == nil, "queue ↔ ended subscription retain cycle: the queue and the subscription leak")
    }

    static let soakCycles = RelScale.iterations(1_000_000, tsanDivisor: 10)

    /// Given a fresh process (so other tests running in parallel can't move the process-wide
    /// counter);
    /// when 1,000,000 observations are created, changed, delivered and ended, rotating through
    /// every way of ending;
    /// then the number of live subscriptions is back at its baseline, the long-lived object has
    /// no edges left, and the queue is empty.
    @Test(.timeLimit(.minutes(5)))
    func millionObservationCyclesLeaveNoLiveEntriesBehind() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let report = RelSoak.run(cycles: LeakSoakTests.soakCycles)
            print(report.summary)
            exit(report.failures.isEmpty ? EXIT_SUCCESS : EXIT_FAILURE)
        }
        if let result {
            let output = String(decoding: result.standardOutputContent, as: UTF8.self)
            print(output, terminator: "")
        }
    }
}

/// The soak loop. Runs in a child process (an exit test) and reports through its exit status.
///
/// Two threads (the CI machine has two cores) each run half of the cycles on their own queue
/// and objects. Cycles rotate through the four ways an observation ends. The long-lived object
/// keeps one anchor token for the whole run, as app objects usually do, so the cycles on it
/// don't run the 0↔1 observer hook (a reflection pass) every time; cycles on fresh objects do.
enum RelSoak {
    struct Report {
        var failures: [String] = []
        var summary = ""
    }

    private struct Lane {
        var delivered = 0
        var failures: [String] = []
    }

    static func run(cycles: Int) -> Report {
        var report = Report()
        let baseline = LiveCounters.liveSubscriptions
        let lanes = RelLock([Lane]())
        let start = ContinuousClock.now
        let finished = RelThreads.run(count: 2, timeout: 280) { lane in
            let result = runLane(cycles: cycles / 2 + (lane == 0 ? cycles % 2 : 0), lane: lane)
            lanes.withLock { $0.append(result) }
        }
        let elapsed = ContinuousClock.now - start
        guard finished else {
            report.summary = "soak: threads did not finish within 280 s"
            report.failures.append(report.summary)
            return report
        }
        let results = lanes.withLock { $0 }
        let delivered = results.reduce(0) { $0 + $1.delivered }
        report.failures += results.flatMap(\.failures)
        let live = LiveCounters.liveSubscriptions
        if live != baseline { report.failures.append("live subscriptions \(live), baseline \(baseline)") }
        // Each cycle delivers exactly once: the change made while its token was alive.
        if delivered != cycles { report.failures.append("delivered \(delivered) callbacks for \(cycles) cycles") }
        report.summary = """
            soak: \(cycles) cycles on 2 threads in \(elapsed), \(delivered) deliveries, \
            \(live) live subscriptions after (baseline \(baseline))\
            \(report.failures.isEmpty ? "" : "\nFAILURES:\n" + report.failures.prefix(20).joined(separator: "\n"))
            """
        return report
    }

    private static func runLane(cycles: Int, lane: Int) -> Lane {
        var result = Lane()
        let queue = CoalescingQueue(target: .manual)
        let longLived = RelLeakModel()
        let observer = RelLeakObserver()
        let anchorQueue = CoalescingQueue(target: .manual)
        let anchor = longLived.observe(\.value, queue: anchorQueue) { _ in }
        for cycle in 0..<cycles {
            switch cycle % 4 {
            case 0:  // token dropped
                var token: ObservationToken? = longLived.observe(\.value, queue: queue) { _ in }
                longLived.value = cycle + 1
                result.delivered += queue.drain()
                withExtendedLifetime(token) {}
                token = nil
            case 1:  // invalidate()
                let token = longLived.observe(\.value, observer: observer, queue: queue) { observer, _ in
                    observer.seen += 1
                }
                longLived.value = cycle + 1
                result.delivered += queue.drain()
                token.invalidate()
            case 2:  // observed object released, with its delivery pending
                var object: RelLeakModel? = RelLeakModel()
                let token = object!.observe(\.value, queue: queue) { _ in }
                object!.value = cycle + 1
                object = nil
                result.delivered += queue.drain()
                if token.isValid { result.failures.append("lane \(lane) cycle \(cycle): token outlived its object") }
            default:  // observer released
                var gone: RelLeakObserver? = RelLeakObserver()
                let token = longLived.observe(\.value, observer: gone!, queue: queue) { observer, _ in
                    observer.seen += 1
                }
                longLived.value = cycle + 1
                result.delivered += queue.drain()
                gone = nil
                longLived.value = -cycle - 1
                result.delivered += queue.drain()
                if token.isValid { result.failures.append("lane \(lane) cycle \(cycle): token outlived its observer") }
            }
            if result.failures.count > 10 { break }
        }
        anchor.invalidate()
        // An ended token's pending delivery stays queued until the next drain (see
        // `endedTokenWithAPendingDeliveryDoesNotKeepAnUndrainedQueueAlive`).
        anchorQueue.drain()
        let edges = longLived.observedPropertyCount
        if edges != 0 { result.failures.append("lane \(lane): long-lived object still has \(edges) edges") }
        if queue.pendingCount != 0 { result.failures.append("lane \(lane): queue still holds \(queue.pendingCount)") }
        if !longLived.observedProperties.isEmpty {
            result.failures.append("lane \(lane): still observed: \(longLived.observedProperties)")
        }
        return result
    }
}
