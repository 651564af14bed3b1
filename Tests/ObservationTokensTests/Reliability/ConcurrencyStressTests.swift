import Dispatch
import Synchronization
import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The values the stress setters write.
///
/// Its `==` is how the test learns the exact moment a last write has been stored: to skip
/// equal sets, the library compares old and new value after storing the new one and before
/// notifying anyone, so a callback that this write causes always starts after `==` ran.
struct RelStressValue: Equatable, Sendable {
    var number: Int
    /// Only on the last write to a property: raised when the library compares it.
    var stored: RelFlag?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.stored?.raise()
        rhs.stored?.raise()
        return lhs.number == rhs.number
    }
}

/// Owned by one setter thread during the stress run.
///
/// `@unchecked Sendable`: the library synchronizes token bookkeeping, not values. While the
/// threads run, each instance's `value` is written by exactly one thread; callbacks on other
/// threads read it only once that thread has published (with a sequentially consistent atomic)
/// that it will never write it again.
final class RelStressModel: ObservableModel, @unchecked Sendable {
    @Observed var value = RelStressValue(number: 0)
}

/// Shared by the setter threads: thread `i` is the only writer of `p<i>`.
///
/// `@unchecked Sendable`: as for `RelStressModel`, one writer per property, and reads only
/// after that writer has published that it is done with it.
final class RelSharedModel: ObservableModel, @unchecked Sendable {
    @Observed var p0 = RelStressValue(number: 0)
    @Observed var p1 = RelStressValue(number: 0)
    @Observed var p2 = RelStressValue(number: 0)
    @Observed var p3 = RelStressValue(number: 0)

    subscript(slot slot: Int) -> RelStressValue {
        get {
            switch slot {
            case 0: p0
            case 1: p1
            case 2: p2
            default: p3
            }
        }
        set {
            switch slot {
            case 0: p0 = newValue
            case 1: p1 = newValue
            case 2: p2 = newValue
            default: p3 = newValue
            }
        }
    }

    /// Observes `p<slot>` with a typed key path.
    func observe(slot: Int, queue: CoalescingQueue, _ callback: @escaping @Sendable (RelSharedModel) -> Void)
        -> ObservationToken
    {
        switch slot {
        case 0: observe(\.p0, queue: queue, callback)
        case 1: observe(\.p1, queue: queue, callback)
        case 2: observe(\.p2, queue: queue, callback)
        default: observe(\.p3, queue: queue, callback)
        }
    }
}

/// One observed property that one setter thread owns.
enum RelStressTarget: Sendable, Hashable, CustomStringConvertible {
    case owned(setter: Int, index: Int)
    case shared(model: Int, slot: Int)

    var setter: Int {
        switch self {
        case .owned(let setter, _): setter
        case .shared(_, let slot): slot
        }
    }

    var description: String {
        switch self {
        case .owned(let setter, let index): "owned[\(setter)][\(index)].value"
        case .shared(let model, let slot): "shared[\(model)].p\(slot)"
        }
    }
}

/// A flag that threads raise and read (sequentially consistent).
final class RelFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }
    func raise() { raised.store(true, ordering: .sequentiallyConsistent) }
}

/// What the callbacks saw, and which tokens had ended when.
final class RelStressProbe: Sendable {
    struct State {
        /// Token id → the thread (`pthread_self`) whose `invalidate()` or release returned.
        var endedBy: [Int: UInt] = [:]
        /// Callbacks that provably started after their token had ended.
        var firedAfterEnd: [Int] = []
        var fires: [Int: Int] = [:]
        var finalDrainFires: [Int: Int] = [:]
        /// Values read by callbacks that started after every watched property was settled.
        var settledReads: [Int: [Int]] = [:]
        var finalValues: [RelStressTarget: Int] = [:]
        var setsPerSetter: [Int: Int] = [:]
        var keptAlive: [ObservationToken] = []
    }

    /// Raised after every thread has been joined, before the final drain.
    let isFinalDrain = RelFlag()
    let state = RelLock(State())

    /// Called first thing in every callback. `settled` says whether the last write to every
    /// property the token watches had been stored when the callback started; only then are the
    /// values read (through `read`), because only then is no thread writing them any more.
    func fired(_ id: Int, settled: Bool, read: () -> [Int]) {
        let isFinal = isFinalDrain.isRaised
        let values = settled ? read() : nil
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        state.withLock { state in
            // Sound without timestamps: the end was recorded before this callback started if
            // this callback runs on the thread that ended the token, or in the final drain.
            if let ender = state.endedBy[id], isFinal || ender == me {
                state.firedAfterEnd.append(id)
            }
            state.fires[id, default: 0] += 1
            if isFinal { state.finalDrainFires[id, default: 0] += 1 }
            if let values { state.settledReads[id] = values }
        }
    }

    /// Records that the token `id` has ended; call after `invalidate()` or the release returned.
    func markEnded(_ id: Int) {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        state.withLock { $0.endedBy[id] = me }
    }
}

/// Everything the threads share. Immutable references; see the model types for the values.
///
/// Each setter alternates between two kinds of writes:
/// - its slot `p<i>` of the 4 shared models, round-robin, until the very end (four threads
///   contend for those objects' locks);
/// - its owned objects, one after the other: `writesPerOwned` writes to one object, then never
///   again. Every owned object thus has its own "last write", made while other threads drain,
///   so the run checks hundreds of last changes per thread, not a handful.
final class RelStressWorld: Sendable {
    static let setterCount = 4
    static let churnCount = 2
    static let sharedModels = 4
    static let writesPerOwned = 250
    static let victimsPerSharedTarget = 8

    let sets: Int
    let owned: [[RelStressModel]]
    let shared: [RelSharedModel]
    let targets: [RelStressTarget]
    private let index: [RelStressTarget: Int]
    /// Per target, around its last write: raised by the setter right before it…
    let lastWriteStarted: [RelFlag]
    /// …by the library's `==` call right after storing it (see `RelStressValue`)…
    let lastWriteStored: [RelFlag]
    /// …and by the setter when the setter returned.
    let settled: [RelFlag]
    let queue = CoalescingQueue(target: .manual)
    let probe = RelStressProbe()
    let settersFinished = Atomic<Int>(0)
    private let ids = Atomic<Int>(0)

    init(setsPerThread sets: Int) {
        self.sets = sets
        let ownedCount = (Self.ownedWrites(sets) + Self.writesPerOwned - 1) / Self.writesPerOwned
        owned = (0..<Self.setterCount).map { _ in (0..<ownedCount).map { _ in RelStressModel() } }
        shared = (0..<Self.sharedModels).map { _ in RelSharedModel() }
        var targets: [RelStressTarget] = []
        for model in 0..<Self.sharedModels {
            for slot in 0..<Self.setterCount { targets.append(.shared(model: model, slot: slot)) }
        }
        for setter in 0..<Self.setterCount {
            for index in 0..<ownedCount { targets.append(.owned(setter: setter, index: index)) }
        }
        self.targets = targets
        index = Dictionary(uniqueKeysWithValues: targets.enumerated().map { ($1, $0) })
        lastWriteStarted = targets.map { _ in RelFlag() }
        lastWriteStored = targets.map { _ in RelFlag() }
        settled = targets.map { _ in RelFlag() }
    }

    static func sharedWrites(_ sets: Int) -> Int { (sets + 1) / 2 }
    static func ownedWrites(_ sets: Int) -> Int { sets / 2 }

    /// The `n`th write of `setter`: which property, and whether it is the last write to it.
    func plan(setter: Int, write n: Int) -> (target: RelStressTarget, isLast: Bool) {
        let k = n / 2
        if n % 2 == 0 {
            let model = k % Self.sharedModels
            return (.shared(model: model, slot: setter), k >= Self.sharedWrites(sets) - Self.sharedModels)
        }
        let object = k / Self.writesPerOwned
        let isLast = k % Self.writesPerOwned == Self.writesPerOwned - 1 || k == Self.ownedWrites(sets) - 1
        return (.owned(setter: setter, index: object), isLast)
    }

    func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }

    /// Called first thing in a callback: whether the last write to every property in
    /// `watched` had been stored. Only then may the callback read them (no thread writes them
    /// any more), and only such a callback can show that the last change was delivered.
    func lastWritesStored(_ watched: [RelStressTarget]) -> Bool {
        watched.allSatisfy { target in
            let index = index[target]!
            return lastWriteStored[index].isRaised || settled[index].isRaised
        }
    }

    func hasStartedLastWrite(_ target: RelStressTarget) -> Bool { lastWriteStarted[index[target]!].isRaised }

    /// Writes `number`; `isLast` marks the last write to `target` (the flags around it).
    func write(_ target: RelStressTarget, _ number: Int, isLast: Bool) {
        let value = RelStressValue(number: number, stored: isLast ? lastWriteStored[index[target]!] : nil)
        if isLast { lastWriteStarted[index[target]!].raise() }
        switch target {
        case .owned(let setter, let index): owned[setter][index].value = value
        case .shared(let model, let slot): shared[model][slot: slot] = value
        }
        if isLast { settled[index[target]!].raise() }
    }

    /// Observes `target` on the shared `.manual` queue; the callback reports to the probe.
    func observe(_ target: RelStressTarget, id: Int) -> ObservationToken {
        let probe = probe
        switch target {
        case .owned(let setter, let index):
            return owned[setter][index].observe(\.value, queue: queue) { [unowned self] model in
                probe.fired(id, settled: lastWritesStored([target])) { [model.value.number] }
            }
        case .shared(let model, let slot):
            return shared[model].observe(slot: slot, queue: queue) { [unowned self] model in
                probe.fired(id, settled: lastWritesStored([target])) { [model[slot: slot].number] }
            }
        }
    }
}

/// A token made before the threads start, and what it watches.
struct RelSurvivor {
    let id: Int
    let token: ObservationToken
    let watches: [RelStressTarget]
}

/// What the churn threads hand back after the run.
struct RelChurnResults {
    /// Tokens they created on the setters' properties and kept alive to the end;
    /// `mustDeliver` when the setter had not started its last write to that property by the
    /// time `observe` returned.
    var kept: [(id: Int, target: RelStressTarget, mustDeliver: Bool)] = []
    /// Change tokens on objects they released with a delivery pending: id → the value they set.
    var orphans: [Int: Int] = [:]
    var created = 0
    var victimsEnded = 0
}

/// Tokens owned by one churn thread. `@unchecked Sendable`: handed over before the threads
/// start and touched only by that thread afterwards.
final class RelVictims: @unchecked Sendable {
    var tokens: [(id: Int, token: ObservationToken)] = []
}

/// An `Equatable` value whose `==` can run a hook. The library calls `==` while delivering a
/// `.endpointChanges` token: after it decided to run the callback, before it calls it.
struct RelHookedValue: Equatable, Sendable {
    var value: Int

    static let hook = RelLock<(@Sendable () -> Void)?>(nil)

    static func == (lhs: Self, rhs: Self) -> Bool {
        let hook = Self.hook.withLock { $0 }
        hook?()
        return lhs.value == rhs.value
    }
}

/// `@unchecked Sendable`: `value` is set on the test's thread before another thread is involved.
final class RelHookedModel: ObservableModel, @unchecked Sendable {
    @Observed var value = RelHookedValue(value: 0)
}

@Suite(.threadStress, .serialized) struct ConcurrencyStressTests {
    static let setsPerThread = RelScale.iterations(250_000, tsanDivisor: 10)

    /// Given 4 threads that each set their own properties `setsPerThread` times (see
    /// `RelStressWorld` for the pattern), and 2 threads
    /// that meanwhile create tokens on those properties, end pre-made tokens (invalidate or
    /// drop), observe-change-release objects of their own and drain the shared queue, all
    /// released together by a barrier;
    /// when the threads are joined and the queue drained once more;
    /// then nothing deadlocked, no ended token fired, no token fired twice in one drain, and
    /// every live token got a delivery that started after the last write to each property it
    /// watches and read the last values written.
    @Test(.timeLimit(.minutes(1)))
    func concurrentSettersAndTokenChurnNeverLoseTheLastChangeNorFireAfterEnd() throws {
        let world = RelStressWorld(setsPerThread: Self.setsPerThread)
        let probe = world.probe
        let sets = Self.setsPerThread

        // Survivors: made before the threads start and never touched by them.
        var survivors: [RelSurvivor] = []
        for target in world.targets {
            let id = world.nextID()
            survivors.append(RelSurvivor(id: id, token: world.observe(target, id: id), watches: [target]))
        }
        for (index, model) in world.shared.enumerated() {
            let slots = (0..<RelStressWorld.setterCount).map { RelStressTarget.shared(model: index, slot: $0) }
            let id = world.nextID()
            let token = model.observe([\.p0, \.p1, \.p2, \.p3], queue: world.queue) { model in
                probe.fired(id, settled: world.lastWritesStored(slots)) {
                    [model.p0.number, model.p1.number, model.p2.number, model.p3.number]
                }
            }
            survivors.append(RelSurvivor(id: id, token: token, watches: slots))
            let wildcardID = world.nextID()
            let wildcard = try model.observe(.path("*"), queue: world.queue) { model in
                probe.fired(wildcardID, settled: world.lastWritesStored(slots)) {
                    [model.p0.number, model.p1.number, model.p2.number, model.p3.number]
                }
            }
            survivors.append(RelSurvivor(id: wildcardID, token: wildcard, watches: slots))
        }

        // Victims: made before the threads start, ended by the churn threads while setters run.
        let victims = (0..<RelStressWorld.churnCount).map { _ in RelVictims() }
        var victimCount = 0
        for target in world.targets {
            let count = if case .shared = target { RelStressWorld.victimsPerSharedTarget } else { 1 }
            for _ in 0..<count {
                let id = world.nextID()
                victims[victimCount % victims.count].tokens.append((id, world.observe(target, id: id)))
                victimCount += 1
            }
        }
        let churnResults = RelLock(RelChurnResults())

        // When: all six threads start together; after joining them, one more drain.
        let threadCount = RelStressWorld.setterCount + RelStressWorld.churnCount
        let finished = RelThreads.run(count: threadCount, timeout: 50) { index in
            if index < RelStressWorld.setterCount {
                Self.runSetter(index, sets: sets, world: world)
            } else {
                let churn = index - RelStressWorld.setterCount
                Self.runChurn(churn, world: world, victims: victims[churn], results: churnResults)
            }
        }
        #expect(finished, "threads did not finish within 50 s: deadlock or livelock")
        guard finished else { return }
        probe.isFinalDrain.raise()
        _ = world.queue.drain()

        // Then
        let state = probe.state.withLock { $0 }
        let churn = churnResults.withLock { $0 }
        let finals = state.finalValues
        #expect(state.firedAfterEnd.isEmpty, "tokens fired after they ended: \(state.firedAfterEnd.prefix(20))")
        #expect(state.finalDrainFires.values.allSatisfy { $0 == 1 }, "a token fired twice in one drain")
        #expect(state.setsPerSetter == [0: sets, 1: sets, 2: sets, 3: sets])
        #expect(churn.victimsEnded == victimCount)
        #expect(world.queue.pendingCount == 0)
        #expect(world.queue.drain() == 0)

        var lost: [String] = []
        let expectations =
            survivors.map { ($0.id, $0.watches, true, "pre-made") }
            + churn.kept.map { ($0.id, [$0.target], $0.mustDeliver, "churn-made") }
        for (id, watches, mustDeliver, kind) in expectations {
            let expected = watches.map { finals[$0]! }
            let read = state.settledReads[id]
            if (mustDeliver && read == nil) || (read != nil && read != expected) {
                lost.append(
                    "\(kind) token on \(watches): want \(expected), last settled delivery saw \(read.map { "\($0)" } ?? "nothing")"
                )
            }
        }
        for (id, value) in churn.orphans where state.fires[id] != 1 || state.settledReads[id] != [0, value] {
            lost.append(
                "change token on a released object: fired \(state.fires[id] ?? 0)×, saw \(state.settledReads[id] ?? [])"
            )
        }
        #expect(lost.isEmpty, "lost or wrong last changes:\n\(lost.prefix(20).joined(separator: "\n"))")
        #expect(state.keptAlive.filter { !$0.isValid }.count == churn.orphans.count, "tokens of released objects end")
        let mustDeliver = churn.kept.filter(\.mustDeliver).count
        print(
            """
            stress: \(RelStressWorld.setterCount)×\(sets) sets; churn threads created \(churn.created) tokens and \
            ended \(victimCount) pre-made ones; \(state.fires.values.reduce(0, +)) callbacks; at the end \
            \(survivors.count) pre-made + \(churn.kept.count) churn tokens alive (\(mustDeliver) created before a last write)
            """)
        withExtendedLifetime(survivors) {}
    }

    /// Given a pending `.endpointChanges` token whose value type's `==` (user code the library
    /// runs during delivery) makes another thread call `invalidate()` and waits until that call
    /// has returned;
    /// when the queue drains;
    /// then the callback does not start: "once `invalidate()` returns, the callback never
    /// starts again, even for a change already pending in this tick" (ObservationToken docs).
    @Test(.timeLimit(.minutes(1)))
    func callbackNeverStartsAfterInvalidateReturnedOnAnotherThread() {
        let model = RelHookedModel()
        let queue = CoalescingQueue(target: .manual)
        let flags = RelLock((ran: false, invalidatedElsewhere: false))
        let token = model.observe(\.value, options: .endpointChanges, queue: queue) { _ in
            flags.withLock { $0.ran = true }
        }
        model.value = RelHookedValue(value: 1)
        RelHookedValue.hook.withLock { hook in
            hook = {
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    token.invalidate()
                    flags.withLock { $0.invalidatedElsewhere = true }
                    done.signal()
                }
                done.wait()
            }
        }

        _ = queue.drain()
        RelHookedValue.hook.withLock { $0 = nil }

        let (ran, invalidatedElsewhere) = flags.withLock { $0 }
        #expect(invalidatedElsewhere, "the hook did not run during delivery")
        #expect(!ran, "the callback started after invalidate() had returned on another thread")
    }

    private static func runSetter(_ setter: Int, sets: Int, world: RelStressWorld) {
        var last: [RelStressTarget: Int] = [:]
        for n in 0..<sets {
            let (target, isLast) = world.plan(setter: setter, write: n)
            world.write(target, n + 1, isLast: isLast)
            last[target] = n + 1
        }
        world.probe.state.withLock { state in
            state.finalValues.merge(last) { $1 }
            state.setsPerSetter[setter] = sets
        }
        world.settersFinished.add(1, ordering: .sequentiallyConsistent)
    }

    private static func runChurn(
        _ churn: Int, world: RelStressWorld, victims: RelVictims, results: RelLock<RelChurnResults>
    ) {
        var random = RelRandom(seed: 0xC0FFEE + UInt64(churn))
        var kept: [(id: Int, target: RelStressTarget, mustDeliver: Bool, token: ObservationToken)] = []
        var recent: [(id: Int, target: RelStressTarget, mustDeliver: Bool, token: ObservationToken)] = []
        var orphans: [(id: Int, value: Int, token: ObservationToken)] = []
        var created = 0
        var victimsEnded = 0
        var iteration = 0
        var dropNext = false

        /// Ends a token by dropping the last reference to it or by `invalidate()`, alternately,
        /// and records the end once that has returned. The caller passes the only reference.
        func end(_ id: Int, _ token: inout ObservationToken?) {
            dropNext.toggle()
            if dropNext {
                token = nil  // deinit ends the token, here
            } else {
                token?.invalidate()
            }
            world.probe.markEnded(id)
        }

        while world.settersFinished.load(ordering: .sequentiallyConsistent) < RelStressWorld.setterCount {
            iteration += 1
            // Create a token on a property another thread is setting right now.
            let target = world.targets[random.below(world.targets.count)]
            let id = world.nextID()
            let token = world.observe(target, id: id)
            let entry = (id, target, !world.hasStartedLastWrite(target), token)
            created += 1
            if created % 64 == 0 {
                kept.append(entry)  // kept to the end, and checked
            } else {
                recent.append(entry)
                if recent.count > 24 {
                    let id = recent[0].id
                    var token: ObservationToken? = recent.removeFirst().token
                    end(id, &token)
                }
            }
            // End a pre-made token.
            if iteration % 3 == 0, let id = victims.tokens.last?.id {
                var token: ObservationToken? = victims.tokens.removeLast().token
                end(id, &token)
                victimsEnded += 1
            }
            // Observe an object of our own, change it, and release it while its delivery is
            // pending. The value is written before the delivery is queued, so reading it
            // during the delivery, on whichever thread drains, is safe.
            if iteration % 2 == 0 {
                var object: RelStressModel? = RelStressModel()
                let orphanID = world.nextID()
                let probe = world.probe
                let orphan = object!.observe(.changes(\.value), queue: world.queue) { _, change in
                    probe.fired(orphanID, settled: true) { [change.old.number, change.new.number] }
                }
                object!.value = RelStressValue(number: iteration)
                object = nil
                created += 1
                orphans.append((orphanID, iteration, orphan))
                if orphans.count > 32 {
                    let id = orphans[0].id
                    var token: ObservationToken? = orphans.removeFirst().token
                    end(id, &token)
                }
            }
            if iteration % 8 == 4 * churn {
                _ = world.queue.drain()
            }
        }
        while let id = victims.tokens.last?.id {
            var token: ObservationToken? = victims.tokens.removeLast().token
            end(id, &token)
            victimsEnded += 1
        }
        world.probe.state.withLock { state in
            state.keptAlive += kept.map(\.token) + recent.map(\.token) + orphans.map(\.token)
        }
        results.withLock { results in
            results.kept += (kept + recent).map { ($0.id, $0.target, $0.mustDeliver) }
            for orphan in orphans { results.orphans[orphan.id] = orphan.value }
            results.created += created
            results.victimsEnded += victimsEnded
        }
    }
}
