import Testing

@testable import ObservationTokens

/// The queue of `SynthBadge`'s eager recomputations (only the token test below observes one).
let synthBadgeQueue = CoalescingQueue(target: .manual)

/// `dependsOn:` string paths: `label` depends on `owner.name` and `title`, not on `note`,
/// which its computation reads too. `@unchecked Sendable`: see ``CorePerson``.
final class SynthBadge: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var owner: SynthOwner?
    @Observed var title = "Dr."
    @Observed var note = ""
    @Computed(
        dependsOn: ["owner.name", "title"],
        { (badge: SynthBadge) in
            badge.counts.tick("label")
            return badge.title + " " + (badge.owner?.name ?? "?") + badge.note
        })
    var label: String
    @Computed(
        dependsOn: [\SynthBadge.owner?.name],
        { (badge: SynthBadge) in
            badge.counts.tick("initial")
            return badge.owner?.name.first
        })
    var initial: Character?
}

/// EBNObservable's example with declared dependencies: `rect` on `point` and `size`, which
/// declare their floats.
final class SynthDeclaredShape: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var x = 0.0
    @Observed var y = 0.0
    @Observed var width = 0.0
    @Observed var height = 0.0
    @Computed(
        dependsOn: ["x", "y"],
        { (shape: SynthDeclaredShape) in
            shape.counts.tick("point")
            return SynthPoint(x: shape.x, y: shape.y)
        })
    var point: SynthPoint
    @Computed(
        dependsOn: ["width", "height"],
        { (shape: SynthDeclaredShape) in
            shape.counts.tick("size")
            return SynthSize(width: shape.width, height: shape.height)
        })
    var size: SynthSize
    @Computed(
        dependsOn: ["point", "size"],
        { (shape: SynthDeclaredShape) in
            shape.counts.tick("rect")
            return SynthRect(origin: shape.point, size: shape.size)
        })
    var rect: SynthRect
}

final class SynthBadDeclaration: ObservableModel {
    @Observed var title = ""
    @Computed(dependsOn: ["titel"], { (model: SynthBadDeclaration) in model.title }) var label: String
}

@Suite("Synthetic: declared dependencies", .serialized)
struct DeclaredDependencyTests {
    @Test func declaredPathsAreTheDependenciesAndWhatTheComputationReadsIsNot() {
        let badge = SynthBadge()
        #expect(badge.label == "Dr. ?")
        // A path that starts nil: setting its first link invalidates
        let ada = SynthOwner()
        badge.owner = ada
        #expect(badge.label == "Dr. Ada")
        #expect(badge.counts["label"] == 2)
        // Each declared path invalidates
        ada.name = "Grace"
        badge.title = "Prof."
        #expect(badge.label == "Prof. Grace")
        #expect(badge.counts["label"] == 3)
        // Something read but not declared does not
        badge.note = "!"
        #expect(badge.label == "Prof. Grace")
        #expect(badge.counts["label"] == 3)
        // A replaced link is followed: the old object no longer invalidates, the new one does
        let lin = SynthOwner()
        lin.name = "Lin"
        badge.owner = lin
        #expect(badge.label == "Prof. Lin!")
        ada.name = "Ada"
        #expect(badge.validSyntheticPropertyNames.contains("label"))
        lin.name = "Lu"
        #expect(!badge.validSyntheticPropertyNames.contains("label"))
        #expect(badge.label == "Prof. Lu!")
        #expect(badge.counts["label"] == 5)
    }

    @Test func declaredTypedKeyPathsAreFollowedThroughOptionals() {
        let badge = SynthBadge()
        #expect(badge.initial == nil)
        let ada = SynthOwner()
        badge.owner = ada
        #expect(badge.initial == "A")
        ada.name = "Grace"
        badge.title = "Prof."  // not a dependency of `initial`
        #expect(badge.initial == "G")
        #expect(badge.counts["initial"] == 3)
    }

    @Test func ebnsRectExampleWithDeclaredDependencies() {
        let shape = SynthDeclaredShape()
        _ = shape.rect
        #expect((shape.counts["rect"], shape.counts["point"], shape.counts["size"]) == (1, 1, 1))
        shape.width = 5
        #expect(shape.invalidSyntheticPropertyNames == ["size", "rect"])
        #expect(shape.rect.size.width == 5)
        #expect((shape.counts["rect"], shape.counts["point"], shape.counts["size"]) == (2, 1, 2))
    }

    @Test func aStringPathTokenOnADeclaredComputedPropertyFires() throws {
        let badge = SynthBadge()
        badge.owner = SynthOwner()
        let labels = CoreRecorder<String>()
        let token = try badge.observe(.path("label"), queue: synthBadgeQueue) { badge in labels.append(badge.label) }
        badge.owner?.name = "Grace"
        badge.note = "!"  // not declared: no recomputation of its own
        synthBadgeQueue.drain()
        #expect(labels.entries == ["Dr. Grace!"])
        withExtendedLifetime(token) {}
    }

    /// `*` computes a computed property with declared dependencies at registration too (its
    /// declared paths are wired then), so a change on another object reaches the token.
    @Test func starComputesADeclaredPropertyAtRegistration() throws {
        let badge = SynthBadge()
        let owner = SynthOwner()
        badge.owner = owner
        let fired = CoreCounter()
        let token = try badge.observe(.path("*"), queue: synthBadgeQueue) { _ in fired.increment() }
        #expect(badge.counts["label"] == 1)
        owner.name = "Grace"  // on another object: heard only through `label`'s declared path
        synthBadgeQueue.drain()
        #expect(fired.value == 1)
        #expect(badge.counts["label"] == 2)
        withExtendedLifetime(token) {}
    }

    #if DEBUG
        @Test func aDeclaredPathThatDoesNotExistTrapsAtFirstUseInDebugBuilds() async {
            await #expect(processExitsWith: .failure) {
                _ = SynthBadDeclaration().label
            }
        }
    #else
        @Test func aDeclaredPathThatDoesNotExistDependsOnEveryPropertyInReleaseBuilds() {
            let model = SynthBadDeclaration()
            #expect(model.label == "")
            model.title = "new"
            #expect(model.label == "new")
        }
    #endif
}
