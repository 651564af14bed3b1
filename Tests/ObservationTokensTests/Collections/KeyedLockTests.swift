import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A key whose `hash(into:)` creates a token on the dictionary it is used with: user code that
/// takes the dictionary's bookkeeping lock. Hashing such a key under that lock would be a
/// recursive lock (a crash).
final class CollReentrantKey: Hashable, @unchecked Sendable {  // one thread per test
    let name: String
    nonisolated(unsafe) weak var dictionary: ObservedDictionary<CollReentrantKey, Int>?
    nonisolated(unsafe) var tokens: [ObservationToken] = []

    init(_ name: String) { self.name = name }

    func hash(into hasher: inout Hasher) {
        if let dictionary, tokens.count < 3 {
            tokens.append(
                dictionary.observe(
                    .key(CollReentrantKey("other-\(tokens.count)")), queue: CoalescingQueue(target: .manual)
                ) { _ in })
        }
        hasher.combine(name)
    }

    static func == (lhs: CollReentrantKey, rhs: CollReentrantKey) -> Bool { lhs.name == rhs.name }
}

/// Issue 11: a dictionary's or set's keys are the user's, so their `hash(into:)` and `==` run
/// with no lock of the library held; and many changes of one key in a tick stay one entry.
@Suite("Observed dictionaries: keys' code runs outside the lock")
struct KeyedLockTests {
    @Test func aKeyWhoseHashObservesTheDictionaryDoesNotDeadlock() async {
        await #expect(processExitsWith: .success) {
            let queue = CoalescingQueue(target: .manual)
            let dictionary = ObservedDictionary<CollReentrantKey, Int>()
            let key = CollReentrantKey("a")
            key.dictionary = dictionary
            let seen = CoreCounter()
            let token = dictionary.observe(.key(key), queue: queue) { _ in seen.increment() }
            let list = dictionary.observe(.mutations, queue: queue) { _, _ in }
            dictionary[key] = 1
            queue.drain()
            guard seen.value == 1 else { exit(1) }
            withExtendedLifetime((token, list)) {}
        }
    }

    @Test func thousandsOfChangesToOneKeyInATickAreOneEntryWithTheRightKind() {
        let queue = CoalescingQueue(target: .manual)
        let settings: ObservedDictionary<String, Int> = ["kept": 0]
        let seen = CoreRecorder<String>()
        let token = settings.observe(.mutations, queue: queue) { _, changes in
            seen.append("+\(changes.inserted.sorted()) -\(changes.removed.sorted()) ~\(changes.updated.sorted())")
        }
        for value in 1...5_000 {
            settings["kept"] = value  // present before and after: updated
            settings["new"] = value  // absent before, present after: inserted
        }
        settings["gone"] = 1
        settings["gone"] = nil  // absent before and after: nothing
        queue.drain()
        #expect(seen.entries == ["+[\"new\"] -[] ~[\"kept\"]"])
        withExtendedLifetime(token) {}
    }
}
