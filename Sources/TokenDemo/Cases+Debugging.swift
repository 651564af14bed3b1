import ObservationTokens

// Debugging aids: who observes what, stale wiring, the live-token census.

/// A shop with a manager who has a desk: `shop.manager.desk.floor`.
private final class Desk: ObservableModel {
    @Observed var floor = 1
}

private final class Manager: ObservableModel {
    @Observed var desk: Desk?

    init(desk: Desk) {
        super.init()
        self.desk = desk
    }

    /// Moves the manager without the setter: the bug the listing catches.
    func moveSilently(to desk: Desk) {
        _desk.storedValue = desk
    }
}

private final class Shop: ObservableModel {
    @Observed var manager: Manager?
}

/// A view that observes; plain class.
private final class FloorLabel {}

extension DemoCase {
    static let debuggingCases: [DemoCase] = [debuggingListing, debuggingCensus]

    static let debuggingListing = DemoCase(
        "debugging-listing",
        group: .debugging,
        summary: "Who observes this object, from where, and which paths went stale.",
        shows: """
            `observationReport` lists every live observation attached to an object, per property: \
            kind, observer, options, queue and creation site, including paths rooted at other objects \
            that run through it. A path whose middle object was replaced behind the setter's back \
            (`storedValue`) gets a WARNING line; `propertyDidChange(_:)` rewires it.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let desk = Desk()
        let manager = Manager(desk: desk)
        let label = FloorLabel()
        let direct = desk.observe(\.floor, observer: label, queue: queue) { _, _ in }
        let path = try? manager.observe(path: "desk.floor", queue: queue) { _ in }
        timeline.step(#"desk.observe(\.floor, observer: label) …; manager.observe(path: "desk.floor") …"#)
        let report = desk.observationReport
        for line in report.split(separator: "\n") { timeline.note(String(line)) }
        timeline.expect("the listing shows both observations", report.contains("2 observations"), got: report)
        timeline.expect(
            "the path token is listed with its root", report.contains("rooted at Manager"), got: report)

        let newDesk = Desk()
        manager.moveSilently(to: newDesk)
        timeline.step("manager._desk.storedValue = newDesk   — behind the setter's back")
        let stale = manager.observationReport
        for line in stale.split(separator: "\n") where line.hasPrefix("WARNING") { timeline.note(String(line)) }
        timeline.expect("the listing flags the stale path", stale.contains("WARNING: stale wiring"), got: stale)

        manager.propertyDidChange(\.desk)
        timeline.step(#"manager.propertyDidChange(\.desk)"#)
        timeline.expect(
            "the warning is gone", !manager.observationReport.contains("WARNING"), got: manager.observationReport)
        withExtendedLifetime((direct, path, label)) {}
    }

    static let debuggingCensus = DemoCase(
        "debugging-census",
        group: .debugging,
        summary: "The census: live tokens by observed type and creation site, to find leaks.",
        shows: """
            With `ObservationDebugging.isCensusEnabled` on, `census()` groups the live tokens of every \
            object observed since by type and creation site, oldest first. A group that grows each time \
            a screen opens is a leak. On from the start in debug builds; off by default in optimized ones, \
            where nothing is recorded until you switch it on. Tokens cost the same either way.
            """
    ) { timeline in
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        timeline.step("ObservationDebugging.isCensusEnabled = true")
        let queue = CoalescingQueue(target: .manual)
        let shop = Shop()
        var leaked: [ObservationToken] = []
        for _ in 0..<3 { leaked.append(shop.observe(\.manager, queue: queue) { _ in }) }
        timeline.step("three screens each observe shop.manager and keep their token")
        let entries = ObservationDebugging.census().filter { $0.observedType == "Shop" }
        for entry in entries { timeline.note(entry.description) }
        timeline.expect("the census counts the three tokens", entries.map(\.count), equals: [3])

        leaked.removeAll()
        timeline.step("the screens let their tokens go")
        let after = ObservationDebugging.census().filter { $0.observedType == "Shop" }
        timeline.expect("the census is empty for Shop", after.map(\.count), equals: [])
        withExtendedLifetime(shop) {}
    }
}
