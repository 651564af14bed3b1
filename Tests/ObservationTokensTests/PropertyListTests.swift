import Testing

@testable import ObservationTokens

/// A registry keeps its first observed property inline and the others in an array
/// (`PropertyList`); these tests pin the indices, the in-place scans and the tokens of objects
/// whose properties cross from one to the other.
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
}
