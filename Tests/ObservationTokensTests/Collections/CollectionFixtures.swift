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
    private let storage = RelLock<[Entry]>([])

    func append(_ entry: Entry) { storage.withLock { $0.append(entry) } }

    /// The entries so far, forgetting them.
    func take() -> [Entry] {
        storage.withLock { entries in
            defer { entries = [] }; return entries
        }
    }

    var count: Int { storage.withLock { $0.count } }
}

/// `n` items titled "0", "1", ….
func collItems(_ n: Int) -> [CollItem] { (0..<n).map { CollItem(String($0)) } }

/// Hands collections to other threads for the threading test.
///
/// `@unchecked Sendable`: one thread mutates the contents; the others only create and end
/// tokens, which the library synchronizes. That is the rule the library asks users to follow.
final class CollShared: @unchecked Sendable {
    let numbers: ObservedArray<Int>
    let settings: ObservedDictionary<Int, Int>

    init(numbers: ObservedArray<Int>, settings: ObservedDictionary<Int, Int>) {
        self.numbers = numbers
        self.settings = settings
    }
}
