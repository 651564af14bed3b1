import Synchronization
import Testing

@testable import ObservationTokens

// Fixtures: every type is prefixed with `Debug` so the census can be filtered to them.

/// `@unchecked Sendable` (like the core fixtures): the threads test shares these models; each
/// `@Observed` property is written by one thread only, and the library's bookkeeping and path
/// reads are thread-safe.
final class DebugAddress: ObservableModel, @unchecked Sendable {
    @Observed var zip = ""

    init(zip: String = "") {
        super.init()
        self.zip = zip
    }
}

final class DebugPerson: ObservableModel, @unchecked Sendable {
    @Observed var name = ""
    @Observed var address: DebugAddress?

    /// Replaces the address behind the setter's back: no observer hears of it.
    func replaceAddressSilently(_ address: DebugAddress?) {
        _address.storedValue = address
    }
}

final class DebugCompany: ObservableModel {
    @Observed var boss: DebugPerson?
}

final class DebugViewer {}

/// Collects watchpoint hits.
final class DebugHits: Sendable {
    private let hits = RelLock<[WatchpointHit]>([])
    func append(_ hit: WatchpointHit) { hits.withLock { $0.append(hit) } }
    var all: [WatchpointHit] { hits.withLock { $0 } }
}

private func address(_ object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: ObjectIdentifier(object)), radix: 16)
}

/// The census and the watchpoint handler are process-wide: these tests run one at a time,
/// and look only at the `Debug…` fixture types.
@Suite(.threadStress, .serialized) struct DebuggingTests {
    // MARK: Listing

    @Test func listingNamesPropertyObserverOptionsQueueAndSite() {
        // Given an address observed with an observer, options and a manual queue
        let queue = CoalescingQueue(target: .manual)
        let home = DebugAddress()
        let viewer = DebugViewer()
        let line = #line + 1
        let token = home.observe(\.zip, observer: viewer, options: [.initial, .immediate], queue: queue) { _, _ in }

        // When it is listed
        let report = home.observationReport

        // Then the listing names all of it
        #expect(report.hasPrefix("DebugAddress \(address(home)): 1 observation"))
        #expect(report.contains("  zip:"))
        #expect(report.contains("observer: DebugViewer \(address(viewer))"))
        #expect(report.contains("options: [.initial, .immediate]"))
        #expect(report.contains("queue: manual \(address(queue))"))
        #expect(report.contains("created at ObservationTokensTests/DebuggingTests.swift:\(line)"))
        #expect(!report.contains("WARNING"))
        withExtendedLifetime((token, viewer)) {}
    }

    @Test func listingShowsPathAndTrackedTokensRootedElsewhere() {
        // Given a path token and a tracked token rooted at a person, through its address
        let queue = CoalescingQueue(target: .manual)
        let home = DebugAddress()
        let person = DebugPerson()
        person.address = home
        let path = try? person.observe(.path("address.zip"), queue: queue) { _ in }
        let tracked = person.observe(queue: queue) { person in _ = person.address?.zip }

        // When the address is listed
        let report = home.observationReport

        // Then both are there, with their root
        #expect(report.contains("2 observations"))
        #expect(
            report.contains(
                "path \(address(path!.subscription)) \"address.zip\" rooted at DebugPerson \(address(person))"))
        #expect(
            report.contains(
                "tracked \(address(tracked.subscription)) \"tracking closure\" rooted at DebugPerson \(address(person))"
            ))
        withExtendedLifetime((path, tracked)) {}
    }

    @Test func listingOfAnUnobservedObjectSaysSo() {
        let home = DebugAddress()
        #expect(home.observationReport == "DebugAddress \(address(home)): no observations")
        // A token that ended leaves nothing listed.
        let token = home.observe(\.zip, queue: CoalescingQueue(target: .manual)) { _ in }
        token.invalidate()
        #expect(home.observationReport == "DebugAddress \(address(home)): no observations")
    }

    @Test func listingShowsObserverLifetimeObservationsUnderTheirProperty() {
        let home = DebugAddress()
        let viewer = DebugViewer()
        home.tell(viewer, when: \.zip, queue: CoalescingQueue(target: .manual)) { _, _ in }
        let report = home.observationReport
        #expect(report.contains("  zip:\n    tell 0x"))
        #expect(report.contains("observer: DebugViewer \(address(viewer))"))
        home.stopTelling(viewer)
        withExtendedLifetime(viewer) {}
    }

    // MARK: Stale wiring

    @Test func staleWiringIsFlaggedWithAWarningNamingPathAndObjects() {
        // Given a path token through a person's address
        let queue = CoalescingQueue(target: .manual)
        let old = DebugAddress()
        let new = DebugAddress()
        let person = DebugPerson()
        person.address = old
        let token = try? person.observe(.path("address.zip"), queue: queue) { _ in }
        #expect(!person.observationReport.contains("WARNING"))

        // When the address is replaced behind the setter's back
        person.replaceAddressSilently(new)

        // Then both the person's and the old address's listings warn, naming both addresses
        for report in [person.observationReport, old.observationReport] {
            #expect(report.contains("WARNING: stale wiring: path \"address.zip\""))
            #expect(report.contains("rooted at DebugPerson \(address(person))"))
            #expect(report.contains("is still attached to DebugAddress \(address(old))"))
            #expect(report.contains("but now runs through DebugAddress \(address(new))"))
        }

        // And the manual trigger rewires the path, which clears the warning
        person.propertyDidChange(\.address)
        #expect(!person.observationReport.contains("WARNING"))
        #expect(!old.observationReport.contains("DebugPerson"))
        #expect(new.observationReport.contains("rooted at DebugPerson \(address(person))"))
        withExtendedLifetime(token) {}
    }

    // MARK: Census

    @Test func censusCountsLiveTokensByTypeAndSiteOldestFirst() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let home = DebugAddress()
        person.address = home

        // Given two tokens from one line on the person, then one on the address
        var tokens: [ObservationToken] = []
        let personLine = #line + 1
        for _ in 0..<2 { tokens.append(person.observe(\.name, queue: queue) { _ in }) }
        let homeLine = #line + 1
        tokens.append(home.observe(\.zip, queue: queue) { _ in })
        // A path token rooted at the person, attached to both: counted once, at its root
        let pathLine = #line + 1
        tokens.append(try! person.observe(.path("address.zip"), queue: queue) { _ in })

        // Then the census groups them, oldest object first
        let mine = ObservationDebugging.census().filter { $0.observedType.hasPrefix("Debug") }
        let file = "ObservationTokensTests/DebuggingTests.swift"
        #expect(
            mine == [
                .init(observedType: "DebugPerson", site: "\(file):\(personLine)", count: 2),
                .init(observedType: "DebugPerson", site: "\(file):\(pathLine)", count: 1),
                .init(observedType: "DebugAddress", site: "\(file):\(homeLine)", count: 1),
            ])
        #expect(ObservationDebugging.censusReport().contains("2 × DebugPerson at \(file):\(personLine)"))

        // When tokens are released, the census follows
        tokens.removeAll()
        #expect(ObservationDebugging.census().filter { $0.observedType.hasPrefix("Debug") }.isEmpty)
        withExtendedLifetime((person, home)) {}
    }

    @Test func censusListsNothingWhenOff() {
        ObservationDebugging.isCensusEnabled = false
        let person = DebugPerson()
        let token = person.observe(\.name, queue: CoalescingQueue(target: .manual)) { _ in }
        #expect(!ObservationDebugging.census().contains { $0.observedType == "DebugPerson" })
        #expect(ObservationDebugging.censusReport().hasPrefix("Census off"))
        withExtendedLifetime(token) {}
    }

    @Test func censusHoldsObjectsWeakly() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        var person: DebugPerson? = DebugPerson()
        weak let weakPerson = person
        // A token kept after its object is gone (a leak of the token, not of the object)
        let token = person!.observe(\.name, queue: CoalescingQueue(target: .manual)) { _ in }
        #expect(ObservationDebugging.census().contains { $0.observedType == "DebugPerson" && $0.count == 1 })

        // When the object goes away
        person = nil

        // Then the census kept it alive no longer, and lists nothing for it
        #expect(weakPerson == nil)
        #expect(!ObservationDebugging.census().contains { $0.observedType == "DebugPerson" })
        #expect(!token.isValid)
    }

    // MARK: Graphviz

    @Test func dotGraphDrawsObserverTokenAndObservedObject() {
        let queue = CoalescingQueue(target: .manual)
        let home = DebugAddress()
        let viewer = DebugViewer()
        let token = home.observe(\.zip, observer: viewer, queue: queue) { _, _ in }
        let dot = ObservationDebugging.dotGraph(of: home)
        let tokenNode = "\"t\(address(token.subscription))\""
        let objectNode = "\"o\(address(home))\""
        let observerNode = "\"w\(address(viewer))\""
        #expect(dot.hasPrefix("digraph observations {"))
        #expect(dot.hasSuffix("}"))
        #expect(dot.contains("\(objectNode) [shape=box, label=\"DebugAddress \(address(home))\"];"))
        #expect(dot.contains("\(tokenNode) -> \(objectNode) [label=\"zip\"];"))
        #expect(dot.contains("\(observerNode) -> \(tokenNode);"))
        withExtendedLifetime((token, viewer)) {}
    }

    @Test func dotGraphOfTheProcessCoversCensusObjects() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let home = DebugAddress()
        let token = home.observe(\.zip, queue: CoalescingQueue(target: .manual)) { _ in }
        #expect(ObservationDebugging.dotGraph().contains("label=\"DebugAddress \(address(home))\""))
        withExtendedLifetime(token) {}
    }

    // MARK: Watchpoints

    @Test func watchpointFollowsAReplacedMiddleObject() {
        let hits = DebugHits()
        ObservationDebugging.setWatchpointHandler { hits.append($0) }
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }

        // Given a watchpoint on company.boss.address.zip
        let old = DebugAddress(zip: "10115")
        let new = DebugAddress(zip: "97210")
        let boss = DebugPerson()
        boss.address = old
        let company = DebugCompany()
        company.boss = boss
        let line = #line + 1
        var watch: ObservationToken? = company.breakOnChange(of: \.boss?.address?.zip)

        // When the middle object is replaced, then the new one changes, then the old one
        boss.address = new
        new.zip = "97211"
        old.zip = "ignored"

        // Then the watchpoint stopped for the first two only, with old and new values
        let seen = hits.all
        #expect(seen.map(\.oldValue) == ["Optional(\"10115\")", "Optional(\"97210\")"])
        #expect(seen.map(\.newValue) == ["Optional(\"97210\")", "Optional(\"97211\")"])
        #expect(seen.first?.site == "ObservationTokensTests/DebuggingTests.swift:\(line)")
        #expect(seen.first?.root == "DebugCompany \(address(company))")
        #expect(seen.first?.description.contains("-> Optional(\"97210\")") == true)

        // And releasing the token removes the watchpoint
        #expect(watch?.isValid == true)
        watch = nil
        new.zip = "after"
        #expect(hits.all.count == 2)
    }

    @Test func breakOnInvokeStopsRightAfterTheTokensCallback() {
        let events = CoreRecorder<String>()
        ObservationDebugging.setWatchpointHandler { hit in events.append(hit.isInvoke ? "break \(hit.path)" : "change")
        }
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }

        // Given a coalescing token and a breakpoint on it
        let queue = CoalescingQueue(target: .manual)
        let home = DebugAddress()
        let token = home.observe(\.zip, queue: queue) { _ in events.append("callback") }
        let breakpoint = token.breakOnInvoke()
        #expect(breakpoint.isValid)

        // When the property changes twice in one tick and the queue drains
        home.zip = "1"
        home.zip = "2"
        _ = queue.drain()

        // Then it stopped once, after the callback, naming the token
        let name = "break token \(address(token.subscription)) \"zip\""
        #expect(events.entries == ["callback", name])

        // And once the token ends, the breakpoint no longer stops
        token.invalidate()
        home.zip = "3"
        _ = queue.drain()
        #expect(events.entries == ["callback", name])
        #expect(!breakpoint.isValid)
    }

    @Test func breakOnInvokeInAReusedPlaceStopsRightBefore() {
        let events = CoreRecorder<String>()
        ObservationDebugging.setWatchpointHandler { hit in events.append(hit.isInvoke ? "break" : "change") }
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }

        // Given a path token, and a path observation of the same property that ended before
        // the token's breakpoint was set (single-property tokens are queued before paths)
        let queue = CoalescingQueue(target: .manual)
        let home = DebugAddress()
        let earlier = home.observe(.chain(KeyPathChain(\DebugAddress.zip)), queue: queue) { _, _ in }
        let token = home.observe(.chain(KeyPathChain(\DebugAddress.zip)), queue: queue) { _, _ in
            events.append("callback")
        }
        earlier.invalidate()
        let breakpoint = token.breakOnInvoke()

        // When the property changes and the queue drains
        home.zip = "1"
        _ = queue.drain()

        // Then it stopped once, in the same drain, right before the callback
        #expect(events.entries == ["break", "callback"])
        withExtendedLifetime((token, breakpoint)) {}
    }

    @Test func breakOnInvokeFollowsPathTokensAndObservers() {
        let events = CoreRecorder<String>()
        ObservationDebugging.setWatchpointHandler { hit in events.append("break") }
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let old = DebugAddress()
        person.address = old
        var viewer: DebugViewer? = DebugViewer()
        let token = try! person.observe(.path("address.zip"), observer: viewer!, queue: queue) { _, _ in
            events.append("callback")
        }
        let breakpoint = token.breakOnInvoke()

        // A replaced middle object: both follow it
        let new = DebugAddress()
        person.address = new
        _ = queue.drain()
        new.zip = "x"
        _ = queue.drain()
        old.zip = "ignored"
        _ = queue.drain()
        #expect(events.entries == ["callback", "break", "callback", "break"])

        // With the observer gone, neither runs
        viewer = nil
        new.zip = "y"
        _ = queue.drain()
        #expect(events.entries.count == 4)
        withExtendedLifetime((token, breakpoint)) {}
    }

    #if DEBUG
        @Test func breakOnInvokeOfATrackedTokenTrapsNamingTheFix() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let home = DebugAddress()
                let tracked = home.observe(queue: CoalescingQueue(target: .manual)) { home in _ = home.zip }
                _ = tracked.breakOnInvoke()
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("on a tracked token"))
            #expect(message.contains("Use breakOnChange(of:) on its root instead."))
        }
    #else
        @Test func breakOnInvokeOfATrackedTokenIsAnEndedToken() {
            let home = DebugAddress()
            let tracked = home.observe(queue: CoalescingQueue(target: .manual)) { home in _ = home.zip }
            #expect(!tracked.breakOnInvoke().isValid)
            withExtendedLifetime(tracked) {}
        }
    #endif

    @Test func breakOnInvokeOfAnEndedTokenIsAnEndedToken() {
        let home = DebugAddress()
        let token = home.observe(\.zip, queue: CoalescingQueue(target: .manual)) { _ in }
        token.invalidate()
        #expect(!token.breakOnInvoke().isValid)
    }

    // MARK: Threads

    @Test func reportsRunWhileOtherThreadsRewirePaths() {
        ObservationDebugging.isCensusEnabled = true
        defer { ObservationDebugging.isCensusEnabled = false }
        let rounds = RelScale.iterations(2_000, tsanDivisor: 10)
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let addresses = [DebugAddress(), DebugAddress()]
        person.address = addresses[0]
        let token = try! person.observe(.path("address.zip"), queue: queue) { _ in }
        let reports = CoreCounter()

        // One thread replaces the middle object and sets the leaf; the other lists and counts.
        let finished = RelThreads.run(count: 2, timeout: 60) { index in
            for round in 0..<rounds {
                if index == 0 {
                    person.address = addresses[round % 2]
                    addresses[round % 2].zip = "\(round)"
                } else {
                    _ = person.observationReport
                    _ = addresses[round % 2].observationReport
                    _ = ObservationDebugging.census()
                    _ = ObservationDebugging.dotGraph(of: person)
                    reports.increment()
                }
            }
        }
        #expect(finished)

        // Then every report ran, and the wiring is right once the writer is done
        #expect(reports.value == rounds)
        let report = person.observationReport
        #expect(report.contains("1 observation"))
        #expect(!report.contains("WARNING"))
        let current = rounds % 2 == 0 ? addresses[1] : addresses[0]
        #expect(current.observationReport.contains("rooted at DebugPerson"))
        withExtendedLifetime(token) {}
    }
}
