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
/// `@unchecked Sendable`: one thread mutates the contents (of `names`, none until the others
/// are done); the others only create and end tokens, which the library synchronizes. That is the rule the library asks users to follow.
final class CollShared: @unchecked Sendable {
    let numbers: ObservedArray<Int>
    let settings: ObservedDictionary<Int, Int>
    /// Not mutated while other threads make tokens on it (string paths read the value they
    /// reach when they are made).
    let names = ObservedDictionary<Int, Int>()

    init(numbers: ObservedArray<Int>, settings: ObservedDictionary<Int, Int>) {
        self.numbers = numbers
        self.settings = settings
    }
}

/// Something with a title, for collections whose element type only run time knows.
protocol CollTitled: AnyObject {}

extension CollItem: CollTitled {}

/// A model with a `title` that is not a `CollItem`, and one without any `title`.
final class CollOtherTitled: ObservableModel, CollTitled {
    @Observed var title = ""
}

final class CollUntitled: ObservableModel, CollTitled {
    @Observed var name = ""
}

/// Collections of the other kinds: `Int` keys, object values and members, element types only
/// run time knows, and a collection that may be nil.
final class CollShelf: ObservableModel {
    @Observed var scores: ObservedDictionary<Int, String> = [:]
    @Observed var rows: ObservedDictionary<String, CollItem> = [:]
    @Observed var team: ObservedSet<CollItem> = []
    @Observed var titled: ObservedArray<any CollTitled> = []
    @Observed var anything: ObservedDictionary<String, Any> = [:]
    @Observed var grid: ObservedArray<ObservedArray<CollItem>> = []
    @Observed var maybeItems: ObservedArray<CollItem>? = nil
}

extension CollItem: Hashable {
    static func == (lhs: CollItem, rhs: CollItem) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A key object whose lifetime tests watch with `weak` references.
final class CollKey: Hashable, Sendable {
    let name: String

    init(_ name: String) { self.name = name }

    static func == (lhs: CollKey, rhs: CollKey) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
