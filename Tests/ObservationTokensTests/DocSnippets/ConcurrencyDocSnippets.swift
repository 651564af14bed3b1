// swift-format-ignore-file
// The code blocks of docs/Concurrency.md, verbatim (see scripts/check-doc-snippets.py).

import Foundation
import ObservationTokens
import Observation
import Synchronization
import Testing

enum ConcurrencyDoc {
    final class Person: ObservableModel { @Observed var name = "" }

    @MainActor final class ProfileViewModel {
        var title = ""
        private var tokens = Set<ObservationToken>()

        init(person: Person) {
            person.observe(\.name, observer: self, isolation: MainActor.shared) { viewModel, person in
                viewModel.title = person.name
            }
            .store(in: &tokens)
        }
    }

    nonisolated final class Todo: ObservableModel {
        @Observed var title = ""
        @Observed var done = false
    }

    @MainActor final class Counter: ObservableModel {
        @Observed var count = 0

        nonisolated override init() {
            super.init()
        }
    }

    enum Coding {
        final class Todo: ObservableModel, Codable {
            @Observed var title = ""
            @Observed var done = false
            @Observed var due: Int?
        }
        // {"done":false,"title":"Buy milk"}    (a nil optional is left out, as for plain optionals)
    }

    static func printNames() async {
        let person = Person()
        person.name = "Ada"
        for await name in person.values(of: \.name) {
            print("name is now", name)
        }
    }
}

@MainActor @Suite struct ConcurrencyDocSnippetTests {
    @Test func mainActorViewModel() async {
        let person = ConcurrencyDoc.Person()
        let viewModel = ConcurrencyDoc.ProfileViewModel(person: person)
        person.name = "Ada"
        await concMainQueueTurn()
        #expect(viewModel.title == "Ada")
        _ = ConcurrencyDoc.Todo()
        _ = ConcurrencyDoc.Counter()
    }

    @Test func forAwaitEndsWhenTheTaskIsCancelled() async {
        let task = Task { await ConcurrencyDoc.printNames() }
        task.cancel()
        await task.value
    }

    @Test func trackedModel() {
        final class Profile: TrackedModel {
            @Observed var name = ""
        }
        let profile = Profile()

        withObservationTracking {
            _ = profile.name
        } onChange: {
            print("name will change")
        }
        profile.name = "Ada"   // prints "name will change"
        #expect(profile.name == "Ada")
    }

    @Test func codable() throws {
        let todo = ConcurrencyDoc.Coding.Todo()
        todo.title = "Buy milk"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(todo), as: UTF8.self)
        #expect(json == #"{"done":false,"title":"Buy milk"}"#)
    }

    @Test func commandLineProgram() {
        let person = ConcurrencyDoc.Person()
        let queue = CoalescingQueue(target: .manual)
        let token = person.observe(\.name, queue: queue) { person in print(person.name) }
        person.name = "Ada"
        queue.drain()   // prints "Ada"
        #expect(token.isValid)
    }
}
