import Testing

@testable import ObservationTokens

// A single-property token made by a key path literal attaches through the place that makes the
// key path (`_KeySource.site`: the code of a closure without a context), without asking the
// runtime for the key path object once that place's key path was resolved. In optimized builds
// the entry points' closures are such places; elsewhere they keep a context, so these tests
// make their sources from plain functions, which never have one.

// MARK: - Fixtures

/// A model with two properties of one type, so that a site remembered for the wrong property
/// would attach without complaint.
///
/// `@unchecked Sendable`: each property is written by one thread at a time.
class SiteModel: ObservableModel, @unchecked Sendable {
    @Observed var a = 0
    @Observed var b = 0
}

/// A subclass: its own table of properties, where `a` and `b` keep their names.
final class SiteSubModel: SiteModel, @unchecked Sendable {
    @Observed var c = 0
}

/// A subclass that hears when its properties become observed or stop being observed.
final class SiteReportingModel: SiteModel, ObservationStateObserving, @unchecked Sendable {
    let reports = RelLock<[String]>([])

    func observationStateDidChange(forProperty property: String, isObserved: Bool) {
        reports.withLock { $0.append("\(property) \(isObserved)") }
    }
}

func siteKeyPathA() -> AnyKeyPath { \SiteModel.a }
func siteKeyPathB() -> AnyKeyPath { \SiteModel.b }

/// A source whose key path is made by `make`, a plain function: a place of its own.
func siteSource(_ make: @escaping () -> AnyKeyPath) -> _KeySource {
    _KeySource(keyPathOf: make, reader: TypedKey.reader(SiteModel.self, Int.self))
}

/// A token made as the entry points make one from a source.
func siteToken(
    _ model: SiteModel, _ source: _KeySource, queue: CoalescingQueue, fired: RelLock<Int>
) -> ObservationToken? {
    model._start(
        source,
        subscription: _ModelSubscription(
            root: model, target: .property, options: [], queue: queue,
            site: CreationSite(fileID: #fileID, line: #line), callback: { _ in fired.withLock { $0 += 1 } }))
}

@Suite struct KeySiteTests {
    /// A closure that captures something is no place of its own; a plain function is one.
    @Test func onlyAClosureWithoutAContextHasASite() {
        // Given a source made by a plain function, and one made by a closure that captures a
        // key path.
        let captured: AnyKeyPath = \SiteModel.a
        let plain = siteSource(siteKeyPathA)
        let capturing = siteSource { captured }

        // Then the first has a site, the same each time it is made, and the second has none.
        #expect(plain.site != 0)
        #expect(siteSource(siteKeyPathA).site == plain.site)
        #expect(siteSource(siteKeyPathB).site != plain.site)
        #expect(capturing.site == 0)
    }

    /// The second token made at a site attaches through it; each site keeps its own property.
    @Test func tokensMadeAtOneSiteWatchTheirOwnProperty() throws {
        // Given an object and tokens made at two sites, for `a` and for `b`, three each.
        let queue = CoalescingQueue(target: .manual)
        let model = SiteModel()
        let firedA = RelLock(0)
        let firedB = RelLock(0)
        let sourceA = siteSource(siteKeyPathA)
        let sourceB = siteSource(siteKeyPathB)
        var tokens: [ObservationToken] = []
        for _ in 0..<3 {
            tokens.append(try #require(siteToken(model, sourceA, queue: queue, fired: firedA)))
            tokens.append(try #require(siteToken(model, sourceB, queue: queue, fired: firedB)))
        }

        // Then the object knows both sites, each as its own property's.
        let (serialA, serialB) = model.registry.withLock { state in
            (state.resolvedKeys.serial(forSite: sourceA.site), state.resolvedKeys.serial(forSite: sourceB.site))
        }
        #expect(serialA != nil && serialB != nil && serialA != serialB)

        // When `a` is set, then only `a`'s tokens run; when `b` is set, only `b`'s.
        model.a = 1
        #expect(queue.drain() == 3)
        #expect(firedA.withLock { $0 } == 3 && firedB.withLock { $0 } == 0)
        model.b = 1
        #expect(queue.drain() == 3)
        #expect(firedA.withLock { $0 } == 3 && firedB.withLock { $0 } == 3)
        withExtendedLifetime(tokens) {}
    }

    /// A fresh object of a class whose site was resolved attaches through the class's table; a
    /// subclass's objects through theirs.
    @Test func aFreshObjectAttachesThroughTheSiteItsClassKnows() throws {
        // Given a site resolved on two objects of the class (the first resolves the key path,
        // the second finds it in the class's table, which then learns the site).
        let queue = CoalescingQueue(target: .manual)
        let fired = RelLock(0)
        let sourceB = siteSource(siteKeyPathB)
        let earlier = [SiteModel(), SiteModel()]
        let firstTokens = try earlier.map { try #require(siteToken($0, sourceB, queue: queue, fired: fired)) }

        // When a token is made at the same site on fresh objects, of the class and of a subclass
        // (whose table learns the site from its own first objects).
        let fresh = SiteModel()
        #expect(PropertyTable.knownSerial(ofSite: sourceB.site, in: fresh) != nil)
        let freshToken = try #require(siteToken(fresh, sourceB, queue: queue, fired: fired))
        var subTokens: [ObservationToken] = []
        let subs = (0..<3).map { _ in SiteSubModel() }
        for sub in subs { subTokens.append(try #require(siteToken(sub, sourceB, queue: queue, fired: fired))) }

        // Then each knows the site as its own `b`, and a set of `b` runs its token alone.
        #expect(fresh.registry.withLock { $0.resolvedKeys.serial(forSite: sourceB.site) } != nil)
        #expect(PropertyTable.knownSerial(ofSite: sourceB.site, in: subs[2]) != nil)
        fresh.a = 1
        subs[2].a = 1
        subs[2].c = 1
        #expect(queue.drain() == 0)
        fresh.b = 1
        subs[2].b = 1
        #expect(queue.drain() == 2)
        #expect(fired.withLock { $0 } == 2)
        withExtendedLifetime((earlier, firstTokens, freshToken, subTokens)) {}
    }

    /// An object that hears of its properties' observers hears of a token attached through a
    /// site as of any other: once when the first arrives, once when the last leaves.
    @Test func anObjectHearsOfTokensAttachedThroughASite() throws {
        // Given objects of a class that reports observers, whose site for `b` is known to its
        // table (two objects resolve it first) and to the object (a first token there).
        let queue = CoalescingQueue(target: .manual)
        let fired = RelLock(0)
        let sourceB = siteSource(siteKeyPathB)
        let earlier = [SiteReportingModel(), SiteReportingModel()]
        var tokens = try earlier.map { try #require(siteToken($0, sourceB, queue: queue, fired: fired)) }
        let model = SiteReportingModel()
        #expect(PropertyTable.knownSerial(ofSite: sourceB.site, in: model) != nil)

        // When tokens are made at the site on a fresh object, then dropped.
        let first = try #require(siteToken(model, sourceB, queue: queue, fired: fired))
        let second = try #require(siteToken(model, sourceB, queue: queue, fired: fired))
        #expect(model.reports.withLock { $0 } == ["b true"])
        first.invalidate()
        second.invalidate()

        // Then it heard that `b` became observed once, and unobserved once.
        #expect(model.reports.withLock { $0 } == ["b true", "b false"])
        tokens.removeAll()
    }

    /// A site learnt after its key path object (a class's first object, whose first token
    /// resolved the key path before its site was known) takes the first entry, which is
    /// checked inline, and the key path object stays known after it.
    @Test func aSiteLearntAfterItsKeyPathIsCheckedFirst() {
        // Given a cache that knows one key path object.
        var keys = ResolvedKeys()
        let literal: AnyKeyPath = \SiteModel.b
        keys.remember(literal, serial: 7)

        // When the site that makes it is remembered.
        keys.remember(site: 0x1000, serial: 7)

        // Then the site comes first, and both are known.
        #expect(keys.firstIsSite)
        #expect(keys.serial(forSite: 0x1000) == 7)
        #expect(keys.serial(for: literal) == 7)
        #expect(keys.count == 1 && keys.siteCount == 1)
    }

    /// Sites are not key path objects: they don't count against the bound on an object's
    /// cached key paths, and key paths built at run time don't push them out.
    @Test(arguments: [true, false])
    func runTimeKeyPathsLeaveSitesCached(siteFirst: Bool) {
        // Given a cache that knows a site for a property, before or after a key path of it.
        var keys = ResolvedKeys()
        let literal: AnyKeyPath = \SiteModel.b
        if siteFirst {
            keys.remember(site: 0x1000, serial: 7)
            keys.remember(literal, serial: 7)
        } else {
            keys.remember(literal, serial: 7)
            keys.remember(site: 0x1000, serial: 7)
        }

        // When many key paths to the same property, built at run time, are remembered (the
        // cache knows them by identity alone: any new key path objects stand for them).
        var built: [AnyKeyPath] = []
        for index in 0..<40 {
            let keyPath: AnyKeyPath = \[Int].[index]
            built.append(keyPath)
            keys.remember(keyPath, serial: 7)
        }

        // Then the key paths stay bounded, and the site is still known.
        #expect(keys.count == ResolvedKeys.limitPerProperty)
        #expect(keys.siteCount == 1)
        #expect(keys.serial(forSite: 0x1000) == 7)
        #expect(keys.serial(for: built[39]) == 7)
    }
}
