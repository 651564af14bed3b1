// swift-format-ignore-file
import Testing

@testable import ObservationTokens

// The ```swift blocks of docs/Debugging.md, docs/Synthetic.md and README's "Computed properties"
// section, verbatim (scripts/check-doc-snippets.py checks that they appear here). Each type sits
// in its own namespace so the docs can use short names.

/// README, "Computed properties".
enum ReadmeComputedSnippet {
    final class Person: ObservableModel {
        @Observed var firstName = ""
        @Observed var lastName = ""
        @Computed({ (person: Person) in person.firstName + " " + person.lastName }) var fullName: String
    }
}

/// docs/Synthetic.md, "Declared dependencies", and the DocC of `Computed.init(queue:dependsOn:_:)`.
enum DeclaredDependencySnippet {
    final class Person: ObservableModel {
        @Observed var firstName = ""
    }

    final class Badge: ObservableModel {
        @Observed var owner: Person?
        @Observed var title = ""
        @Computed(dependsOn: ["owner.firstName", "title"], { (badge: Badge) in
            badge.title + " " + (badge.owner?.firstName ?? "")
        })
        var label: String
    }

    final class TypedBadge: ObservableModel {
        @Observed var owner: Person?
        @Observed var title = ""
        @Computed(dependsOn: [\TypedBadge.owner?.firstName, \TypedBadge.title], { (badge: TypedBadge) in
            badge.title + " " + (badge.owner?.firstName ?? "")
        })
        var label: String
    }
}

/// docs/Synthetic.md: EBN's shape, without the test's compute counters.
enum SyntheticDocSnippet {
    final class SynthShape: ObservableModel {
        @Observed var x = 0.0
        @Observed var y = 0.0
        @Observed var width = 0.0
        @Observed var height = 0.0
        @Computed({ (shape: SynthShape) in
            SynthPoint(x: shape.x, y: shape.y)
        })
        var point: SynthPoint
        @Computed({ (shape: SynthShape) in
            SynthSize(width: shape.width, height: shape.height)
        })
        var size: SynthSize
        @Computed({ (shape: SynthShape) in
            SynthRect(origin: shape.point, size: shape.size)
        })
        var rect: SynthRect
    }
}

/// docs/Debugging.md's models.
enum DebuggingDocSnippet {
    final class Floor: ObservableModel {
        @Observed var level = 0
    }

    final class Desk: ObservableModel {
        @Observed var floor = Floor()
    }

    final class Manager: ObservableModel {
        @Observed var desk: Desk?
    }

    final class Address: ObservableModel {
        @Observed var zip = ""
    }

    final class Boss: ObservableModel {
        @Observed var address: Address?
    }

    final class Company: ObservableModel {
        @Observed var boss: Boss?
    }

    /// The watchpoint block. Compiled, not run: with no debugger attached its default handler
    /// writes to standard error.
    static func watchpoint(company: Company, boss: Boss, otherAddress: Address, oldAddress: Address) -> ObservationToken
    {
        let watch = company.breakOnChange(of: \.boss?.address?.zip)
        boss.address = otherAddress  // stops: the value at the path changed
        otherAddress.zip = "97211"  // stops
        oldAddress.zip = "x"  // nothing: the watchpoint followed the path to the new address
        return watch
    }

    /// The census block. Compiled, not run: the census is process-wide, and `DebuggingTests`
    /// count it.
    static func census() {
        ObservationDebugging.isCensusEnabled = true  // first thing in main, or a test's setup
        // … open and close the screen a few times …
        print(ObservationDebugging.censusReport())
        // Live observations: 4
        //   3 × Shop at App/ShopScreen.swift:88      ← grows each time: a leaked token
        //   1 × Person at App/Header.swift:40
    }
}

/// What the docs' callback does with the address.
private func render(_ address: DebuggingDocSnippet.Address) {}

@Suite("Doc snippets: debugging and computed properties")
struct DebuggingAndSyntheticDocSnippetTests {
    typealias Snippet = DebuggingDocSnippet

    @Test func readmeComputedPropertyJoinsTheNames() {
        let person = ReadmeComputedSnippet.Person()
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(person.fullName == "Ada Lovelace")
    }

    @Test func declaredDependenciesInvalidateTheBadge() {
        let badge = DeclaredDependencySnippet.Badge()
        let typed = DeclaredDependencySnippet.TypedBadge()
        let ada = DeclaredDependencySnippet.Person()
        #expect(badge.label == " ")
        #expect(typed.label == " ")
        badge.owner = ada
        typed.owner = ada
        ada.firstName = "Ada"
        #expect(badge.label == " Ada")
        #expect(typed.label == " Ada")
    }

    @Test func syntheticShapeComputesItsRect() {
        let shape = SyntheticDocSnippet.SynthShape()
        shape.width = 2
        #expect(shape.rect.size.width == 2)
    }

    @Test func reportListsAPathRootedElsewhere() throws {
        let queue = CoalescingQueue(target: .manual)
        let desk = Snippet.Desk()
        let manager = Snippet.Manager()
        manager.desk = desk
        let path = try manager.observe(path: "desk.floor", queue: queue) { _ in }
        print(desk.observationReport)
        // Desk 0x5628b6a1fbc0: 2 observations
        //   floor:
        //     property 0x…4160 "floor" observer: FloorLabel 0x…4000 options: [] queue: manual 0x…03e0 created at App/Label.swift:49
        //     path 0x…6580 "desk.floor" rooted at Manager 0x…3ca0 observer: none options: [] queue: manual 0x…03e0 created at App/Desk.swift:50
        #expect(desk.observationReport.contains("desk.floor"))
        withExtendedLifetime(path) {}
    }

    @Test func breakOnInvokeWatchesTheSameProperty() {
        let address = Snippet.Address()
        let token = address.observe(\.zip) { address in render(address) }
        let breakpoint = token.breakOnInvoke()
        #expect(breakpoint.isValid)
        withExtendedLifetime((token, breakpoint)) {}
    }
}
