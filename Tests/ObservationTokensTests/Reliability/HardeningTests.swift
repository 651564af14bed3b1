import Dispatch
import Synchronization
import Testing

@testable import ObservationTokens

// Issue 9, items 4, 5, 6 and 7 (see docs/Reliability.md, "Hardening"). Every name starts with
// `Hard` so these fixtures can't clash with those of other suites.

// MARK: - Fixtures

/// A node for paths that loop back (`b.c.a.b`) and for `*`.
///
/// `@unchecked Sendable`: each property is written by one thread at a time, as the library
/// asks of its users.
final class HardNode: ObservableModel, @unchecked Sendable {
    @Observed var a: HardNode? = nil
    @Observed var b: HardNode? = nil
    @Observed var c: HardNode? = nil
    @Observed var int = 0
}

/// A plain class: a reference that is not a model.
final class HardBox: Sendable {
    let number: Int
    init(_ number: Int) { self.number = number }
}

/// A model with properties that another thread owns: a plain property the user guards with
/// a lock of their own, and `@Observed` properties that nobody observes.
///
/// `@unchecked Sendable`: `guarded` is only touched under `lock`; `text` and `box` are
/// written by one thread only, and nobody else reads them (the library must not either).
final class HardCrowded: ObservableModel, ObservationStateObserving, @unchecked Sendable {
    @Observed var observed = 0
    @Observed var child: HardNode? = nil
    @Observed var text = ""
    @Observed var box: HardBox? = nil
    private var guarded: [Int] = []
    // An Int, not `()`: with a zero-sized state TSan once reported a "Swift access race" inside
    // `withLock` between two accesses made under the lock.
    private let lock = RelLock(0)
    let hookCalls = CoreCounter()

    func mutateGuarded(_ number: Int) {
        lock.withLock { _ in
            if guarded.count > 64 { guarded = [] }
            guarded.append(number)
        }
    }

    func observationStateDidChange(forProperty property: String, isObserved: Bool) {
        hookCalls.increment()
    }
}

/// A flag for ending a loop on another thread.
final class HardStop: Sendable {
    private let flag = Atomic<Bool>(false)
    func raise() { flag.store(true, ordering: .releasing) }
    var isRaised: Bool { flag.load(ordering: .acquiring) }
}

// MARK: - Item 4: drain() on two threads

@Suite("Hardening: drain on two threads", .threadStress, .serialized)
struct HardDrainTests {
    /// A drain that finds another one running returns 0 and relies on it: the running drain
    /// must not have decided "nothing left" before the change was queued.
    @Test func drainThatEndsLetsTheNextDrainRun() {
        let queue = CoalescingQueue(target: .manual)
        let model = HardNode()
        let delivered = CoreCounter()
        let counts = CoreRecorder<Int>()
        let once = Atomic<Bool>(false)
        withExtendedLifetime(model) {
            let token = model.observe(\.int, queue: queue) { _ in delivered.increment() }
            // At the end of the first drain, while it is about to return, another thread sets
            // the property and drains.
            queue.setDrainDidEndHook {
                guard !once.exchange(true, ordering: .relaxed) else { return }
                let finished = RelThreads.run(count: 1, timeout: 10) { _ in
                    model.int += 1
                    counts.append(queue.drain())
                }
                #expect(finished)
            }
            counts.append(queue.drain())
            queue.setDrainDidEndHook(nil)
            #expect(delivered.value == 1)
            #expect(counts.entries.reduce(0, +) == 1)
            #expect(queue.pendingCount == 0)
            withExtendedLifetime(token) {}
        }
    }

    /// Thread A drains; thread B sets and drains. Whoever delivers, each round delivers
    /// exactly once and leaves nothing pending.
    @Test func concurrentDrainsNeverStrandAChange() {
        let rounds = RelScale.iterations(3_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let model = HardNode()
        let delivered = CoreCounter()
        withExtendedLifetime(model) {
            let token = model.observe(\.int, queue: queue) { _ in delivered.increment() }
            var stranded = 0
            for round in 1...rounds {
                let counts = RelLock([0, 0])
                let finished = RelThreads.run(count: 2, timeout: 10) { index in
                    if index == 1 { model.int = round }
                    let count = queue.drain()
                    counts.withLock { $0[index] = count }
                }
                #expect(finished)
                let total = counts.withLock { $0[0] + $0[1] }
                if total != 1 || queue.pendingCount != 0 {
                    stranded += 1
                    queue.drain()
                }
            }
            #expect(stranded == 0)
            #expect(delivered.value == rounds)
            withExtendedLifetime(token) {}
        }
    }
}

// MARK: - Item 5: no reflection over values

@Suite("Hardening: introspection reads no other property", .threadStress, .serialized)
struct HardIntrospectionTests {
    /// Each call the issue lists, while another thread mutates a lock-guarded plain property
    /// and unobserved `@Observed` properties (a String and a reference) of the same object.
    @Test func introspectionWhileAnotherThreadMutates() throws {
        let iterations = RelScale.iterations(2_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let model = HardCrowded()
        model.child = HardNode()
        let stop = HardStop()
        let checks = CoreCounter()
        let finished = RelThreads.run(count: 2, timeout: 60) { index in
            if index == 1 {
                var number = 0
                while !stop.isRaised {
                    number += 1
                    model.mutateGuarded(number)
                    model.text = "text \(number)"
                    model.box = HardBox(number)
                }
                return
            }
            defer { stop.raise() }
            let token = model.observe(\.observed, queue: queue) { _ in }
            for _ in 0..<iterations {
                var ok = token.debugDescription.contains("observed")
                ok = ok && model.observerCount(ofProperty: "observed") == 1
                ok = ok && model.observedProperties == ["observed"]
                ok = ok && model.observablePropertyNames == ["observed", "child", "text", "box"]
                // String paths (a name, a wildcard fan-out), created and ended.
                if let path = try? model.observe(.path("child.int"), queue: queue, { _ in }) {
                    ok = ok && path.debugDescription.contains("child.int")
                    path.invalidate()
                } else {
                    ok = false
                }
                if let star = try? model.observe(.path("*.int"), queue: queue, { _ in }) {
                    ok = ok && model.child!.observerCount(ofProperty: "int") == 1
                    star.invalidate()
                } else {
                    ok = false
                }
                if ok { checks.increment() }
            }
            withExtendedLifetime(token) {}
        }
        #expect(finished)
        #expect(checks.value == iterations)
        // Creating and dropping tokens ran the model's hook each time (first in, last out).
        #expect(model.hookCalls.value >= 2 * iterations)
        queue.drain()
    }

    /// A root's deinit names its tokens from the class, with no reflection over the object.
    @Test func deadRootTokensKeepTheirNames() throws {
        let queue = CoalescingQueue(target: .manual)
        var model: HardCrowded? = HardCrowded()
        weak let weakModel = model
        let token = model!.observe(\.text, queue: queue) { _ in }
        let path = try model!.observe(.path("child.int"), queue: queue) { _ in }
        model = nil
        #expect(weakModel == nil)
        #expect(token.debugDescription.contains("HardCrowded text"))
        #expect(path.debugDescription.contains("child.int"))
        #expect(!token.isValid)
    }

    /// Names come from the class: superclass properties first, without an instance.
    @Test func tableIsPerClassAndReadsSerialsOnly() {
        let first = HardCrowded()
        let second = HardCrowded()
        let table = PropertyTable.of(HardCrowded.self)
        #expect(table.entries.map(\.name) == ["observed", "child", "text", "box"])
        #expect(table.entries.map(\.mayHoldModel) == [false, true, false, false])
        // Serials differ per object; the table finds each object's own.
        let serials = table.entries.map { $0.serial(in: first) }
        #expect(Set(serials).count == 4)
        #expect(Set(serials).isDisjoint(with: table.entries.map { $0.serial(in: second) }))
        first.text = "read"
        #expect(table.entry(named: "text")?.value(in: first) as? String == "read")
    }
}

// MARK: - Item 6: tell racing stopTelling

@Suite("Hardening: tell racing stopTelling", .threadStress, .serialized)
struct HardTellTests {
    /// The mechanism: a subscription ended before it starts never attaches.
    @Test func endedSubscriptionNeverAttaches() {
        let queue = CoalescingQueue(target: .manual)
        let model = HardNode()
        let observer = RelCanary("observer")
        let subscription = _ObserverSubscription(
            root: model, observer: observer, target: .keys([TypedKey(partial: \HardNode.int as PartialKeyPath)]),
            options: [], queue: queue, site: CreationSite(fileID: #fileID, line: #line), callback: { _, _ in })
        subscription.end()
        model.start(subscription)
        #expect(model.observerCount(of: \.int) == 0)
        #expect(model.attachedEdgeCount == 0)
    }

    /// The race: afterwards nothing observes, a set and the model's deinit are safe.
    @Test func tellRacingStopTellingLeavesNoObserver() {
        let iterations = RelScale.iterations(2_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let observer = RelCanary("observer")
        weak var weakModel: HardNode?
        do {
            let shared = HardNode()
            weakModel = shared
            race(shared, observer: observer, queue: queue, iterations: iterations)
        }
        #expect(weakModel == nil)
        withExtendedLifetime(observer) {}
    }

    private func race(_ shared: HardNode, observer: RelCanary, queue: CoalescingQueue, iterations: Int) {
        // The threads reach the model through `holder`, which the test empties afterwards: a
        // thread may release its closure after `run` returned.
        let holder = RelLock<HardNode?>(shared)
        let finished = RelThreads.run(count: 2, timeout: 60) { index in
            guard let model = holder.withLock({ $0 }) else { return }
            for _ in 0..<iterations {
                if index == 0 {
                    model.tell(observer, when: \.int, queue: queue) { _, _ in }
                } else {
                    model.stopTelling(observer)
                }
            }
        }
        #expect(finished)
        holder.withLock { $0 = nil }
        shared.stopTelling(observer)
        #expect(shared.observerCount(of: \.int) == 0)
        #expect(shared.attachedEdgeCount == 0)
        shared.int = 1
        #expect(queue.drain() == 0)
    }
}

// MARK: - Item 7

@Suite("Hardening: counts")
struct HardCountTests {
    /// `observerCount` counts observations, not the edges one token has on a property.
    @Test func observerCountCountsObservations() throws {
        let queue = CoalescingQueue(target: .manual)
        let x = HardNode()
        let y = HardNode()
        let z = HardNode()
        x.b = y
        y.c = z
        z.a = x
        defer { z.a = nil }  // break the cycle
        let twice = try x.observe(.paths(["b.int", "b.int"]), queue: queue) { _ in }
        #expect(y.observerCount(ofProperty: "int") == 1)
        #expect(y.observerCount(of: \.int) == 1)
        twice.invalidate()
        let loop = try x.observe(.path("b.c.a.b"), queue: queue) { _ in }
        #expect(x.observerCount(ofProperty: "b") == 1)
        #expect(x.observerCount(of: \.b) == 1)
        let selfLoop = HardNode()
        selfLoop.a = selfLoop
        defer { selfLoop.a = nil }
        let stars = try selfLoop.observe(.path("*.*.*"), queue: queue) { _ in }
        #expect(selfLoop.observerCount(ofProperty: "int") == 1)
        #expect(selfLoop.observerCount(ofProperty: "*") == 1)
        // A second token counts as a second observation.
        let other = x.observe(\.b, queue: queue) { _ in }
        #expect(x.observerCount(of: \.b) == 2)
        withExtendedLifetime((twice, loop, stars, other)) {}
    }

    /// A token ended while its delivery sits in the running drain's batch does not make the
    /// deliveries queued since look fewer.
    @Test func pendingCountInsideACallback() {
        let queue = CoalescingQueue(target: .manual)
        let first = HardNode()
        let second = HardNode()
        let others = [HardNode(), HardNode(), HardNode()]
        let seen = CoreRecorder<Int>()
        let box = RelTokenBox()
        withExtendedLifetime((first, second, others)) {
            let firstToken = first.observe(\.int, queue: queue) { _ in
                for (index, other) in others.enumerated() { other.int = index + 1 }
                box.token?.invalidate()  // pending in this very batch, not in the queue
                seen.append(queue.pendingCount)
            }
            box.token = second.observe(\.int, queue: queue) { _ in }
            let otherTokens = others.map { $0.observe(\.int, queue: queue) { _ in } }
            first.int = 1
            second.int = 1
            #expect(queue.pendingCount == 2)
            #expect(queue.drain() == 4)
            #expect(seen.entries == [3])
            #expect(queue.pendingCount == 0)
            withExtendedLifetime((firstToken, otherTokens)) {}
        }
    }
}

// MARK: - Item 7: TokenBag

@Suite("Hardening: token bags drop ended tokens")
struct HardTokenBagTests {
    /// A bag that collects tokens on objects that die stays as large as its live tokens.
    @Test func bagDropsTokensOfDeadObjects() {
        let queue = CoalescingQueue(target: .manual)
        let bag = TokenBag()
        let survivor = HardNode()
        let live = survivor.observe(\.int, queue: queue) { _ in }
        live.store(in: bag)
        weak var firstEnded: ObservationToken?
        for index in 0..<1_000 {
            let model = HardNode()
            let token = model.observe(\.int, queue: queue) { _ in }
            token.store(in: bag)
            if index == 0 { firstEnded = token }
            // The model dies here: its token ends.
        }
        // At most about twice the live tokens, plus the sweep's minimum.
        #expect(bag.count <= 64)
        #expect(firstEnded == nil)
        #expect(live.isValid)
        survivor.int = 1
        #expect(queue.drain() == 1)
        bag.removeAll()
        #expect(!live.isValid)
    }

    /// Live tokens are never dropped, however many are inserted.
    @Test func bagKeepsEveryLiveToken() {
        let queue = CoalescingQueue(target: .manual)
        let bag = TokenBag()
        let model = HardNode()
        var tokens: [ObservationToken] = []
        for _ in 0..<500 {
            let token = model.observe(\.int, queue: queue) { _ in }
            token.store(in: bag)
            tokens.append(token)
        }
        tokens.removeAll()
        #expect(bag.count == 500)
        model.int = 1
        #expect(queue.drain() == 500)
    }
}

// MARK: - Item 7: key path cache

/// Twenty observed properties, more than the cache's per-property bound.
///
/// `@unchecked Sendable`: see ``HardNode``.
final class HardWide: ObservableModel, @unchecked Sendable {
    @Observed var p0 = 0
    @Observed var p1 = 0
    @Observed var p2 = 0
    @Observed var p3 = 0
    @Observed var p4 = 0
    @Observed var p5 = 0
    @Observed var p6 = 0
    @Observed var p7 = 0
    @Observed var p8 = 0
    @Observed var p9 = 0
    @Observed var p10 = 0
    @Observed var p11 = 0
    @Observed var p12 = 0
    @Observed var p13 = 0
    @Observed var p14 = 0
    @Observed var p15 = 0
    @Observed var p16 = 0
    @Observed var p17 = 0
    @Observed var p18 = 0
    @Observed var p19 = 0

    static var keyPaths: [KeyPath<HardWide, Int>] {
        [
            \.p0, \.p1, \.p2, \.p3, \.p4, \.p5, \.p6, \.p7, \.p8, \.p9,
            \.p10, \.p11, \.p12, \.p13, \.p14, \.p15, \.p16, \.p17, \.p18, \.p19,
        ]
    }
}

@Suite("Hardening: key path cache", .threadStress, .serialized)
struct HardKeyPathCacheTests {
    /// Observing many other properties never evicts a key path: a later token through it
    /// finds it cached and does not read the property again.
    @Test func manyPropertiesDoNotEvictAKeyPath() {
        let queue = CoalescingQueue(target: .manual)
        let model = HardWide()
        let keyPaths = HardWide.keyPaths
        var tokens = keyPaths.map { model.observe($0, queue: queue) { _ in } }
        for keyPath in keyPaths {
            #expect(model.registry.cachedSerial(for: keyPath) != nil)
        }
        tokens.append(model.observe(keyPaths[0], queue: queue) { _ in })
        model.p0 = 1
        #expect(queue.drain() == 2)
        withExtendedLifetime(tokens) {}
    }

    /// A key path resolved on one object is known for its whole class: on a fresh object only
    /// the storage's immutable serial is read, so another thread may be setting the property
    /// while the object's first token through that key path is created.
    @Test func freshObjectsOfAKnownClassAreNotRead() {
        let queue = CoalescingQueue(target: .manual)
        let keyPath = \HardWide.p5
        let first = HardWide()
        let firstToken = first.observe(keyPath, queue: queue) { _ in }
        #expect(PropertyTable.of(HardWide.self).entry(forKeyPath: keyPath)?.name == "p5")
        let count = RelScale.iterations(500, tsanDivisor: 10)
        let models = (0..<count).map { _ in HardWide() }
        let stop = HardStop()
        let created = CoreCounter()
        let finished = RelThreads.run(count: 2, timeout: 60) { index in
            if index == 1 {
                var number = 0
                while !stop.isRaised {
                    for model in models { model.p5 = number }
                    number += 1
                }
                return
            }
            defer { stop.raise() }
            for model in models {
                let token = model.observe(keyPath, queue: queue) { _ in }
                if token.isValid { created.increment() }
                token.invalidate()
            }
        }
        #expect(finished)
        #expect(created.value == count)
        #expect(models.allSatisfy { $0.observerCount(of: keyPath) == 0 })
        queue.drain()
        withExtendedLifetime((first, firstToken)) {}
    }

    /// Key paths built at run time (a new object each time) stay bounded per property.
    @Test func runTimeKeyPathsStayBounded() {
        let queue = CoalescingQueue(target: .manual)
        let model = HardWide()
        for _ in 0..<100 {
            let built = (\HardWide.self).appending(path: \HardWide.p1)
            let token = model.observe(built, queue: queue) { _ in }
            withExtendedLifetime(token) {}
        }
        let cached = model.registry.withLock { state in state.resolvedKeys.count }
        #expect(cached <= ResolvedKeys.limitPerProperty)
    }

    /// The cache itself, on distinct key path objects (a subscript with a run-time argument
    /// makes a new one each time): key paths to one property push out only that property's
    /// oldest, wherever the other property's entry is kept (inline first, second or third, or in
    /// the array); the newest stay found, the pushed-out ones don't, and the count stays bounded.
    @Test(arguments: [0, 1, 2, 3])
    func resolvedKeysPushOutOnlyTheOldestOfTheirOwnProperty(otherPosition: Int) {
        // Given a cache holding another property's key path at `otherPosition`
        var keys = ResolvedKeys()
        func fresh(_ index: Int) -> AnyKeyPath { \[Int].[index] }
        let other = fresh(-1)
        var remembered: [AnyKeyPath] = []
        for index in 0..<otherPosition {
            remembered.append(fresh(index))
            keys.remember(remembered[index], serial: 1)
        }
        keys.remember(other, serial: 2)

        // When many more key paths to the first property are remembered
        for index in otherPosition..<100 {
            remembered.append(fresh(index))
            keys.remember(remembered[index], serial: 1)
        }

        // Then the other property's key path is still found, and of the first property's only the
        // newest `limitPerProperty` are
        #expect(keys.count == ResolvedKeys.limitPerProperty + 1)
        #expect(keys.serial(for: other) == 2)
        let kept = remembered.suffix(ResolvedKeys.limitPerProperty)
        #expect(kept.allSatisfy { keys.serial(for: $0) == 1 })
        #expect(remembered.dropLast(ResolvedKeys.limitPerProperty).allSatisfy { keys.serial(for: $0) == nil })
    }

    /// Run-time key paths push out only key paths to their own property, wherever the cache
    /// keeps them (its first two entries are kept apart): a key path to another property stays
    /// cached, whether it was resolved first, second or third (after one or two of them), and
    /// every token still fires.
    @Test(arguments: [0, 1, 2])
    func runTimeKeyPathsPushOutOnlyTheirOwnProperty(otherPosition: Int) {
        let queue = CoalescingQueue(target: .manual)
        let model = HardWide()
        let other: KeyPath<HardWide, Int> = \HardWide.p2
        func built() -> KeyPath<HardWide, Int> { (\HardWide.self).appending(path: \HardWide.p1) }
        let fired = RelLock(0)
        var tokens: [ObservationToken] = []
        for _ in 0..<otherPosition {
            tokens.append(model.observe(built(), queue: queue) { _ in fired.withLock { $0 += 1 } })
        }
        tokens.append(model.observe(other, queue: queue) { _ in fired.withLock { $0 += 1 } })
        for _ in 0..<100 {
            tokens.append(model.observe(built(), queue: queue) { _ in fired.withLock { $0 += 1 } })
        }
        let (cached, otherIsCached) = model.registry.withLock { state in
            (state.resolvedKeys.count, state.resolvedKeys.serial(for: other) != nil)
        }
        #expect(cached <= ResolvedKeys.limitPerProperty + 1)
        #expect(otherIsCached)
        model.p1 = 1
        model.p2 = 1
        queue.drain()
        #expect(fired.withLock { $0 } == tokens.count)
    }
}
