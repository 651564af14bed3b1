import Testing

@testable import ObservationTokens

@Suite("Observed dictionaries")
struct ObservedDictionaryTests {
    @Test func aKeyFiresOnAddChangeAndRemoveOnlyIfPresent() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, String> = ["font": "Serif"]
        let seen = CollLog<String?>()
        // Observed before the key exists.
        let token = settings.observe(.key("theme"), queue: queue) { settings in seen.append(settings["theme"]) }
        let steps: [(String, (ObservedDictionary<String, String>) -> Void, Bool)] = [
            ("remove absent", { $0.removeValue(forKey: "theme") }, false),
            ("set nil absent", { $0["theme"] = nil }, false),
            ("other key", { $0["font"] = "Mono" }, false),
            ("add", { $0["theme"] = "dark" }, true),
            ("same value", { $0["theme"] = "dark" }, false),
            ("same value, updateValue", { $0.updateValue("dark", forKey: "theme") }, false),
            ("change", { $0["theme"] = "light" }, true),
            ("default subscript", { $0["theme", default: ""] += "!" }, true),
            ("merge other keys", { $0.merge(["a": "1", "b": "2"]) { $1 } }, false),
            ("merge same value", { $0.merge(["theme": "light!"]) { $1 } }, false),
            ("merge change", { $0.merge([("theme", "x"), ("a", "3")]) { $1 } }, true),
            ("remove", { $0.removeValue(forKey: "theme") }, true),
            ("removeAll without it", { $0.removeAll() }, false),
            ("add again", { $0["theme"] = "dark" }, true),
            ("removeAll", { $0.removeAll() }, true),
        ]
        for (name, step, fires) in steps {
            step(settings)
            #expect(queue.drain() == (fires ? 1 : 0), "\(name)")
        }
        #expect(seen.take() == ["dark", "light", "light!", "x", nil, "dark", nil])
        withExtendedLifetime(token) {}
    }

    @Test func objectValuesCompareByIdentity() {
        let queue = CoalescingQueue(target: .manual)
        let rows: ObservedDictionary<Int, CollItem> = [:]
        let first = CollItem("a")
        let count = CoreCounter()
        let token = rows.observe(\.[1], queue: queue) { _ in count.increment() }
        rows[1] = first
        #expect(queue.drain() == 1)
        rows[1] = first
        #expect(queue.drain() == 0)
        rows[1] = CollItem("a")  // equal title, another object
        #expect(queue.drain() == 1)
        #expect(count.value == 2)
        withExtendedLifetime(token) {}
    }

    @Test func countAndChangeLists() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, Int> = ["a": 1, "b": 2]
        let counts = CollLog<Int>()
        let changes = CollLog<DictionaryChanges<String>>()
        let tokens = [
            settings.observe(\.count, queue: queue) { counts.append($0.count) },
            settings.observe(.mutations, queue: queue) { _, change in changes.append(change) },
        ]
        settings["a"] = 10  // updated; count unchanged
        #expect(queue.drain() == 1)
        settings["c"] = 3
        settings["c"] = nil  // added and removed: nothing to report, but one delivery
        settings["b"] = nil
        settings["b"] = 20  // removed and added: updated
        settings["d"] = 4
        #expect(queue.drain() == 2)
        settings.merge(["a": 1, "e": 5]) { $1 }
        settings.removeValue(forKey: "d")
        #expect(queue.drain() == 2)
        #expect(counts.take() == [3, 3])  // 2 → 3 → 2 → 3 in a tick still fires, as for properties
        #expect(
            changes.take() == [
                DictionaryChanges(updated: ["a"]),
                DictionaryChanges(inserted: ["d"], updated: ["b"]),
                DictionaryChanges(inserted: ["e"], removed: ["d"], updated: ["a"]),
            ])
        withExtendedLifetime(tokens) {}
    }

    @Test func behavesLikeADictionary() {
        let settings: ObservedDictionary<String, Int> = ["a": 1]
        settings.updateValue(2, forKey: "b")
        settings["c", default: 0] += 3
        #expect(settings.snapshot == ["a": 1, "b": 2, "c": 3])
        #expect(Set(settings.keys) == ["a", "b", "c"])
        #expect(settings.values.reduce(0, +) == 6)
        #expect(settings.count == 3 && !settings.isEmpty)
        #expect(settings.map(\.value).sorted() == [1, 2, 3])
        #expect(settings == ObservedDictionary(["a": 1, "b": 2, "c": 3]))
        #expect(settings.index(forKey: "b").map { settings[$0].value } == 2)
        let copy = ObservedDictionary(settings.snapshot)
        copy["z"] = 26
        #expect(settings["z"] == nil)
    }

    @Test func tokensRetainNothing() {
        let queue = CoalescingQueue(target: .manual)
        weak var weakSettings: ObservedDictionary<String, String>?
        var tokens: [ObservationToken] = []
        do {
            let settings: ObservedDictionary<String, String> = ["a": "1"]
            weakSettings = settings
            tokens.append(settings.observe(.key("a"), queue: queue) { _ in })
            tokens.append(settings.observe(.mutations, queue: queue) { _, _ in })
        }
        #expect(weakSettings == nil)
        #expect(tokens.allSatisfy { !$0.isValid })
    }
}

@Suite("Observed sets")
struct ObservedSetTests {
    @Test func aMemberFiresOnlyOnARealAddOrRemove() {
        let queue = CoalescingQueue(target: .manual)
        let tags: ObservedSet<String> = ["swift"]
        let seen = CollLog<Bool>()
        let token = tags.observe(.member("linux"), queue: queue) { tags in seen.append(tags.contains("linux")) }
        let steps: [(String, (ObservedSet<String>) -> Void, Bool)] = [
            ("remove absent", { $0.remove("linux") }, false),
            ("other member", { $0.insert("macos") }, false),
            ("insert", { $0.insert("linux") }, true),
            ("insert again", { $0.insert("linux") }, false),
            ("update existing", { $0.update(with: "linux") }, false),
            ("union with it", { $0.formUnion(["linux", "wasm"]) }, false),
            ("subtract others", { $0.subtract(["swift"]) }, false),
            ("intersection without it", { $0.formIntersection(["wasm", "macos"]) }, true),
            ("symmetric difference", { $0.formSymmetricDifference(["linux", "wasm"]) }, true),
            ("removeAll", { $0.removeAll() }, true),
        ]
        for (name, step, fires) in steps {
            step(tags)
            #expect(queue.drain() == (fires ? 1 : 0), "\(name)")
        }
        #expect(seen.take() == [true, false, true, false])
        withExtendedLifetime(token) {}
    }

    @Test func memberKeysAreStableAndNeverCollide() {
        let tags: ObservedSet<String> = ["a", "b"]
        let keyA = tags.key(for: "a")
        let keyB = tags.key(for: "b")
        let keyC = tags.key(for: "c")  // not a member yet
        #expect(keyA == tags.key(for: "a"))
        #expect(Set([keyA, keyB, keyC]).count == 3)
        #expect(tags.member(forKey: keyA) == "a")
        #expect(tags.member(forKey: keyC) == nil)
        tags.insert("c")
        #expect(tags.member(forKey: keyC) == "c")
        #expect(tags.member(forKey: "&999") == nil && tags.member(forKey: "a") == nil)
    }

    @Test func countAndChangeLists() {
        let queue = CoalescingQueue(target: .manual)
        let tags: ObservedSet<Int> = [1, 2, 3]
        let counts = CollLog<Int>()
        let changes = CollLog<SetChanges<Int>>()
        let tokens = [
            tags.observe(\.count, queue: queue) { counts.append($0.count) },
            tags.observe(.mutations, queue: queue) { _, change in changes.append(change) },
        ]
        tags.insert(2)
        #expect(queue.drain() == 0)
        tags.insert(4)
        tags.remove(1)
        #expect(queue.drain() == 2)  // the count changed and changed back: fires, as for properties
        tags.formUnion([5, 6])
        tags.remove(6)
        #expect(queue.drain() == 2)
        #expect(counts.take() == [3, 4])
        #expect(changes.take() == [SetChanges(inserted: [4], removed: [1]), SetChanges(inserted: [5])])
        withExtendedLifetime(tokens) {}
    }

    @Test func behavesLikeASet() {
        let tags: ObservedSet<Int> = [1, 2]
        #expect(tags.union(ObservedSet([3])) == ObservedSet([1, 2, 3]))
        #expect(tags.intersection(ObservedSet([2, 3])) == ObservedSet([2]))
        #expect(tags.symmetricDifference(ObservedSet([2, 3])) == ObservedSet([1, 3]))
        #expect(tags.isSubset(of: ObservedSet([1, 2, 3])))
        #expect(tags.snapshot == [1, 2] && tags.count == 2 && !tags.isEmpty)
        #expect(Set([tags]).contains(ObservedSet([2, 1])))
        #expect(tags.sorted() == [1, 2])
    }
}

@Suite("Observed dictionaries: many keys")
struct ObservedDictionaryKeyCellTests {
    @Test func eachKeyTokenFiresOnlyForItsKeyAmongMany() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<Int, Int> = [:]
        let fired = CollLog<Int>()
        let tokens = (0..<100).map { key in settings.observe(.key(key), queue: queue) { _ in fired.append(key) } }
        #expect(settings.attachedEdgeCount == 100)  // all on one shared entry of the dictionary
        settings.merge([(3, 1), (70, 2), (500, 3)]) { $1 }
        #expect(queue.drain() == 2)
        #expect(fired.take().sorted() == [3, 70])
        let endpoint = CoreCounter()
        let endpointToken = settings.observe(.key(3), options: .endpointChanges, queue: queue) { _ in
            endpoint.increment()
        }
        settings[3] = 5
        settings[3] = 1  // back to the value last seen: .endpointChanges skips it
        #expect(queue.drain() == 1)
        #expect(endpoint.value == 0)
        withExtendedLifetime((tokens, endpointToken)) {}
    }
}
