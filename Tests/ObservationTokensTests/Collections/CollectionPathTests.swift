import Testing

@testable import ObservationTokens

@Suite("Collection paths")
struct CollectionPathTests {
    @Test func stringPathsNameCountIndexesKeysAndMembers() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.numbers.append(contentsOf: [1, 2, 3])
        let log = CollLog<String>()
        let memberKey = list.tags.key(for: "urgent")
        let tokens = [
            try list.observe(.path("numbers.count"), queue: queue) { _ in log.append("count") },
            try list.observe(.path("numbers.#1"), queue: queue) { _ in log.append("#1") },
            try list.observe(.path("numbers.*"), queue: queue) { _ in log.append("*") },
            try list.observe(.path("settings.theme"), queue: queue) { _ in log.append("theme") },
            try list.observe(.path("tags.\(memberKey)"), queue: queue) { _ in log.append("urgent") },
        ]
        list.numbers[2] = 30  // *
        #expect(queue.drain() == 1)
        list.numbers.insert(0, at: 0)  // count, #1, *
        #expect(queue.drain() == 3)
        list.settings["font"] = "Mono"
        list.tags.insert("later")
        #expect(queue.drain() == 0)
        list.settings["theme"] = "dark"
        list.tags.insert("urgent")
        #expect(queue.drain() == 2)
        // Replacing the collection retargets, like any object on a path.
        list.numbers = [5]
        #expect(queue.drain() == 3)
        list.numbers.append(6)  // count, #1, * on the new array
        #expect(queue.drain() == 3)
        #expect(
            log.take() == [
                // A mutation makes `*` pending first, then the count, then indexes; replacing
                // the array makes the tokens pending in the order they were created.
                "*", "*", "count", "#1", "theme", "urgent", "count", "#1", "*", "*", "count", "#1",
            ])
        withExtendedLifetime(tokens) {}
    }

    @Test func objectFollowingInAStringPath() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.items.append(contentsOf: collItems(3))
        let followed = list.items[2]
        let log = CollLog<String>()
        let token = try list.observe(.path("items.2.title"), queue: queue) { _ in log.append("fired") }
        list.items.insert(CollItem("x"), at: 0)  // moves; the title path follows it
        #expect(queue.drain() == 0)
        followed.title = "renamed"
        #expect(queue.drain() == 1)
        list.items.removeAll { $0 === followed }
        #expect(queue.drain() == 1)
        #expect(!token.isValid)  // fired once when the object left, then ended
        followed.title = "gone"
        list.items.append(followed)
        followed.title = "back"
        #expect(queue.drain() == 0)
        #expect(log.take() == ["fired", "fired"])
        withExtendedLifetime(token) {}
    }

    @Test func anObjectFollowingComponentBeyondTheEndFiresOnceThenEnds() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.items.append(contentsOf: collItems(2))
        let count = CoreCounter()
        let token = try list.observe(.path("items.5.title"), queue: queue) { _ in count.increment() }
        // No object at index 5 when the token starts: as if it had left already.
        #expect(queue.drain() == 1)
        #expect(!token.isValid)
        list.items.append(contentsOf: collItems(5))
        list.items[5].title = "six"
        #expect(queue.drain() == 0)
        #expect(count.value == 1)
        // The same for a path with old and new values.
        let changes = try list.observe(.changes(path: "items.9"), queue: queue) { _, change in
            #expect(change.new == nil)
            count.increment()
        }
        #expect(queue.drain() == 1)
        #expect(!changes.isValid)
        #expect(count.value == 2)
    }

    @Test func badCollectionComponentsThrow() {
        let list = CollList()
        list.items.append(contentsOf: collItems(2))
        // Numbers follow objects only in arrays of objects.
        #expect(throws: KeyPathError.unsupportedComponent("0", path: "numbers.0", position: 2)) {
            try list.observe(.path("numbers.0")) { _ in }
        }
        // A dictionary's components are keys (`settings.0` is the key "0"); `&1` is a set's.
        #expect(throws: KeyPathError.unsupportedComponent("&1", path: "items.&1", position: 2)) {
            try list.observe(.path("items.&1")) { _ in }
        }
        // Index-following beyond the end is allowed.
        #expect((try? list.observe(.path("items.#40")) { _ in }) != nil)
    }

    @Test func wildcardOverElementsInAStringPath() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        let item = CollItem("a")
        list.items.append(item)
        let count = CoreCounter()
        let token = try list.observe(.path("items.*.isDone"), queue: queue) { _ in count.increment() }
        item.isDone = true
        #expect(queue.drain() == 1)
        let later = CollItem("b")
        list.items.append(later)
        #expect(queue.drain() == 1)
        later.isDone = true
        #expect(queue.drain() == 1)
        #expect(count.value == 3)
        withExtendedLifetime(token) {}
    }

    @Test func typedChainsRunThroughCollections() {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        let log = CollLog<String>()
        let tokens = [
            list.observe(.chain(KeyPathChain(\CollList.numbers).then(\.count)), queue: queue) { _, count in
                log.append("count \(count)")
            },
            list.observe(.chain(KeyPathChain(\CollList.settings).then(\.["theme"])), queue: queue) { _, theme in
                log.append("theme \(theme ?? "nil")")
            },
            list.observe(.chain(KeyPathChain(\CollList.numbers).then(\.[ifPresent: 0])), queue: queue) { _, first in
                log.append("first \(first.map(String.init) ?? "nil")")
            },
        ]
        list.numbers.append(1)
        #expect(queue.drain() == 2)
        list.settings["theme"] = "dark"
        #expect(queue.drain() == 1)
        list.numbers = [7, 8]
        #expect(queue.drain() == 2)
        #expect(log.take() == ["count 1", "first 1", "theme dark", "count 2", "first 7"])
        withExtendedLifetime(tokens) {}
    }
}

/// A model whose collection may be nil.
final class CollMaybeList: ObservableModel {
    @Observed var numbers: ObservedArray<Int>? = nil
}

@Suite("Collection paths through optionals")
struct CollectionOptionalPathTests {
    @Test func indexComponentsWaitForANilCollection() throws {
        let queue = CoalescingQueue(target: .manual)
        let holder = CollMaybeList()
        let count = CoreCounter()
        let token = try holder.observe(.path("numbers.#0"), queue: queue) { _ in count.increment() }
        holder.numbers = []
        #expect(queue.drain() == 1)
        holder.numbers?.append(1)
        #expect(queue.drain() == 1)
        holder.numbers?.append(2)
        #expect(queue.drain() == 0)
        #expect(count.value == 2)
        withExtendedLifetime(token) {}
    }
}

@Suite("Collection paths: object-following ends")
struct CollectionFollowEndTests {
    @Test func immediateFollowersEndRightAfterTheirCall() throws {
        let list = CollList()
        list.items.append(contentsOf: collItems(2))
        let count = CoreCounter()
        let stringToken = try list.observe(.path("items.0"), options: .immediate) { _ in count.increment() }
        let typedToken = list.items.observe(.object(at: 0), options: .immediate) { _, _ in count.increment() }
        list.items.insert(CollItem("x"), at: 0)
        #expect(count.value == 0)
        list.items.remove(at: 1)
        #expect(count.value == 2)
        #expect(!stringToken.isValid && !typedToken.isValid)
    }
}

@Suite("Collection paths: fan-out and rebinding")
struct CollectionFanOutTests {
    @Test func dictionaryWildcardFollowsEveryValue() throws {
        let queue = CoalescingQueue(target: .manual)
        let rows: ObservedDictionary<String, CollItem> = [:]
        let first = CollItem("a")
        rows["a"] = first
        rows["again"] = first  // reachable twice: watched once
        let count = CoreCounter()
        let token = try rows.observe(.path("*.isDone"), queue: queue) { _ in count.increment() }
        first.isDone = true
        #expect(queue.drain() == 1)
        let later = CollItem("b")
        rows["b"] = later
        #expect(queue.drain() == 1)
        later.isDone = true
        first.isDone = false
        #expect(queue.drain() == 1)
        rows["a"] = nil  // one occurrence of `first` remains
        #expect(queue.drain() == 1)
        first.isDone = true
        #expect(queue.drain() == 1)
        #expect(count.value == 5)
        withExtendedLifetime(token) {}
    }
}

@Suite("Collection paths: index components")
struct CollectionPathIndexTests {
    /// `numbers.#i` string paths keep their leaf on a cell per index, as `observeElement(at:)`
    /// does: the array's own registry holds one entry for all of them, so an insertion at the
    /// front notifies each watched index once, in O(watched indexes).
    @Test func manyIndexComponentsShareOneEntryOnTheArray() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.numbers.append(contentsOf: Array(0..<300))
        let fired = CoreCounter()
        let tokens = try (0..<200).map { index in
            try list.observe(.path("numbers.#\(index)"), queue: queue) { _ in fired.increment() }
        }
        let entries = list.numbers.existingRegistry?.withLock { $0.properties.count } ?? 0
        #expect(entries == 1)
        list.numbers.insert(-1, at: 0)
        #expect(queue.drain() == 200)
        list.numbers[250] = 0  // not watched
        #expect(queue.drain() == 0)
        #expect(tokens[7].debugDescription.contains("numbers.#7"))
        withExtendedLifetime(tokens) {}
    }

    @Test func anIndexComponentFollowsTheIndexIntoAReplacingArray() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.numbers.append(contentsOf: [1, 2, 3])
        let seen = CollLog<Int?>()
        let token = try list.observe(.path("numbers.#2"), queue: queue) { list in
            seen.append(list.numbers[ifPresent: 2])
        }
        list.numbers = [7]  // the new array has no index 2: fires (the path changed), nil there
        #expect(queue.drain() == 1)
        list.numbers.append(8)  // index 1: not watched
        #expect(queue.drain() == 0)
        list.numbers.append(9)  // reaches index 2
        #expect(queue.drain() == 1)
        #expect(seen.take() == [nil, 9])
        withExtendedLifetime(token) {}
    }
}

@Suite("Collection paths: object-following through replaced arrays")
struct CollectionPathFollowingTests {
    @Test func anObjectFollowingComponentFollowsTheObjectIntoAReplacingArray() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.items.append(contentsOf: collItems(3))
        let followed = list.items[1]
        let fired = CoreCounter()
        let token = try list.observe(.path("items.1.title"), queue: queue) { _ in fired.increment() }

        // Replaced by an array that holds the object (elsewhere): fires (the path changed) and
        // follows it there
        list.items = ObservedArray([CollItem("a"), CollItem("b"), followed])
        #expect(queue.drain() == 1)
        followed.title = "x"
        #expect(queue.drain() == 1)
        list.items.insert(CollItem("c"), at: 0)  // a move: nothing
        #expect(queue.drain() == 0)

        // Replaced by one without it: fires, and the rest of the path is unreachable
        list.items = ObservedArray([CollItem("d")])
        #expect(queue.drain() == 1)
        followed.title = "y"
        #expect(queue.drain() == 0)

        // Back in a later array: followed again; leaving that array fires once and ends
        list.items = ObservedArray([followed])
        #expect(queue.drain() == 1)
        followed.title = "z"
        #expect(queue.drain() == 1)
        list.items.removeAll()
        #expect(queue.drain() == 1)
        #expect(!token.isValid)
        #expect(fired.value == 6)
        withExtendedLifetime(token) {}
    }

    /// A replacing array may land at the address of the array the component was made on, once
    /// that one is gone; it must still be asked whether it holds the object.
    @Test func anArrayAtTheAddressOfAFreedOneIsNotTakenForIt() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        list.items.append(contentsOf: collItems(2))
        let followed = list.items[1]
        let firstArray = ObjectIdentifier(list.items)
        let fired = CoreCounter()
        let token = try list.observe(.path("items.1.title"), queue: queue) { _ in fired.increment() }
        // Replaced, then arrays made and dropped until one lands where the first one was.
        list.items = ObservedArray([CollItem("x")])
        var landed: ObservedArray<CollItem>?
        var kept: [ObservedArray<CollItem>] = []
        for _ in 0..<10_000 where landed == nil {
            let array = ObservedArray<CollItem>()
            if ObjectIdentifier(array) == firstArray { landed = array } else { kept.append(array) }
        }
        // The allocator decides; on this platform's debug build it lands within a few tries
        // (the test fails there without the fix). Elsewhere it may not, and checks nothing.
        guard let landed else { return }
        landed.append(CollItem("z"))
        list.items = landed
        _ = queue.drain()
        let before = fired.value
        followed.title = "changed"
        #expect(queue.drain() == 0)
        #expect(fired.value == before)
        withExtendedLifetime(token) {}
    }
}
