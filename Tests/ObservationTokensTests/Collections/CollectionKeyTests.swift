import Testing

@testable import ObservationTokens

// Keys and members in string paths, the lifetime of what a collection keeps for key tokens,
// and the typed `observeEach` of dictionaries and sets.

@Suite("Collection keys: set member keys")
struct CollectionMemberKeyTests {
    /// Given two sets that were asked for keys in different orders; then a member has the same
    /// key in both, and each set looks it up.
    @Test func aMemberKeyNamesTheSameMemberInEverySet() {
        let first: ObservedSet<String> = ["urgent"]
        let urgent = first.key(for: "urgent")
        let second: ObservedSet<String> = ["other", "urgent"]
        let other = second.key(for: "other")  // asked first here
        #expect(second.key(for: "urgent") == urgent)
        #expect(first.key(for: "other") == other)
        #expect(other != urgent)
        #expect(second.member(forKey: urgent) == "urgent")
        #expect(first.member(forKey: other) == nil)  // not a member of `first`
    }

    /// Given a path on a member's key; when the set is replaced by one in which another member
    /// was given a key first, and both members come and go; then the path fires for its own
    /// member only.
    @Test func aMemberPathFollowsItsMemberIntoAReplacingSet() throws {
        let queue = CoalescingQueue(target: .manual)
        // Members no other test names: keys are handed out per element type, process-wide.
        let urgent = "urgent-\(UInt64.random(in: 0...UInt64.max))"
        let other = "other-\(UInt64.random(in: 0...UInt64.max))"
        let list = CollList()
        let key = list.tags.key(for: urgent)
        let seen = CollLog<Bool>()
        let token = try list.observe(.path("tags.\(key)"), queue: queue) { list in
            seen.append(list.tags.contains(urgent))
        }
        let replacement = ObservedSet<String>()
        _ = replacement.key(for: other)  // another member asks the new set for a key first
        list.tags = replacement
        #expect(queue.drain() == 1)  // the path changed
        replacement.insert(other)
        #expect(queue.drain() == 0)
        replacement.insert(urgent)
        #expect(queue.drain() == 1)
        replacement.remove(urgent)
        #expect(queue.drain() == 1)
        #expect(seen.take() == [false, true, false])
        withExtendedLifetime(token) {}
    }

    @Test func anUnknownMemberKeyThrows() {
        let list = CollList()
        #expect(
            throws: KeyPathError.unknownMemberKey(
                "&999999", type: "ObservedSet<String>", path: "tags.&999999", position: 2)
        ) {
            try list.observe(.path("tags.&999999"), queue: CoalescingQueue(target: .manual)) { _ in }
        }
    }
}

@Suite("Collection keys: dictionary keys that are digits")
struct CollectionDigitKeyTests {
    /// Given dictionaries with `String` and `Int` keys; when paths name keys that are digits;
    /// then each fires for its key only, and `count` and `*` keep their meaning.
    @Test func digitComponentsNameDictionaryKeys() throws {
        let queue = CoalescingQueue(target: .manual)
        let list = CollList()
        let shelf = CollShelf()
        let fired = CollLog<String>()
        let tokens = [
            try list.observe(.path("settings.1"), queue: queue) { _ in fired.append("settings.1") },
            try shelf.observe(.path("scores.1"), queue: queue) { _ in fired.append("scores.1") },
            try shelf.observe(.path("scores.count"), queue: queue) { _ in fired.append("count") },
            try shelf.observe(.path("scores.*"), queue: queue) { _ in fired.append("*") },
        ]
        list.settings["2"] = "b"
        #expect(queue.drain() == 0)
        list.settings["1"] = "a"
        #expect(queue.drain() == 1)
        shelf.scores[2] = "two"
        #expect(queue.drain() == 2)  // count, *
        shelf.scores[1] = "one"
        #expect(queue.drain() == 3)  // scores.1, count, *
        #expect(fired.take() == ["settings.1", "*", "count", "*", "count", "scores.1"])
        withExtendedLifetime(tokens) {}
    }
}

@Suite("Collection keys: what a collection keeps for key tokens")
struct CollectionKeyLifetimeTests {
    enum Kind: String, CaseIterable, Sendable {
        case observeKey, keyPath, stringPath, trackedClosure
    }

    /// Given many short-lived keys, each observed, changed and dropped; then the dictionary
    /// keeps no cell and no key object for any of them.
    @Test(arguments: Kind.allCases)
    func endedKeyTokensLeaveNoKeyBehind(kind: Kind) throws {
        let queue = CoalescingQueue(target: .manual)
        let holder = CollKeyedHolder()
        let dictionary = holder.values
        var weakKeys: [WeakBox<CollKey>] = []
        let fired = CoreCounter()
        for index in 0..<200 {
            let key = CollKey("k\(index)")
            weakKeys.append(WeakBox(key))
            var token: ObservationToken? =
                switch kind {
                case .observeKey: dictionary.observe(.key(key), queue: queue) { _ in fired.increment() }
                case .keyPath: dictionary.observe(\.[key], queue: queue) { _ in fired.increment() }
                case .stringPath:
                    try holder.observe(.path("names.k\(index)"), queue: queue) { _ in fired.increment() }
                case .trackedClosure:
                    dictionary.observe(queue: queue) { dictionary in
                        _ = dictionary[key]
                        fired.increment()
                    }
                }
            if kind == .stringPath { holder.names["k\(index)"] = index } else { dictionary[key] = index }
            queue.drain()
            if index.isMultiple(of: 2) {
                token?.invalidate()  // ended while still held: the cell goes now
                #expect(dictionary.keyCellCount == 0 && holder.names.keyCellCount == 0)
            }
            token = nil
            dictionary.removeAll()
        }
        #expect(fired.value >= 200)
        #expect(weakKeys.allSatisfy { $0.object == nil })
        #expect(dictionary.keyCellCount == 0)
        #expect(holder.names.keyCellCount == 0)
    }

    /// The same with a set's members, through `observe(member:)` and `\.[contains:]`.
    @Test func endedMemberTokensLeaveNoMemberBehind() {
        let queue = CoalescingQueue(target: .manual)
        let set = ObservedSet<CollKey>()
        var weakMembers: [WeakBox<CollKey>] = []
        for index in 0..<200 {
            let member = CollKey("m\(index)")
            weakMembers.append(WeakBox(member))
            var token: ObservationToken? =
                index.isMultiple(of: 2)
                ? set.observe(.member(member), queue: queue) { _ in }
                : set.observe(\.[contains: member], queue: queue) { _ in }
            set.insert(member)
            queue.drain()
            token = nil
            withExtendedLifetime(token) {}
            set.removeAll()
        }
        #expect(weakMembers.allSatisfy { $0.object == nil })
        #expect(set.keyCellCount == 0)
    }

    /// Given two tokens on one key; when the first ends; then the key's cell stays for the
    /// second, which still fires, and goes with it.
    @Test func aCellStaysWhileAnyTokenOnItsKeyLives() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, Int> = [:]
        let count = CoreCounter()
        var first: ObservationToken? = settings.observe(.key("a"), queue: queue) { _ in }
        let second = settings.observe(.key("a"), queue: queue) { _ in count.increment() }
        #expect(settings.keyCellCount == 1)
        first = nil
        #expect(settings.keyCellCount == 1)
        settings["a"] = 1
        #expect(queue.drain() == 1)
        second.invalidate()
        #expect(settings.keyCellCount == 0)
        withExtendedLifetime(first) {}
    }

    /// A token may attach to a cell that has just left the table (it looked the cell up just
    /// before): the cell puts itself back, and the token fires.
    @Test func aCellThatLeftComesBackWithItsNextToken() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, Int> = [:]
        let stale = settings.keyCell(for: "a")
        stale.observationStateDidChange(forProperty: "presence", isObserved: false)  // leaves
        #expect(settings.keyCellCount == 0)
        let count = CoreCounter()
        let token = settings._observeSynthetic(
            _ModelSubscription(
                root: settings,
                target: .paths([ObservedPath(steps: stale.steps(keyersSerial: settings.keyersSerial, reading: false))]),
                options: [], queue: queue, site: CreationSite(fileID: #fileID, line: #line)
            ) { _ in count.increment() })
        #expect(settings.keyCellCount == 1)
        settings["a"] = 1
        #expect(queue.drain() == 1)

        // Meanwhile another cell was made for the key: both are told.
        let staleAgain = settings.keyCell(for: "a")
        staleAgain.observationStateDidChange(forProperty: "presence", isObserved: false)  // ignored: observed
        #expect(settings.keyCellCount == 1)
        token.invalidate()
        #expect(settings.keyCellCount == 0)
        let again = settings.keyCell(for: "a")
        again.observationStateDidChange(forProperty: "presence", isObserved: false)
        let fresh = settings.observe(.key("a"), queue: queue) { _ in count.increment() }
        let back = settings._observeSynthetic(
            _ModelSubscription(
                root: settings,
                target: .paths([ObservedPath(steps: stale.steps(keyersSerial: settings.keyersSerial, reading: false))]),
                options: [], queue: queue, site: CreationSite(fileID: #fileID, line: #line)
            ) { _ in count.increment() })
        #expect(settings.keyCellCount == 2)  // the new cell, and the old one beside it
        settings["a"] = 2
        #expect(queue.drain() == 2)
        back.invalidate()
        #expect(settings.keyCellCount == 1)
        #expect(count.value == 3)
        withExtendedLifetime(fresh) {}
    }
}

/// A dictionary with object keys, and one with `String` keys for string paths.
final class CollKeyedHolder: ObservableModel {
    @Observed var values: ObservedDictionary<CollKey, Int> = [:]
    @Observed var names: ObservedDictionary<String, Int> = [:]
}

/// A weak reference, for arrays of them.
struct WeakBox<Object: AnyObject> {
    weak var object: Object?

    init(_ object: Object) { self.object = object }
}

@Suite("Collection keys: observeEach on dictionaries and sets")
struct CollectionObserveEachTests {
    @Test func observeEachWatchesEveryDictionaryValue() {
        let queue = CoalescingQueue(target: .manual)
        let rows: ObservedDictionary<String, CollItem> = [:]
        let first = CollItem("a")
        rows["a"] = first
        let count = CoreCounter()
        let token = rows.observe(.each(\.isDone), queue: queue) { _ in count.increment() }
        first.isDone = true
        #expect(queue.drain() == 1)
        let later = CollItem("b")
        rows["b"] = later  // the dictionary changed
        #expect(queue.drain() == 1)
        later.isDone = true
        #expect(queue.drain() == 1)
        rows["a"] = nil
        #expect(queue.drain() == 1)
        first.isDone = false  // no longer a value
        #expect(queue.drain() == 0)
        #expect(count.value == 4)
        withExtendedLifetime(token) {}
    }

    @Test func observeEachWatchesEverySetMember() {
        let queue = CoalescingQueue(target: .manual)
        let team: ObservedSet<CollItem> = []
        let member = CollItem("a")
        team.insert(member)
        let count = CoreCounter()
        let token = team.observe(.each(\.title), queue: queue) { _ in count.increment() }
        member.title = "b"
        #expect(queue.drain() == 1)
        team.remove(member)
        #expect(queue.drain() == 1)
        member.title = "c"
        #expect(queue.drain() == 0)
        #expect(count.value == 2)
        withExtendedLifetime(token) {}
    }

    @Test func aDictionaryCopiesAnotherObservedDictionary() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, String> = ["theme": "light"]
        let count = CoreCounter()
        let token = settings.observe(.key("theme"), queue: queue) { _ in count.increment() }
        let copy = ObservedDictionary(settings)
        copy["theme"] = "dark"
        #expect(queue.drain() == 0)  // the copy has no observers; the original is unchanged
        #expect(settings["theme"] == "light" && copy["theme"] == "dark")
        #expect(copy.attachedEdgeCount == 0)
        withExtendedLifetime(token) {}
    }
}
