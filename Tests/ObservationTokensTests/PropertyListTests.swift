import Testing

@testable import ObservationTokens

/// A registry keeps its first three observed properties inline and all of them in a buffer of
/// its own once a fourth is observed (`PropertyList`); these tests pin the indices, the
/// in-place scans and the tokens of objects whose properties cross from one to the other.
@Suite struct PropertyListTests {
    @Test func entriesKeepTheirIndicesAcrossTheInlineFirstAndTheArray() {
        // Given a list of three properties, the first inline
        var list = PropertyList()
        #expect(list.isEmpty)
        #expect(list.firstIndex(ofSerial: 7) == nil)
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let tokens = (0..<3).map { _ in person.observe(\.age, queue: queue) { _ in } }
        let probes = tokens.map(\.subscription)
        let serials: [UInt64] = [7, 9, PathStep.wildcardSerial]
        #expect(serials.map { list.append(RegistryState.PropertyObservers(serial: $0)) } == [0, 1, 2])

        // When members go in through indices and scans in place
        for index in list.indices {
            _ = list.withEntry(at: index) { $0.members.insert(probes[index], flag: index == 1) }
        }
        var visited: [UInt64] = []
        list.forEachInPlace(serialOrWildcard: 9) { property in visited.append(property.serial) }
        var borrowed: [(UInt64, Int)] = []
        list.forEachEntry { borrowed.append(($0.serial, $0.members.count)) }

        // Then each index names the same entry, and the scans see the property asked for and `*`
        #expect(list.count == 3)
        #expect([7, 9, PathStep.wildcardSerial, 8].map { list.firstIndex(ofSerial: $0) } == [0, 1, 2, nil])
        #expect(visited == [9, PathStep.wildcardSerial])
        #expect(borrowed.map(\.0) == [7, 9, PathStep.wildcardSerial])
        #expect(borrowed.map(\.1) == [1, 1, 1])
        #expect(list.map(\.serial) == [7, 9, PathStep.wildcardSerial])
        #expect(list[1].members.firstElement?.flag == true)
        #expect(list[0].members.firstElement?.element.toOpaque() == Unmanaged.passUnretained(probes[0]).toOpaque())
        withExtendedLifetime(tokens) {}
    }

    @Test func aScanForAPropertyStillReachesAStarEntryMadeAfterIt() {
        // Given lists whose `*` entry comes after the property scanned for, before it, or not at all
        func visits(_ serials: [UInt64], scanningFor serial: UInt64) -> [UInt64] {
            var list = PropertyList()
            for entry in serials { _ = list.append(RegistryState.PropertyObservers(serial: entry)) }
            var visited: [UInt64] = []
            list.forEachInPlace(serialOrWildcard: serial) { visited.append($0.serial) }
            return visited
        }
        let star = PathStep.wildcardSerial

        // When each is scanned for one property
        let starLast = visits([7, 9, 11, star], scanningFor: 7)
        let starInTheMiddle = visits([9, 7, star, 11], scanningFor: 7)
        let starFirst = visits([star, 9, 11], scanningFor: 11)
        let noStar = visits([7, 9, 11], scanningFor: 9)
        let notThere = visits([7, 9, star], scanningFor: 13)

        // Then the scan sees the property and `*` wherever they are, and nothing else
        #expect(starLast == [7, star])
        #expect(starInTheMiddle == [7, star])
        #expect(starFirst == [star, 11])
        #expect(noStar == [9])
        #expect(notThere == [star])
    }

    @Test func theInlineFirstPropertyLosingItsTokensLeavesTheOthersDelivering() {
        // Given an object whose first observed property is inline and whose second is not
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let names = RelLock<[String]>([])
        var first: ObservationToken? = person.observe(\.firstName, queue: queue) { _ in
            names.withLock { $0.append("first") }
        }
        let last = person.observe(\.lastName, queue: queue) { _ in names.withLock { $0.append("last") } }
        let serials = person.registry.observedSerials
        #expect(serials.count == 2)

        // When the first property's only token ends, and both properties are set
        first = nil
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        #expect(queue.drain() == 1)

        // Then only the second property's token is told, and the first property's entry stays for
        // its next observer, which is told again
        #expect(names.withLock { $0 } == ["last"])
        #expect(person.registry.observedSerials == [serials[1]])
        first = person.observe(\.firstName, queue: queue) { _ in names.withLock { $0.append("first") } }
        person.firstName = "Grace"
        #expect(queue.drain() == 1)
        #expect(names.withLock { $0 } == ["last", "first"])
        #expect(person.registry.observedSerials == serials)
        #expect(person.attachedEdgeCount == 2)
        withExtendedLifetime((first, last)) {}
    }

    @Test func entriesKeepTheirIndicesWhenTheListSpillsAndItsBufferGrows() {
        // Given a list of twelve properties (past the inline three, and past the buffer's first
        // capacity), each entry with two members (a table of its own to free)
        var list = PropertyList()
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let tokens = (0..<24).map { _ in person.observe(\.age, queue: queue) { _ in } }
        let probes = tokens.map(\.subscription)
        let serials: [UInt64] = [7, 9, PathStep.wildcardSerial] + (20..<29).map(UInt64.init)
        var indices: [Int] = []
        for serial in serials {
            let index = list.append(RegistryState.PropertyObservers(serial: serial))
            indices.append(index)
            // Members go in as each entry is added, so the entries moved by a spill or a growth
            // carry theirs along.
            _ = list.withEntry(at: index) { $0.members.insert(probes[2 * index], flag: false) }
            _ = list.withEntry(at: index) { $0.members.insert(probes[2 * index + 1], flag: index == 5) }
        }

        // When the list is scanned in place and read through its indices
        var visited: [UInt64] = []
        list.forEachInPlace(serialOrWildcard: 25) { property in visited.append(property.serial) }
        var borrowed: [(UInt64, Int)] = []
        list.forEachEntry { borrowed.append(($0.serial, $0.members.count)) }

        // Then every entry kept its index, its serial and its members
        #expect(indices == Array(0..<12))
        #expect(list.count == 12)
        #expect(list.map(\.serial) == serials)
        #expect(serials.map { list.firstIndex(ofSerial: $0) } == Array(0..<12).map(Optional.some))
        #expect(list.firstIndex(ofSerial: 8) == nil)
        #expect(visited == [PathStep.wildcardSerial, 25])
        #expect(borrowed.map(\.0) == serials)
        #expect(borrowed.map(\.1) == Array(repeating: 2, count: 12))
        for index in list.indices {
            var members: [UnsafeMutableRawPointer] = []
            list[index].members.forEachUnretained { member, flag in
                members.append(member.toOpaque())
                #expect(flag == (index == 5 && members.count == 2))
            }
            #expect(members == [2 * index, 2 * index + 1].map { Unmanaged.passUnretained(probes[$0]).toOpaque() })
        }

        // And emptied, it is an empty list that takes entries again (inline)
        list.removeAll()
        #expect(list.isEmpty)
        #expect(list.firstIndex(ofSerial: 7) == nil)
        #expect(list.append(RegistryState.PropertyObservers(serial: 30)) == 0)
        #expect(list.map(\.serial) == [30])
        list.removeAll()
        withExtendedLifetime(tokens) {}
    }

    @Test func anObjectWithTenObservedPropertiesDeliversEachAndFreesEveryTokenAtItsDeinit() {
        // Given an object with a token on each of its ten properties (its registry's list spills
        // at the fourth and grows past it), two tokens on the sixth
        let queue = CoalescingQueue(target: .manual)
        var values: CoreValues? = CoreValues()
        let told = RelLock<[String]>([])
        func record(_ name: String) -> @Sendable (CoreValues) -> Void { { _ in told.withLock { $0.append(name) } } }
        var tokens: [ObservationToken] = [
            values!.observe(\.count, queue: queue, record("count")),
            values!.observe(\.name, queue: queue, record("name")),
            values!.observe(\.optionalCount, queue: queue, record("optionalCount")),
            values!.observe(\.neverEqual, queue: queue, record("neverEqual")),
            values!.observe(\.alwaysEqual, queue: queue, record("alwaysEqual")),
            values!.observe(\.optionalNeverEqual, queue: queue, record("optionalNeverEqual")),
            values!.observe(\.optionalNeverEqual, queue: queue, record("optionalNeverEqual 2")),
            values!.observe(\.optionalAlwaysEqual, queue: queue, record("optionalAlwaysEqual")),
            values!.observe(\.point, queue: queue, record("point")),
            values!.observe(\.tagged, queue: queue, record("tagged")),
            values!.observe(\.address, queue: queue, record("address")),
        ]
        #expect(values!.registry.observedSerials.count == 10)
        #expect(values!.attachedEdgeCount == 11)

        // When the first, a middle and the last property are set, and the sixth's first token ends
        values!.count = 1
        values!.optionalNeverEqual = CoreNeverEqual()
        values!.address = CoreAddress()
        #expect(queue.drain() == 4)
        tokens.remove(at: 5)
        values!.optionalNeverEqual = nil
        values!.tagged = CoreTagged(id: 1, note: "x")
        #expect(queue.drain() == 2)

        // Then each set told the tokens on its property, once each
        #expect(
            told.withLock { $0 }
                == ["count", "optionalNeverEqual", "optionalNeverEqual 2", "address", "optionalNeverEqual 2", "tagged"])

        // And when the object goes with its ten tokens live, every token ends and every
        // subscription is freed with its token
        weak let registry = values!.registry
        weak let firstSubscription = tokens[0].subscription
        weak let lastSubscription = tokens[9].subscription
        values = nil
        #expect(tokens.allSatisfy { !$0.isValid })
        #expect(registry != nil)  // (its tokens' subscriptions hold it)
        tokens.removeAll()
        #expect(firstSubscription == nil)
        #expect(lastSubscription == nil)
        #expect(registry == nil)
        #expect(queue.drain() == 0)
    }
}
