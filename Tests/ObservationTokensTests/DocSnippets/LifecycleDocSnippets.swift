// swift-format-ignore-file
// The code blocks of docs/Lifecycle.md, verbatim (see scripts/check-doc-snippets.py).

import ObservationTokens
import Testing

enum LifecycleDoc {
    final class Person: ObservableModel {
        @Observed var name = ""
    }

    final class Company: ObservableModel {
        @Observed var boss: Person? = nil
    }

    final class Screen {
        var rendered: [String] = []
        func render(_ person: Person) { rendered.append(person.name) }
        func render(_ company: Company) { rendered.append(company.boss?.name ?? "-") }

        func show(_ person: Person, _ company: Company) throws {
            let observation = person.tell(self, when: \.name) { screen, person in screen.render(person) }
            observation.fire()   // render now, with the current name
            try company.tell(self, whenPath: "boss.name") { screen, company in screen.render(company) }
            company.stopTelling(self, aboutPath: "boss.name")
        }
    }
}

@Suite struct LifecycleDocSnippetTests {
    @Test func tellHandlesAndPaths() throws {
        let screen = LifecycleDoc.Screen()
        let person = LifecycleDoc.Person()
        person.name = "Ada"
        let company = LifecycleDoc.Company()
        try screen.show(person, company)
        #expect(screen.rendered == ["Ada"])  // fired once; the path observation was stopped
    }
}
