import Dispatch
import ObservationTokens
import Synchronization
import Testing

// This module is built with `.defaultIsolation(MainActor.self)`: unmarked declarations are
// main-actor isolated, as in a new app target.

/// The documented declaration: a plain model class, with no isolation written. Naming
/// `ObservableModel` keeps it nonisolated (it names `ModelObserving`, a `SendableMetatype`
/// protocol), although every other unmarked class of this module is main-actor isolated.
final class Todo: ObservableModel {
    @Observed var title = ""
    @Observed var done = false
}

/// A view model, main-actor isolated by the module's default.
final class TodoRow {
    var text = ""
    var updates = 0
    private var tokens = Set<ObservationToken>()

    init(todo: Todo, queue: CoalescingQueue) {
        todo.observe([\.title, \.done], observer: self, queue: queue, isolation: MainActor.shared) { row, todo in
            row.text = (todo.done ? "☑ " : "☐ ") + todo.title
            row.updates += 1
        }
        .store(in: &tokens)
    }
}

@Suite struct DefaultIsolationTests {
    @Test func aPlainModelWorksInAMainActorModule() {
        let queue = CoalescingQueue(target: .manual)
        let todo = Todo()
        let row = TodoRow(todo: todo, queue: queue)
        todo.title = "Ship"
        todo.done = true
        #expect(queue.drain() == 1)
        #expect(row.text == "☑ Ship")
        #expect(row.updates == 1)
    }

    @Test func nonisolatedCallbacksReadTheModel() {
        let queue = CoalescingQueue(target: .manual)
        let todo = Todo()
        let seen = Mailbox()
        let token = todo.observe(\.title, queue: queue) { todo in seen.put(todo.title) }
        todo.title = "a"
        queue.drain()
        #expect(seen.take() == "a")
        withExtendedLifetime(token) {}
    }

    @Test func valuesCanBeIteratedOnTheMainActor() async {
        let queue = CoalescingQueue(target: .manual)
        let todo = Todo()
        var iterator = todo.values(of: \.done, queue: queue).makeAsyncIterator()
        #expect(await iterator.next() == false)
        todo.done = true
        queue.drain()
        #expect(await iterator.next() == true)
    }
}

/// A thread-safe box for values seen by nonisolated callbacks: a helper type, `nonisolated`
/// (`Sendable` alone does not keep a class off the main actor in such a module).
nonisolated final class Mailbox: Sendable {
    private let value = Mutex<String?>(nil)
    func put(_ newValue: String) { value.withLock { $0 = newValue } }
    func take() -> String? { value.withLock { $0 } }
}

// The README's first example, verbatim: it must compile in a main-actor module too.

final class Address: ObservableModel {
    @Observed var zipCode = ""
}

@MainActor final class AddressLabel {
    var text = ""
    private var tokens = Set<ObservationToken>()

    init(address: Address) {
        address.observe(\.zipCode, observer: self, isolation: MainActor.shared) { label, address in
            label.text = address.zipCode  // main-actor code; no `self` captured, no retain cycle
        }
        .store(in: &tokens)  // the label's lifetime is the observation's
    }
}

@Suite struct ReadmeExampleTests {
    @Test func theFirstExampleWorksInAMainActorModule() async {
        let address = Address()
        let label = AddressLabel(address: address)
        address.zipCode = "97210"
        await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume() }
        }
        #expect(label.text == "97210")
    }
}

// A computed property over a helper type: the compute closure runs on whatever thread reads
// it, so a helper type it calls is `nonisolated` (the one thing a main-actor module asks).

nonisolated enum Shown {
    case all, open

    func includes(_ todo: Todo) -> Bool { self == .all || !todo.done }
}

final class TodoBoard: ObservableModel {
    @Observed var todos: [Todo] = []
    @Observed var shown = Shown.all
    @Computed({ (board: TodoBoard) in board.todos.filter(board.shown.includes).count }) var shownCount: Int

    init(_ todos: [Todo]) {
        self.todos = todos
    }
}

/// A model class meant to be subclassed.
class Entry: ObservableModel {
    @Observed var title = ""
}

/// A subclass of a model class is `nonisolated` (it can't name `ModelObserving` again).
nonisolated final class DatedTodo: Entry {
    @Observed var due = 0
}

@Suite struct MainActorModuleModelTests {
    @Test func aModelWithAComputedPropertyOverASendableHelperWorks() {
        let queue = CoalescingQueue(target: .manual)
        let done = Todo()
        done.done = true
        let board = TodoBoard([Todo(), done])
        let counts = Mailbox()
        let token = board.observe(\.shownCount, queue: queue) { board in counts.put("\(board.shownCount)") }
        board.shown = .open
        #expect(queue.drain() == 1)
        #expect(counts.take() == "1")
        withExtendedLifetime(token) {}
    }

    @Test func aSubclassOfAModelIsObservedLikeIt() {
        let queue = CoalescingQueue(target: .manual)
        let todo = DatedTodo()
        let seen = Mailbox()
        let token = todo.observe([\.title, \.due], queue: queue) { todo in seen.put("\(todo.title) \(todo.due)") }
        todo.due = 3
        #expect(queue.drain() == 1)
        #expect(seen.take() == " 3")
        withExtendedLifetime(token) {}
    }
}
