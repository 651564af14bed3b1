import Dispatch
import ObservationTokens
import Synchronization
import Testing

// This module is built with `.defaultIsolation(MainActor.self)`: unmarked declarations are
// main-actor isolated, as in a new app target.

/// The documented declaration: a model is `nonisolated`, like the library's base class.
nonisolated final class Todo: ObservableModel {
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
    @Test func aNonisolatedModelWorksInAMainActorModule() {
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

/// A nonisolated, thread-safe box for values seen by nonisolated callbacks.
nonisolated final class Mailbox: Sendable {
    private let value = Mutex<String?>(nil)
    func put(_ newValue: String) { value.withLock { $0 = newValue } }
    func take() -> String? { value.withLock { $0 } }
}

// The README's first example, verbatim: it must compile in a main-actor module too.

nonisolated final class Address: ObservableModel {  // `nonisolated`: see below
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
