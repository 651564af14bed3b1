import Synchronization

/// A thread-safe list of what callbacks saw, for the cases to check afterwards.
///
/// Callbacks are `@Sendable` and may run on any thread, so they record into this instead of
/// capturing a local variable.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])

    func append(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    var values: [Element] {
        storage.withLock { $0 }
    }

    var count: Int {
        storage.withLock { $0.count }
    }
}
