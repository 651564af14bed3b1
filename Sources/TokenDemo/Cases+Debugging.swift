import ObservationTokens

// Debugging aids: who observes what, stale wiring, the live-token census.

/// A shop with a manager who has a desk: `shop.manager.desk.floor`.
private final class Desk: ObservableModel {
    @Observed var floor = 1
}

private final class Manager: ObservableModel {
    @Observed var desk: Desk?
    /// Where a binding writes the desk's floor.
    @Observed var floorShown = 0

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
    static let debuggingCases: [DemoCase] = [debuggingListing, debuggingKinds, debuggingCensus]

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
        let path = try? manager.observe(.path("desk.floor"), queue: queue) { _ in }
        timeline.step(#"desk.observe(\.floor, observer: label) …; manager.observe(.path("desk.floor")) …"#)
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

    static let debuggingKinds = DemoCase(
        "debugging-kinds",
        group: .debugging,
        summary: "Every kind of token is one line, named by what was written, at the line that wrote it.",
        shows: """
            A `whichOf` token is made of one subscription per key path plus one that delivers; a \
            binding keeps a sentinel in its destination; a path can run through an object twice. The \
            listing, the census and the graph still show each token once, as the call that made it \
            (`whichOf`, `will-change`, `binding`, `tracked` …), named by its key paths, path or key path, \
            with the options it was given.
            """
    ) { timeline in
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let desk = Desk()
        let manager = Manager(desk: desk)
        let shop = Shop()
        shop.manager = manager
        let whichOf = manager.observe(.whichOf([\.desk]), queue: queue) { _, _ in }
        let willChange = desk.observe(.willChange) { _ in }
        let tracked = shop.observe(\.manager?.desk?.floor, queue: queue) { _ in }
        let binding = desk.bind(\.floor, to: manager, \.floorShown, queue: queue)
        timeline.step(
            #"manager.observe(.whichOf([\.desk])); desk.observe(.willChange); shop.observe(\.manager?.desk?.floor); desk.bind(\.floor, to: manager, \.floorShown)"#
        )
        for object in [desk, manager] as [ObservableModel] {
            for line in object.observationReport.split(separator: "\n") { timeline.note(String(line)) }
        }
        let deskReport = desk.observationReport
        let managerReport = manager.observationReport
        timeline.expect(
            "the whichOf token is one line, named by its key path",
            managerReport.contains("whichOf ") && managerReport.contains(#""desk""#), got: managerReport)
        timeline.expect(
            "the will-change token is listed before each set, not as a tell",
            deskReport.contains("  before each set:\n    will-change "), got: deskReport)
        timeline.expect(
            "the tracked token is named by its key path",
            deskReport.contains(#""\Shop.manager?.desk?.floor" rooted at Shop"#), got: deskReport)
        timeline.expect(
            "the binding shows on its destination, under the property it writes",
            managerReport.contains("  floorShown:\n    binding "), got: managerReport)
        let census = ObservationDebugging.census().filter { $0.site.contains("Cases+Debugging.swift") }
        timeline.expect("the census counts each token once", census.map(\.count), equals: [1, 1, 1, 1])
        withExtendedLifetime((whichOf, willChange, tracked, binding)) {}
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
