import Testing

@testable import ObservationTokens

/// `WeakSet` packs each element's address and flag into one word and threads its free list
/// through the freed words; these tests pin that bookkeeping.
@Suite struct WeakSetTests {
    @Test func keepsEachElementWithItsFlagAndReusesFreedSlotsLastFreedFirst() {
        let objects = (0..<5).map { _ in CoreProbe() }
        var set = WeakSet<CoreProbe>()
        let slots = objects.indices.map { set.insert(objects[$0], flag: $0.isMultiple(of: 2)) }
        #expect(slots == [0, 1, 2, 3, 4])

        set.remove(at: 1)
        set.remove(at: 3)
        set.remove(at: 3)  // already free: no-op
        set.remove(at: 99)  // out of range: no-op
        #expect(set.count == 3)
        #expect(members(of: set).ids == [0, 2, 4].map { id(objects[$0]) })
        #expect(members(of: set).flags == [true, true, true])

        #expect(set.insert(objects[3], flag: false) == 3)
        #expect(set.insert(objects[1], flag: true) == 1)
        #expect(set.insert(objects[0], flag: false) == 5)
        #expect(set.count == 6)
        #expect(members(of: set).ids == [0, 1, 2, 3, 4, 0].map { id(objects[$0]) })
        #expect(members(of: set).flags == [true, true, true, false, true, false])
    }

    @Test func emptiedSetStartsOverAndRemoveAllReturnsEveryElement() {
        let objects = (0..<3).map { _ in CoreProbe() }
        var set = WeakSet<CoreProbe>()
        for object in objects { _ = set.insert(object, flag: false) }
        for slot in [2, 0, 1] { set.remove(at: slot) }
        #expect(set.isEmpty)
        #expect(set.insert(objects[1], flag: true) == 0)  // no stale free list survives
        _ = set.insert(objects[2], flag: false)

        let removed = set.removeAll()
        #expect(removed.map(ObjectIdentifier.init) == [id(objects[1]), id(objects[2])])
        #expect(set.isEmpty)
        #expect(members(of: set).ids.isEmpty)
    }

    /// Slot 0 is kept inline, apart from the table: it is freed, listed and reused like the
    /// others, and the set's order still starts with it.
    @Test func theInlineFirstSlotIsFreedAndReusedLikeAnyOther() {
        let objects = (0..<4).map { _ in CoreProbe() }
        var set = WeakSet<CoreProbe>()
        #expect(objects.prefix(3).map { set.insert($0, flag: false) } == [0, 1, 2])

        set.remove(at: 0)
        set.remove(at: 0)  // already free: no-op
        #expect(members(of: set).ids == [1, 2].map { id(objects[$0]) })
        set.remove(at: 2)
        // Freed last first: slot 2, then slot 0, then a new slot.
        #expect(set.insert(objects[3], flag: true) == 2)
        #expect(set.insert(objects[0], flag: true) == 0)
        #expect(set.insert(objects[2], flag: false) == 3)
        #expect(members(of: set).ids == [0, 1, 3, 2].map { id(objects[$0]) })
        #expect(members(of: set).flags == [true, false, true, false])

        for slot in [1, 2, 3] { set.remove(at: slot) }
        #expect(set.count == 1)
        #expect(members(of: set).ids == [id(objects[0])])
        set.remove(at: 0)
        #expect(set.isEmpty)
        #expect(members(of: set).ids.isEmpty)
        #expect(set.insert(objects[1], flag: false) == 0)
    }

    private func id(_ object: CoreProbe) -> ObjectIdentifier { ObjectIdentifier(object) }

    private func members(of set: WeakSet<CoreProbe>) -> (ids: [ObjectIdentifier], flags: [Bool]) {
        var result: (ids: [ObjectIdentifier], flags: [Bool]) = ([], [])
        set.forEachUnretained { element, flag in
            result.ids.append(ObjectIdentifier(element.takeUnretainedValue()))
            result.flags.append(flag)
        }
        return result
    }
}
