import Synchronization

@testable import ObservationTokens

// Fixtures of the collection suites (issue 11). Names start with `Coll`.

/// A row of a list.
final class CollItem: ObservableModel, CustomStringConvertible {
    @Observed var title: String
    @Observed var isDone = false

    init(_ title: String) {
        _title = Observed(wrappedValue: title)
    }

    var description: String { title }
}

/// A model holding the three collections.
final class CollList: ObservableModel {
    @Observed var items: ObservedArray<CollItem> = []
    @Observed var numbers: ObservedArray<Int> = []
    @Observed var settings: ObservedDictionary<String, String> = [:]
    @Observed var tags: ObservedSet<String> = []
}

/// Records what callbacks saw, from any thread.
final class CollLog<Entry: Sendable>: Sendable {
    private let storage = Mutex<[Entry]>([])

    func append(_ entry: Entry) { storage.withLock { $0.append(entry) } }

    /// The entries so far, forgetting them.
    func take() -> [Entry] { storage.withLock { entries in defer { entries = [] }; return entries } }

    var count: Int { storage.withLock { $0.count } }
}

/// `n` items titled "0", "1", ….
func collItems(_ n: Int) -> [CollItem] { (0..<n).map { CollItem(String($0)) } }
