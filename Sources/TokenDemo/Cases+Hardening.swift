import ObservationTokens

// What stays small and correct under long use: a bag that outlives the objects it watched.

extension DemoCase {
    static let hardeningCases: [DemoCase] = [bagDropsEndedTokens]

    static let bagDropsEndedTokens = DemoCase(
        "bag-drops-ended-tokens",
        group: .lifecycle,
        summary: "A long-lived TokenBag forgets the tokens of objects that died.",
        shows: """
            a token ends when its observed object deinitializes. A `TokenBag` that keeps collecting \
            tokens on short-lived objects drops the ended ones as it grows, so it stays about as \
            large as its live tokens; live tokens are never dropped.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let bag = TokenBag()
        let kept = Counter()
        kept.observe(\.count, queue: queue) { counter in
            timeline.callback("callback: the kept counter is \(counter.count)")
        }
        .store(in: bag)
        timeline.step(#"kept.observe(\.count) { … }.store(in: bag)"#)

        for _ in 0..<1_000 {
            let shortLived = Counter()
            shortLived.observe(\.count, queue: queue) { _ in }.store(in: bag)
        }
        timeline.step("1,000 times: a new Counter, a token on it stored in the bag; the counter dies at once")
        timeline.note("bag.count = \(bag.count): ended tokens were dropped while the bag grew")
        let count = bag.count

        kept.count = 1
        timeline.step("kept.count = 1")
        let delivered = timeline.endTick(draining: queue)

        timeline.expect("the bag kept at most 64 of 1,001 tokens", count <= 64, got: "\(count)")
        timeline.expect("the live token still fires", delivered, equals: 1)
        withExtendedLifetime(bag) {}
    }
}
