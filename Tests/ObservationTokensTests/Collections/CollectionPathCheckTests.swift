import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A component past a collection is checked against the element type, as components past a
/// model property are checked against the property's type: a path that could never fire
/// throws instead of returning a dead token.
@Suite("Collection paths: the rest of a path is checked at the element type")
struct CollectionPathCheckTests {
    /// A shelf and a list with elements, so object-following components can bind.
    private static func populated() -> (CollList, CollShelf) {
        let list = CollList()
        list.items.append(contentsOf: collItems(4))
        list.numbers.append(contentsOf: [1, 2])
        let shelf = CollShelf()
        shelf.rows["a"] = CollItem("a")
        shelf.grid.append(ObservedArray(collItems(2)))
        return (list, shelf)
    }

    static let listCases: [(String, KeyPathError)] = [
        (
            "items.3.invalidKey",
            .unknownProperty("invalidKey", type: "CollItem", path: "items.3.invalidKey", position: 3)
        ),
        (
            "items.#3.invalidKey",
            .unknownProperty("invalidKey", type: "CollItem", path: "items.#3.invalidKey", position: 3)
        ),
        (
            "items.#40.invalidKey",
            .unknownProperty("invalidKey", type: "CollItem", path: "items.#40.invalidKey", position: 3)
        ),
        (
            "items.*.invalidKey",
            .unknownProperty("invalidKey", type: "CollItem", path: "items.*.invalidKey", position: 3)
        ),
        (
            "items.title",
            .unknownProperty("title", type: "ObservedArray<CollItem>", path: "items.title", position: 2)
        ),
        ("items.&1", .unsupportedComponent("&1", path: "items.&1", position: 2)),
        ("items.count.x", .notObservable("x", type: "Int", path: "items.count.x", position: 3)),
        ("numbers.#0.x", .notObservable("x", type: "Int", path: "numbers.#0.x", position: 3)),
        ("numbers.*.x", .notObservable("x", type: "Int", path: "numbers.*.x", position: 3)),
        ("settings.theme.x", .notObservable("x", type: "String", path: "settings.theme.x", position: 3)),
        ("settings.*.x", .notObservable("x", type: "String", path: "settings.*.x", position: 3)),
        ("tags.*.x", .notObservable("x", type: "String", path: "tags.*.x", position: 3)),
        ("tags.urgent", .unsupportedComponent("urgent", path: "tags.urgent", position: 2)),
    ]

    /// Given a list whose collections have elements; when a path names a part the element
    /// type doesn't have; then it throws the typed error naming the component and the type.
    @Test(arguments: listCases)
    func aBadComponentPastAnArrayDictionaryOrSetThrows(path: String, expected: KeyPathError) {
        let (list, _) = Self.populated()
        #expect(throws: expected) { try list.observe(.path(path), queue: CoalescingQueue(target: .manual)) { _ in } }
        #expect(list.pathEdgeCount == 0)
    }

    static let shelfCases: [(String, KeyPathError)] = [
        ("rows.a.bogus", .unknownProperty("bogus", type: "CollItem", path: "rows.a.bogus", position: 3)),
        ("rows.missing.bogus", .unknownProperty("bogus", type: "CollItem", path: "rows.missing.bogus", position: 3)),
        ("rows.*.bogus", .unknownProperty("bogus", type: "CollItem", path: "rows.*.bogus", position: 3)),
        ("team.*.bogus", .unknownProperty("bogus", type: "CollItem", path: "team.*.bogus", position: 3)),
        ("scores.high", .invalidKey("high", keyType: "Int", path: "scores.high", position: 2)),
        ("scores.1.x", .notObservable("x", type: "String", path: "scores.1.x", position: 3)),
        ("grid.#0.#1.bogus", .unknownProperty("bogus", type: "CollItem", path: "grid.#0.#1.bogus", position: 4)),
        ("grid.*.*.bogus", .unknownProperty("bogus", type: "CollItem", path: "grid.*.*.bogus", position: 4)),
        // Behind a nil collection, the declared element type is checked.
        (
            "maybeItems.#0.bogus",
            .unknownProperty("bogus", type: "CollItem", path: "maybeItems.#0.bogus", position: 3)
        ),
    ]

    @Test(arguments: shelfCases)
    func aBadComponentPastKeysValuesAndMembersThrows(path: String, expected: KeyPathError) {
        let (_, shelf) = Self.populated()
        #expect(throws: expected) { try shelf.observe(.path(path), queue: CoalescingQueue(target: .manual)) { _ in } }
        #expect(shelf.pathEdgeCount == 0)
    }

    /// Given a member key's path; when a component follows it, it throws (membership is a
    /// `Bool`); and the good paths beside the bad ones resolve and fire.
    @Test func badComponentsThrowWhileGoodOnesBesideThemFire() throws {
        let queue = CoalescingQueue(target: .manual)
        let (list, shelf) = Self.populated()
        let key = list.tags.key(for: "urgent")
        #expect(throws: KeyPathError.notObservable("x", type: "Bool", path: "tags.\(key).x", position: 3)) {
            try list.observe(.path("tags.\(key).x"), queue: queue) { _ in }
        }
        let fired = CollLog<String>()
        let tokens = [
            try list.observe(.path("items.#3.title"), queue: queue) { _ in fired.append("#3") },
            try list.observe(.path("tags.\(key)"), queue: queue) { _ in fired.append("urgent") },
            try shelf.observe(.path("rows.a.isDone"), queue: queue) { _ in fired.append("a") },
            try shelf.observe(.path("grid.#0.#1.title"), queue: queue) { _ in fired.append("grid") },
            try shelf.observe(.path("maybeItems.#0.title"), queue: queue) { _ in fired.append("maybe") },
        ]
        list.items[3].title = "x"
        list.tags.insert("urgent")
        shelf.rows["a"]?.isDone = true
        shelf.grid[0][1].title = "y"
        #expect(queue.drain() == 4)
        shelf.maybeItems = [CollItem("m")]  // the path changed: fires
        #expect(queue.drain() == 1)
        shelf.maybeItems?[0].title = "n"
        #expect(queue.drain() == 1)
        #expect(fired.take() == ["#3", "urgent", "a", "grid", "maybe", "maybe"])
        withExtendedLifetime(tokens) {}
    }
}

/// Past an element whose type only run time knows (`Any`, a protocol), components are checked
/// on each element the path reaches.
/// Past an element whose type only run time knows (`Any`, a protocol), components are checked
/// on each element the path reaches. The paths follow every element that has the component
/// (`titled.#0.title` and `titled.*.title` over elements of two classes with a `title`, and a
/// dictionary of `Any` values); reaching one that hasn't is a mistake in the path.
@Suite("Collection paths: components checked at run time")
struct CollectionRuntimeCheckTests {
    /// The paths follow elements of two classes that have the component; returns a failing
    /// exit code where they don't, then reaches elements that lack it.
    static func followElementsThenReachOnesWithout() {
        let queue = CoalescingQueue(target: .manual)
        let shelf = CollShelf()
        let item = CollItem("a")
        let other = CollOtherTitled()
        shelf.titled.append(item)
        shelf.anything["item"] = item
        shelf.anything["number"] = 1
        let fired = CollLog<String>()
        let tokens = [
            try? shelf.observe(.path("titled.#0.title"), queue: queue) { _ in fired.append("#0") },
            try? shelf.observe(.path("titled.*.title"), queue: queue) { _ in fired.append("*") },
            try? shelf.observe(.path("anything.item.title"), queue: queue) { _ in fired.append("any") },
        ]
        item.title = "b"
        guard queue.drain() == 3, Set(fired.take()) == ["#0", "*", "any"] else { exit(3) }
        shelf.titled.insert(other, at: 0)  // index 0 changes; `*` re-attaches
        shelf.anything["number"] = 2  // another key
        guard queue.drain() == 2, Set(fired.take()) == ["#0", "*"] else { exit(4) }
        other.title = "c"
        guard queue.drain() == 2, Set(fired.take()) == ["#0", "*"] else { exit(5) }
        guard tokens[0]?.debugDescription.contains("titled.#0.title") == true else { exit(6) }
        // Elements without the component: `*` re-attaching reaches them.
        shelf.titled.append(CollUntitled())
        shelf.titled.append(CollUntitled())
        queue.drain()
        item.title = "d"  // the elements that have it still fire
        guard queue.drain() == 2 else { exit(7) }
        withExtendedLifetime(tokens) {}
    }

    #if DEBUG
        /// Debug builds: reaching an element without the component traps, naming the path.
        @Test func reachingAnElementWithoutTheComponentTrapsNamingThePath() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.followElementsThenReachOnesWithout()
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("string path \"titled.*.title\""))
            #expect(message.contains("CollUntitled has no @Observed property 'title' (component 3)"))
        }
    #else
        /// Release builds: no crash; the path is unreachable at that element, and one message
        /// says why, however often such elements are reached.
        @Test func reachingAnElementWithoutTheComponentLogsOnce() async {
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                Self.followElementsThenReachOnesWithout()
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            let line = "CollUntitled has no @Observed property 'title'"
            #expect(message.components(separatedBy: line).count == 2)  // once
            #expect(message.contains("string path \"titled.*.title\""))
        }
    #endif
}
