import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a pushed value compares with what the destination holds now.
enum BindingComparison {
    case same, different
    /// The values can't be compared (not `Equatable`, not a class reference), or the
    /// destination can't be read here.
    case unknown
}

/// Decides whether a push writes: called by a push with the value it would write (through
/// `compare`, only when the rules need it), just before it writes.
typealias BindingGate = (_ compare: () -> BindingComparison) -> Bool

/// What a push did.
enum BindingPushOutcome {
    /// Wrote (or handed to the destination's queue) a value.
    case applied
    /// Wrote nothing: an operator stopped the value, or the rules held it.
    case held
    /// The destination is gone: the binding ends.
    case gone
    /// Handed to the destination's queue, which writes it (`BindingLink.land`) and counts it.
    case handedOver
}

/// One directed binding that writes a model — a pipeline bound to a model property (directly,
/// through a path, or by name), a pair of a group binding, one direction of a two-way binding —
/// and the rules that make a change cross a cycle of bindings once (docs/Bindings.md, "Cycles
/// and changes that meet").
///
/// Each change carries a number (``BindingWave``); each property a binding reads or writes
/// directly holds the number of the last change it took (``BindingMember``). A push carries
/// the number of its source's change (the largest, for several sources) and writes only if:
///
/// 1. the destination holds no later change (a later change wins where two meet);
/// 2. the binding did not push this change already (a change crosses a binding once); and
/// 3. the destination does not hold this very change already, unless the value differs
///    (`Equatable` values, class references), which happens where an operator changed the
///    value on the way: the value goes around once more.
///
/// A change that comes back to a binding that pushed it, with a value that still differs from
/// the destination's, can't settle: a debug build stops naming the cycle; a release build
/// writes nothing more and logs once (`reportCycle()`).
///
/// Bindings that write no model (to a plain object, postings) never take part: they push
/// every delivery, as any token runs, and cost nothing more.
///
/// `@unchecked Sendable`: each field is atomic, set once before use, or released like a callback.
final class BindingLink: @unchecked Sendable {
    enum Trigger {
        /// A queued delivery of the binding's subscription, in a drain of `queue`.
        case delivery
        /// Pushed by a wave of `queue` after the push that changed its source.
        case later
        /// A change of a source at a set (`.immediate`), or `fire()`.
        case change
        /// At creation (`.initial`) or `now()`: a new change, written whatever the rules say;
        /// its sources keep the changes they hold.
        case explicit
        /// A destination path now leads to another object: bring it up to date with the
        /// change the source holds.
        case refresh
    }

    /// Runs the binding's pipeline (given the link, to hand a value over to another queue) and
    /// writes what comes through, if `gate` lets it.
    typealias Pusher =
        @Sendable (
            _ link: BindingLink, _ gate: BindingGate, _ isRefresh: Bool
        ) -> BindingPushOutcome

    let site: CreationSite
    /// The queue whose drains deliver this binding (where it reads its source).
    let queue: CoalescingQueue
    /// The queue the value is written on, when it is not `queue` (a two-way binding across
    /// queues): the push hands the value over, and `land` writes it there.
    let landingQueue: CoalescingQueue?
    /// The source properties' records; a binding that reads paths keeps their change in
    /// `pathOrigin` instead.
    let sources: [BindingMember]
    /// The destination property's record, for a destination that is one `@Observed` property
    /// of a fixed object; nil for destination paths and names (their change is not tracked).
    let destination: BindingMember?
    /// The destination object, for `cutOffBinding`.
    let destinationID: ObjectIdentifier?
    /// Whether `cutOffBinding` ends only this binding's own subscription (a pair of a group),
    /// not the token.
    let cutsAlone: Bool

    private let pathOrigin = Atomic<UInt64>(0)
    /// Whether the source's change was timed since the last push (else a delivery times it).
    private let heard = Atomic<Bool>(false)
    private let lastPushed = Atomic<UInt64>(0)
    private let reported = Atomic<Bool>(false)
    /// The subscription that delivers the pushes (the token's, or a pair's), set once before
    /// any source is attached.
    @exclusivity(unchecked) private var main: WeakReference?

    /// Bit 0: ended; the bits above: pushes running (see `beginRun`).
    private let runState = Atomic<UInt64>(0)
    /// Released by whoever sees the link ended with no push running, like a subscription's
    /// callback.
    @exclusivity(unchecked) private var pusher: Pusher?
    @exclusivity(unchecked) private var destinationKeyPath: (@Sendable () -> AnyKeyPath?)?

    init(
        site: CreationSite, queue: CoalescingQueue, landingQueue: CoalescingQueue? = nil,
        sources: [BindingMember], destination: BindingMember?, destinationID: ObjectIdentifier?,
        cutsAlone: Bool = false, destinationKeyPath: (@Sendable () -> AnyKeyPath?)?,
        push: @escaping Pusher
    ) {
        self.site = site
        self.queue = queue
        self.landingQueue = landingQueue
        self.sources = sources
        self.destination = destination
        self.destinationID = destinationID
        self.cutsAlone = cutsAlone
        self.destinationKeyPath = destinationKeyPath
        pusher = push
    }

    deinit {
        for source in sources { source.release() }
        destination?.release()
    }

    /// Sets the subscription that delivers the pushes. Before any of the link's subscriptions
    /// is attached.
    func start(main subscription: Subscription) {
        main = WeakReference(subscription)
    }

    var isActive: Bool { runState.load(ordering: .acquiring) & 1 == 0 }

    /// Counts a push in, unless the link ended.
    private func beginRun() -> Bool {
        var current = runState.load(ordering: .relaxed)
        while true {
            if current & 1 != 0 { return false }
            let (exchanged, original) = runState.compareExchange(
                expected: current, desired: current &+ 2, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts a push out; the last one out after `end()` releases the closures.
    private func finishRun() {
        let before = runState.wrappingSubtract(2, ordering: .acquiringAndReleasing).oldValue
        if before == 3 { releaseClosures() }
    }

    /// Ends the link (its subscriptions ended): no push starts after this returns, and the
    /// closures are released (by the running push, if one is running). Idempotent.
    func end() {
        let before = runState.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue
        if before == 0 { releaseClosures() }
    }

    private func releaseClosures() {
        let released = (pusher, destinationKeyPath)
        pusher = nil
        destinationKeyPath = nil
        withExtendedLifetime(released) {}
    }

    /// Ends the binding for `cutOffBinding`: the token, or only this pair of a group.
    func cutOff() {
        guard let subscription = main?.load(as: LinkSubscription.self) else { return }
        if cutsAlone, let group = subscription.group {
            group.endMembers(of: self)
        } else {
            subscription.end()
        }
    }

    /// The destination key path, for `cutOffBinding`.
    var writtenKeyPath: AnyKeyPath? {
        guard beginRun() else { return nil }
        defer { finishRun() }
        return destinationKeyPath?()
    }

    /// Whether the subscription that delivers the pushes is pending.
    private var isPending: Bool {
        main?.load(as: Subscription.self)?.isPending ?? false
    }

    // MARK: Hearing of changes

    /// A source of this binding is about to become pending for a change (the subscription's
    /// `admitsChange`): times the change, and returns whether the subscription should become
    /// pending. Not when a push of this binding's queue made the change in its drain: the
    /// wave pushes this binding after that push instead. Not when the binding is pending
    /// anyway (a hub a source made pending).
    func sourceWillChange(_ member: BindingMember?) -> Bool {
        let wave = BindingWave.current
        let pushing = wave?.origin ?? 0
        if let member { member.timeChange() } else { stamp(path: pushing != 0 ? pushing : BindingClock.next()) }
        heard.store(true, ordering: .releasing)
        if isPending { return false }
        if pushing != 0, let wave, let waveQueue = wave.queue, waveQueue === queue {
            wave.pushLater(self)
            return false
        }
        return true
    }

    private func stamp(path origin: UInt64) {
        pathOrigin.store(origin, ordering: .relaxed)
    }

    /// The change the source holds: the latest of its properties' and paths'.
    private var sourceOrigin: UInt64 {
        var origin = pathOrigin.load(ordering: .relaxed)
        for source in sources { origin = max(origin, source.origin.load(ordering: .relaxed)) }
        return origin
    }

    // MARK: Pushing

    /// Pushes as `trigger` says. A queued delivery starts a wave of `queue` and counts in the
    /// drain: a push that wrote nothing takes itself off the count, pushes made for the wave
    /// add themselves.
    ///
    /// - Parameters:
    ///   - origin: For `.change`, the change the set carries (timed by the subscription).
    ///   - member: For `.change`, the source property that changed; nil for a path.
    @discardableResult
    func run(
        _ trigger: Trigger, origin: UInt64 = 0, changed member: BindingMember? = nil, queued: Bool = false
    ) -> BindingPushOutcome {
        guard beginRun() else { return .held }
        defer { finishRun() }
        if queued {
            let wave = BindingWave(queue: queue)
            let outcome = wave.run { push(in: wave, trigger, origin, member) }
            let adjustment = (outcome == .applied ? 0 : -1) + wave.laterPushes
            if adjustment != 0 { queue.countAdjustment.add(adjustment, ordering: .relaxed) }
            return outcome
        }
        if let wave = BindingWave.current { return push(in: wave, trigger, origin, member) }
        let wave = BindingWave(queue: nil)
        return wave.run { push(in: wave, trigger, origin, member) }
    }

    /// A push the wave makes after the push that changed this binding's source. Whether it
    /// wrote.
    func pushLater(in wave: BindingWave) -> Bool {
        guard beginRun() else { return false }
        defer { finishRun() }
        return push(in: wave, .later, 0, nil) == .applied
    }

    private func push(
        in wave: BindingWave, _ trigger: Trigger, _ changeOrigin: UInt64, _ member: BindingMember?
    ) -> BindingPushOutcome {
        switch trigger {
        case .delivery, .later:
            // Not timed by a source (a `schedule()`, a path walked again): a change made now.
            if !heard.exchange(false, ordering: .acquiringAndReleasing) { stampAll(BindingClock.next()) }
        case .change:
            if member == nil { stamp(path: changeOrigin) }
        case .explicit, .refresh:
            break
        }
        // An explicit push is a new change of its own, but not one of its sources: they may be
        // other bindings' destinations, whose pending changes it must not make look older.
        let origin = trigger == .explicit ? BindingClock.next() : sourceOrigin
        if trigger != .refresh, origin < (destination?.origin.load(ordering: .relaxed) ?? 0) { return .held }
        guard let pusher else { return .held }
        let saved = wave.origin
        defer { wave.origin = saved }
        let outcome = pusher(self, { compare in admits(origin, trigger, compare, wave) }, trigger == .refresh)
        if outcome == .applied || outcome == .handedOver, trigger != .refresh,
            lastPushed.load(ordering: .relaxed) < origin
        {
            lastPushed.store(origin, ordering: .relaxed)
        }
        return outcome
    }

    private func stampAll(_ origin: UInt64) {
        for source in sources { source.origin.store(origin, ordering: .relaxed) }
        stamp(path: origin)
    }

    /// The gate of one push of `origin` (see the type's rules); sets the change the write
    /// carries when it lets the push write.
    private func admits(
        _ origin: UInt64, _ trigger: Trigger, _ compare: () -> BindingComparison, _ wave: BindingWave
    ) -> Bool {
        if trigger != .refresh {
            let held = destination?.origin.load(ordering: .relaxed) ?? 0
            if origin < held { return false }
            if lastPushed.load(ordering: .relaxed) >= origin {
                // This change crossed this binding already. Coming back with a value that
                // still differs, it can't settle.
                // (A change that reached the source twice by two routes of no cycle — two
                // bindings of one property into this one's source — meets it again too: that is
                // no cycle, and the binding just writes nothing.)
                if destination != nil, origin == held, compare() == .different, let cycle = cycleThroughSelf() {
                    reportCycle(cycle)
                }
                return false
            }
            if destination != nil, origin == held, compare() != .different { return false }
            // The value lands elsewhere: `land` times the destination there.
            if landingQueue == nil { destination?.origin.store(origin, ordering: .relaxed) }
        }
        wave.origin = origin
        return true
    }

    /// Writes a value handed over from `queue` on `landingQueue` (a notice in its drain), with
    /// the rules checked again against what the destination holds there.
    func land(origin: UInt64, _ apply: (BindingGate) -> BindingPushOutcome) {
        guard let landingQueue, beginRun() else { return }
        defer { finishRun() }
        let wave = BindingWave(queue: landingQueue)
        let outcome = wave.run {
            apply { compare in
                let held = destination?.origin.load(ordering: .relaxed) ?? 0
                if origin < held || (origin == held && compare() != .different) { return false }
                destination?.origin.store(origin, ordering: .relaxed)
                wave.origin = origin
                return true
            }
        }
        let adjustment = (outcome == .applied ? 1 : 0) + wave.laterPushes
        if adjustment != 0 { landingQueue.countAdjustment.add(adjustment, ordering: .relaxed) }
        if outcome == .gone { main?.load(as: Subscription.self)?.end() }
    }

    // MARK: Cycles that can't settle

    /// A change came back to this binding, which pushed it already, and the value it would
    /// write differs from the destination's: the cycle's operators don't agree. A debug build
    /// stops with the cycle's members and where each binding was created; a release build
    /// writes nothing (the wave stops here) and logs once per binding.
    private func reportCycle(_ cycle: [BindingLink]) {
        let message =
            "ObservationTokens: a cycle of bindings cannot settle: a change went around it and came back different, "
            + "so it would go around forever. The cycle: \(describe(cycle)). Each binding of a cycle must write "
            + "back what it read (check the cycle's map and compactMap operators), or break the cycle."
        #if DEBUG
            preconditionFailure(message)
        #else
            guard !reported.exchange(true, ordering: .relaxed) else { return }
            BindingLog.report(message + " (Logged once; the change stopped there.)")
        #endif
    }

    /// The bindings of a cycle through this one, found through the properties they read:
    /// `A.x → B.y (created at File.swift:12) → …`.
    func cycleDescription() -> String {
        guard destination != nil else { return "\(site) (its destination is not one property)" }
        return describe(cycleThroughSelf() ?? [self])
    }

    /// The shortest cycle of bindings through this one (this one first), found breadth-first
    /// from its destination along bindings that write one property; nil if there is none.
    private func cycleThroughSelf() -> [BindingLink]? {
        guard let start = destination else { return nil }
        var paths: [(member: BindingMember, links: [BindingLink])] = [(start, [self])]
        var seen: Set<UInt64> = [start.serial]
        var index = 0
        while index < paths.count {
            let (member, links) = paths[index]
            index += 1
            for link in member.readers where link.isActive {
                if link === self { return links }
                guard let next = link.destination, seen.insert(next.serial).inserted else { continue }
                paths.append((next, links + [link]))
            }
        }
        return nil
    }

    private func describe(_ links: [BindingLink]) -> String {
        var text = links[0].sources.first?.name ?? "a path"
        for link in links {
            text += " → \(link.destination?.name ?? "?") (binding created at \(link.site))"
        }
        return text
    }
}

/// The links of a group binding, for its hub's `now()`; set once, before the token is handed out.
final class BindingLinkList: @unchecked Sendable {  // written once before any reader can run
    var links: [BindingLink] = []
}

/// Where bindings report what a release build does not stop for.
enum BindingLog {
    /// Writes `message` to standard error.
    static func report(_ message: String) {
        let line = message + "\n"
        line.withCString { text in _ = write(2, text, strlen(text)) }
    }
}
