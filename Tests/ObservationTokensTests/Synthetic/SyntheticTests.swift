import Synchronization
import Testing

@testable import ObservationTokens

/// Counts computations by name, per model instance.
final class ComputeCounts: Sendable {
    private let counts = RelLock<[String: Int]>([:])

    func tick(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }

    subscript(name: String) -> Int { counts.withLock { $0[name, default: 0] } }

    func reset() { counts.withLock { $0 = [:] } }
}

struct SynthPoint: Equatable { var x = 0.0, y = 0.0 }
struct SynthSize: Equatable { var width = 0.0, height = 0.0 }
struct SynthRect: Equatable {
    var origin = SynthPoint()
    var size = SynthSize()
}

/// The queue of `Shape`'s eager recomputations: only the serialized suite below drains it.
let synthShapeQueue = CoalescingQueue(target: .manual)

/// EBNObservable's example: `rect` depends on `point` and `size`, which depend on four floats.
/// `@unchecked Sendable`: see ``CorePerson``.
final class SynthShape: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var x = 0.0
    @Observed var y = 0.0
    @Observed var width = 0.0
    @Observed var height = 0.0
    @Computed(
        { (shape: SynthShape) in
            shape.counts.tick("point")
            return SynthPoint(x: shape.x, y: shape.y)
        })
    var point: SynthPoint
    @Computed(
        { (shape: SynthShape) in
            shape.counts.tick("size")
            return SynthSize(width: shape.width, height: shape.height)
        })
    var size: SynthSize
    @Computed(
        { (shape: SynthShape) in
            shape.counts.tick("rect")
            return SynthRect(origin: shape.point, size: shape.size)
        })
    var rect: SynthRect
    /// Not synthetic: invalidating it does nothing.
    var plain = 1
}

/// `@unchecked Sendable`: see ``CorePerson``.
final class SynthPerson: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var firstName = "Ada"
    @Observed var lastName = "Lovelace"
    @Observed var nickname: String?
    @Computed({ (person: SynthPerson) in
        person.counts.tick("fullName")
        return person.firstName + " " + person.lastName
    })
    var fullName: String
    /// A cached nil is a valid value.
    @Computed({ (person: SynthPerson) in
        person.counts.tick("nick")
        return person.nickname
    })
    var nick: String?
}

/// A subclass adds its own computed property on top of the inherited one.
final class SynthEmployee: ObservableModel {
    let counts = ComputeCounts()
    @Observed var company = "Analytical Engines"
    @Observed var name = "Ada"
    @Computed({ (employee: SynthEmployee) in
        employee.counts.tick("badge")
        return employee.name + " @ " + employee.company
    })
    var badge: String
}

final class SynthCycle: ObservableModel {
    @Observed var seed = 1
    @Computed({ (model: SynthCycle) in model.b + 1 }) var a: Int
    @Computed({ (model: SynthCycle) in model.seed > 0 ? model.a + 1 : 0 }) var b: Int
}

@Suite("Synthetic: computed properties")
struct SyntheticComputedTests {
    @Test
    func aReadComputesOnceAndCachesUntilADependencyChanges() {
        let person = SynthPerson()
        #expect(person.fullName == "Ada Lovelace")
        #expect(person.fullName == "Ada Lovelace")
        #expect(person.counts["fullName"] == 1)

        // A dependency change marks it invalid without computing
        person.firstName = "Grace"
        #expect(person.counts["fullName"] == 1)
        #expect(person.invalidSyntheticPropertyNames == ["fullName", "nick"])
        #expect(person.fullName == "Grace Lovelace")
        #expect(person.counts["fullName"] == 2)
        #expect(person.validSyntheticPropertyNames == ["fullName"])
    }

    @Test
    func aChangeOfSomethingNotReadLeavesTheValueValid() {
        let person = SynthPerson()
        _ = person.fullName
        person.nickname = "Countess"
        #expect(person.validSyntheticPropertyNames.contains("fullName"))
        _ = person.fullName
        #expect(person.counts["fullName"] == 1)
    }

    @Test
    func aCachedNilIsValid() {
        let person = SynthPerson()
        #expect(person.nick == nil)
        #expect(person.nick == nil)
        #expect(person.counts["nick"] == 1)
        #expect(person.validSyntheticPropertyNames.contains("nick"))
        person.nickname = "Countess"
        #expect(person.nick == "Countess")
        #expect(person.counts["nick"] == 2)
    }

    @Test
    func readingRectComputesEachOnceAndASizeInputInvalidatesSizeAndRectOnly() {
        let shape = SynthShape()
        _ = shape.rect
        #expect(shape.counts["rect"] == 1)
        #expect(shape.counts["point"] == 1)
        #expect(shape.counts["size"] == 1)

        shape.width = 5
        #expect(shape.invalidSyntheticPropertyNames == ["size", "rect"])
        #expect(shape.validSyntheticPropertyNames == ["point"])
        #expect(shape.rect.size.width == 5)
        #expect(shape.counts["rect"] == 2)
        #expect(shape.counts["point"] == 1)
        #expect(shape.counts["size"] == 2)
    }

    @Test
    func invalidatingByHandInvalidatesDependantsAndSkipsNonSyntheticProperties() {
        let shape = SynthShape()
        _ = shape.rect
        shape.invalidate(\.point)
        #expect(shape.invalidSyntheticPropertyNames == ["point", "rect"])
        // Invalidating does not compute
        #expect(shape.counts["point"] == 1)
        shape.invalidate(\.plain)  // not synthetic: a no-op
        shape.invalidate(\.x)  // @Observed: a no-op
        #expect(shape.validSyntheticPropertyNames == ["size"])

        shape.forceSyntheticPropertiesValid()
        #expect(shape.invalidSyntheticPropertyNames.isEmpty)
        #expect(shape.hasValidSyntheticProperties)

        shape.invalidate([\.size, \.point])
        #expect(shape.invalidSyntheticPropertyNames == ["point", "size", "rect"])
        _ = shape.rect
        shape.invalidateSyntheticProperties()
        #expect(!shape.hasValidSyntheticProperties)
        #expect(shape.counts["rect"] == 2)
    }

    @Test
    func computedPropertiesOfAnotherClassAreFoundToo() {
        let employee = SynthEmployee()
        #expect(employee.badge == "Ada @ Analytical Engines")
        employee.company = "Babbage & Co"
        #expect(employee.invalidSyntheticPropertyNames == ["badge"])
        #expect(employee.badge == "Ada @ Babbage & Co")
        #expect(employee.counts["badge"] == 2)
    }

    @Test
    func aModelWithComputedPropertiesIsReleasedAndItsEdgesOnOtherObjectsGo() {
        let other = SynthPerson()
        weak var weakShape: SynthShape?
        do {
            let shape = SynthShape()
            weakShape = shape
            _ = shape.rect
        }
        #expect(weakShape == nil)
        withExtendedLifetime(other) {}
    }
}

@Suite("Synthetic: observed computed properties", .serialized)
struct SyntheticObservedTests {
    @Test
    func anObservedRectRecomputesEagerlyOnceAtTheEndOfTheTickAndNotifiesOnlyOnChange() {
        let shape = SynthShape()
        let seen = RelLock<[SynthRect]>([])
        let token = shape.observe(\.rect, queue: synthShapeQueue) { shape in
            let rect = shape.rect
            seen.withLock { $0.append(rect) }
        }
        // Observing evaluates at registration
        #expect(shape.counts["rect"] == 1)
        #expect(shape.counts["point"] == 1)
        #expect(shape.counts["size"] == 1)

        // A size input: nothing computed inside the setter; size and rect once at the tick's end
        shape.width = 3
        shape.height = 4
        #expect(shape.counts["rect"] == 1)
        synthShapeQueue.drain()
        #expect(shape.counts["rect"] == 2)
        #expect(shape.counts["size"] == 2)
        #expect(shape.counts["point"] == 1)
        #expect(seen.withLock { $0 } == [SynthRect(origin: SynthPoint(), size: SynthSize(width: 3, height: 4))])

        // Invalidating point by hand: point and rect recomputed; the value is the same, so no one hears
        shape.invalidate(\.point)
        synthShapeQueue.drain()
        #expect(shape.counts["point"] == 2)
        #expect(shape.counts["rect"] == 3)
        #expect(shape.counts["size"] == 2)
        #expect(seen.withLock { $0.count } == 1)

        // A change that leaves rect equal notifies no one either
        shape.x = 0
        synthShapeQueue.drain()
        #expect(seen.withLock { $0.count } == 1)
        withExtendedLifetime(token) {}
    }

    @Test
    func aTrackingClosureOverAComputedPropertySeesItsChanges() {
        let shape = SynthShape()
        let seen = RelLock<[Double]>([])
        let token = shape.observe(.value({ shape in shape.rect.size.width }), queue: synthShapeQueue) { _, width in
            seen.withLock { $0.append(width) }
        }
        shape.width = 7
        synthShapeQueue.drain()
        #expect(seen.withLock { $0 }.last == 7)
        withExtendedLifetime(token) {}
    }
}

@Suite("Synthetic: threading", .threadStress, .serialized)
struct SyntheticThreadingTests {
    @Test
    func invalidationRacingReadsNeverLeavesAStaleValueMarkedValid() {
        let rounds = RelScale.iterations(2_000, tsanDivisor: 10)
        let person = SynthPerson()
        // Thread 0 invalidates by hand; the others read.
        let finished = RelThreads.run(count: 3, timeout: 60) { index in
            for round in 0..<rounds {
                if index == 0 {
                    person.invalidate(\.fullName)
                    _ = round
                } else {
                    _ = person.fullName
                }
            }
        }
        #expect(finished)
        // Whatever interleaving happened, a value marked valid is a current one.
        person.lastName = "Byron"
        #expect(person.fullName == "Ada Byron")
        let before = person.counts["fullName"]
        _ = person.fullName
        #expect(person.counts["fullName"] == before)
        person.invalidate(\.fullName)
        _ = person.fullName
        _ = person.fullName
        #expect(person.counts["fullName"] == before + 1)
    }
}

/// `@Lazy` and `@Hybrid` next to `@Computed`, in a subclass of a model with its own.
class SynthDocument: ObservableModel {
    let counts = ComputeCounts()
    @Observed var text = "hello"
    @Lazy({ (document: SynthDocument) in
        document.counts.tick("thumbnail")
        return document.text.count > 100 ? "big" : nil
    })
    var thumbnail: String?
    @Hybrid({ (document: SynthDocument) in
        document.counts.tick("title")
        return document.text.uppercased()
    })
    var title: String
}

final class SynthReport: SynthDocument {
    @Computed({ (report: SynthReport) in
        report.counts.tick("heading")
        return "# " + report.title
    })
    var heading: String
}

@Suite("Synthetic: lazy and hybrid kinds")
struct SyntheticKindsTests {
    @Test
    func aLazyPropertyLoadsOnceAndOnlyAnInvalidationLoadsItAgain() {
        let document = SynthDocument()
        #expect(document.thumbnail == nil)
        #expect(document.thumbnail == nil)
        #expect(document.counts["thumbnail"] == 1)
        // What it read is not a dependency
        document.text = String(repeating: "x", count: 200)
        #expect(document.validSyntheticPropertyNames.contains("thumbnail"))
        #expect(document.thumbnail == nil)
        document.invalidate(\.thumbnail)
        #expect(document.thumbnail == "big")
        #expect(document.counts["thumbnail"] == 2)
    }

    @Test
    func aHybridSetIsValidUntilTheNextInvalidation() {
        let document = SynthDocument()
        #expect(document.title == "HELLO")
        document.title = "Custom"
        #expect(document.title == "Custom")
        #expect(document.counts["title"] == 1)
        document.text = "changed"
        #expect(document.title == "CHANGED")
        #expect(document.counts["title"] == 2)
    }

    @Test
    func aSubclassInheritsItsParentsSyntheticPropertiesAndAddsItsOwn() {
        let report = SynthReport()
        #expect(report.heading == "# HELLO")
        #expect(report.validSyntheticPropertyNames == ["title", "heading"])
        #expect(report.invalidSyntheticPropertyNames == ["thumbnail"])
        // Setting the hybrid invalidates the computed property that read it
        report.title = "Set"
        #expect(report.invalidSyntheticPropertyNames == ["thumbnail", "heading"])
        #expect(report.heading == "# Set")
        #expect(report.counts["heading"] == 2)
        #expect(report.counts["title"] == 1)
    }

    @Test
    func settingAnObservedHybridNotifiesOnlyOnChange() {
        let queue = CoalescingQueue(target: .manual)
        let report = SynthReport()
        let seen = RelLock<Int>(0)
        let token = report.observe(\.title, queue: queue) { _ in seen.withLock { $0 += 1 } }
        report.title = "HELLO"  // the value it had
        queue.drain()
        #expect(seen.withLock { $0 } == 0)
        report.title = "Other"
        queue.drain()
        #expect(seen.withLock { $0 } == 1)
        withExtendedLifetime(token) {}
    }
}

@Suite("Synthetic: misuse")
struct SyntheticMisuseTests {
    #if DEBUG
        @Test
        func aCycleBetweenComputedPropertiesTrapsInDebugBuilds() async {
            await #expect(processExitsWith: .failure) {
                _ = SynthCycle().a
            }
        }
    #else
        @Test
        func aCycleBetweenComputedPropertiesReturnsTheEmptyOrCachedValueInReleaseBuilds() {
            // Given a cycle a -> b -> a, first read: a has no value yet, so b sees 0
            let model = SynthCycle()
            #expect(model.a == 2)
            // When it is read again through the cycle, b sees a's cached value
            model.invalidate(\.b)
            #expect(model.b == 3)
            // and with the cycle broken, the values are exact again
            model.seed = 0
            #expect(model.b == 0)
            #expect(model.a == 1)
        }
    #endif
}
