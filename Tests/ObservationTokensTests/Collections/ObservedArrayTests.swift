import Testing

@testable import ObservationTokens

@Suite("Observed arrays")
struct ObservedArrayTests {
    // MARK: count

    @Test func countFiresOnlyWhenTheCountChanges() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = [1, 2, 3]
        let seen = CollLog<Int>()
        let token = numbers.observe(\.count, queue: queue) { numbers in seen.append(numbers.count) }
        numbers[0] = 10  // replaced in place: same count
        #expect(queue.drain() == 0)
        numbers.append(4)
        #expect(queue.drain() == 1)
        numbers.append(5)
        numbers.remove(at: 0)  // back to 4 within the tick: still a change of the count, delivered once
        numbers.append(6)
        #expect(queue.drain() == 1)
        numbers.swapAt(0, 1)
        numbers.sort()
        #expect(queue.drain() == 0)
        numbers.removeAll()
        #expect(queue.drain() == 1)
        #expect(seen.take() == [4, 5, 0])
        withExtendedLifetime(token) {}
    }

    // MARK: * and change lists

    @Test func mutationsFireOnEveryRealChangeWithAChangeList() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = [0, 1, 2, 3, 4]
        let seen = CollLog<ArrayChanges>()
        let token = numbers.observe(.mutations, queue: queue) { _, changes in seen.append(changes) }
        numbers[2] = 2  // identical: nothing
        numbers.replaceSubrange(0..<2, with: [0, 1])  // identical in place: nothing
        #expect(queue.drain() == 0)
        numbers[2] = 20
        #expect(queue.drain() == 1)
        numbers.append(5)
        numbers.append(6)
        #expect(queue.drain() == 1)
        numbers.remove(at: 1)
        numbers.insert(9, at: 0)
        #expect(queue.drain() == 1)
        #expect(
            seen.take() == [
                ArrayChanges(replaced: [2]),
                ArrayChanges(inserted: [5, 6]),
                ArrayChanges(removed: [1], inserted: [0]),
            ])
        withExtendedLifetime(token) {}
    }

    @Test func changeListsFoldATickOfChanges() {
        let queue = CoalescingQueue(target: .manual)
        let numbers = ObservedArray(0..<10)
        let seen = CollLog<ArrayChanges>()
        let token = numbers.observe(.mutations, queue: queue) { _, changes in seen.append(changes) }
        // Inserted then removed in the same tick: appears nowhere (the token still fires once).
        numbers.append(10)
        numbers.removeLast()
        #expect(queue.drain() == 1)
        // Inserted then replaced: inserted. Replaced then removed: removed.
        numbers.insert(-1, at: 0)
        numbers[0] = -2
        numbers[5] = 50  // old index 4
        numbers.remove(at: 5)
        numbers.removeSubrange(7..<9)  // old 7 and 8 (one inserted before, one removed before)
        #expect(queue.drain() == 1)
        // A move is a replacement of the indexes between.
        numbers.move(from: 0, to: 2)
        #expect(queue.drain() == 1)
        #expect(
            seen.take() == [
                ArrayChanges(),
                ArrayChanges(removed: [4, 7, 8], inserted: [0]),
                ArrayChanges(replaced: [0, 1, 2]),
            ])
        withExtendedLifetime(token) {}
    }

    @Test func changeLogMatchesAReplayedArray() {
        // Replaying the reported changes on the old array's elements yields the new array:
        // the batch-update contract, checked on a deterministic mix of operations.
        var generator = SplitMix(seed: 7)
        for _ in 0..<200 {
            var log = ArrayChangeLog()
            var current = Array(0..<Int(generator.next() % 8))
            let old = current
            var nextValue = 100
            for _ in 0..<Int(generator.next() % 6) {
                let lower = current.isEmpty ? 0 : Int(generator.next() % UInt64(current.count + 1))
                let upper = lower + Int(generator.next() % UInt64(current.count - lower + 1))
                let inPlace = generator.next() % 3 == 0
                let newCount = inPlace ? upper - lower : Int(generator.next() % 3)
                let values = (0..<newCount).map { _ in
                    nextValue += 1
                    return nextValue
                }
                log.record(replacing: lower..<upper, with: newCount, countBefore: current.count)
                current.replaceSubrange(lower..<upper, with: values)
            }
            let changes = log.take()
            // Remove (old indexes, descending), then insert (new indexes, ascending).
            var replay = old
            for index in changes.removed.reversed() { replay.remove(at: index) }
            for index in changes.inserted { replay.insert(current[index], at: index) }
            // Replaced old indexes: their new positions hold values no original element has.
            #expect(replay.count == current.count)
            for (index, value) in replay.enumerated() where value < 100 {
                #expect(current[index] == value || changes.replaced.contains(value))
            }
            #expect(Set(changes.removed).isDisjoint(with: changes.replaced))
            for index in changes.inserted { #expect(current[index] >= 100) }
            #expect(
                current.filter { $0 < 100 }
                    == old.filter { !changes.removed.contains($0) && !changes.replaced.contains($0) })
        }
    }

    // MARK: Index-following

    @Test func indexFollowingFiresExactlyWhenTheElementAtItsIndexChanges() {
        let queue = CoalescingQueue(target: .manual)
        let numbers = ObservedArray(0..<5)
        let seen = CollLog<Int?>()
        let token = numbers.observe(.element(at: 2), queue: queue) { numbers in seen.append(numbers[ifPresent: 2]) }
        let steps: [(String, (ObservedArray<Int>) -> Void, Bool)] = [
            ("append", { $0.append(5) }, false),
            ("replace after", { $0[3] = 30 }, false),
            ("replace at", { $0[2] = 20 }, true),
            ("same value at", { $0[2] = 20 }, false),
            ("insert before", { $0.insert(-1, at: 0) }, true),
            ("remove after", { $0.remove(at: 4) }, false),
            ("remove before", { $0.remove(at: 0) }, true),
            ("insert at", { $0.insert(7, at: 2) }, true),
            ("shrink past", { $0.removeSubrange(1...) }, true),
            ("grow to index 1", { $0.append(1) }, false),
            ("grow to reach it", { $0.append(2) }, true),
        ]
        for (name, step, fires) in steps {
            step(numbers)
            #expect(queue.drain() == (fires ? 1 : 0), "\(name)")
        }
        #expect(seen.take() == [20, 1, 20, 7, nil, 2])
        withExtendedLifetime(token) {}
    }

    @Test func indexFollowingBeyondTheEndAndTypedKeyPaths() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = []
        let count = CoreCounter()
        // Observing several indexes of an empty array, as EBN's docs recommend.
        let tokens = (0..<4).map { index in
            numbers.observe(.element(at: index), queue: queue) { _ in count.increment() }
        }
        numbers.append(contentsOf: [1, 2])  // reaches 0 and 1
        #expect(queue.drain() == 2)
        // The same through a key path: `\.[ifPresent: 3]`.
        let typed = numbers.observe(\.[ifPresent: 3], queue: queue) { _ in count.increment() }
        numbers.append(contentsOf: [3, 4])  // reaches 2 and 3 (two tokens on 3)
        #expect(queue.drain() == 3)
        #expect(count.value == 5)
        withExtendedLifetime((tokens, typed)) {}
    }

    // MARK: Object-following

    @Test func objectFollowingFollowsMovesAndFiresOnceWhenTheObjectLeaves() throws {
        let queue = CoalescingQueue(target: .manual)
        let items = ObservedArray(collItems(4))
        let followed = items[1]
        let seen = CollLog<String?>()
        let token = items.observe(.object(at: 1), queue: queue) { _, item in seen.append(item?.title) }
        items.insert(CollItem("new"), at: 0)  // moves to 2
        items.swapAt(0, 2)  // moves to 0
        items.move(from: 0, to: 3)
        items.sort { $0.title < $1.title }
        items.remove(at: 0)  // another element
        items[1] = CollItem("other")
        #expect(queue.drain() == 0)
        #expect(token.isValid)
        followed.title = "renamed"  // the object's own properties aren't observed by `items.1`
        #expect(queue.drain() == 0)
        items.removeAll { $0 === followed }
        #expect(queue.drain() == 1)
        #expect(!token.isValid)
        items.append(followed)  // back, but the token has ended
        items.removeLast()
        #expect(queue.drain() == 0)
        #expect(seen.take() == ["renamed"])
    }

    @Test func objectFollowingKeepsGoingWhileAnotherOccurrenceRemains() throws {
        let queue = CoalescingQueue(target: .manual)
        let item = CollItem("twice")
        let items: ObservedArray<CollItem> = [item, CollItem("x"), item]
        let count = CoreCounter()
        let token = items.observe(.object(at: 0), queue: queue) { _, _ in count.increment() }
        items.remove(at: 0)
        #expect(queue.drain() == 0)
        items.remove(at: 1)
        #expect(queue.drain() == 1)
        #expect(count.value == 1)
        #expect(!token.isValid)
    }

    @Test(arguments: [2, -1])
    func objectFollowingBeyondTheEndDeliversNilOnceThenEnds(index: Int) {
        let queue = CoalescingQueue(target: .manual)
        let items = ObservedArray(collItems(2))
        let delivered = CoreRecorder<String?>()
        let token = items.observe(.object(at: index), queue: queue) { _, item in delivered.append(item?.title) }
        // No object at the index: as if it had left already.
        #expect(queue.drain() == 1)
        #expect(delivered.entries == [nil])
        #expect(!token.isValid)
        items.append(contentsOf: collItems(3))
        #expect(queue.drain() == 0)
        #expect(delivered.entries == [nil])
    }

    @Test func objectFollowingLeavingInATickWithOtherChangesFiresOnce() throws {
        let queue = CoalescingQueue(target: .manual)
        let items = ObservedArray(collItems(3))
        let count = CoreCounter()
        let token = items.observe(.object(at: 2), queue: queue, { _, _ in count.increment() })
        items.removeAll()
        items.append(contentsOf: collItems(2))
        #expect(queue.drain() == 1)
        #expect(count.value == 1)
        #expect(!token.isValid)
    }

    // MARK: *.x

    @Test func eachFollowsEveryElementIncludingLaterOnesOncePerTick() {
        let queue = CoalescingQueue(target: .manual)
        let first = CollItem("a")
        let items: ObservedArray<CollItem> = [first, first]  // reachable twice
        let count = CoreCounter()
        let token = items.observe(.each(\.isDone), queue: queue) { _ in count.increment() }
        first.isDone = true
        #expect(queue.drain() == 1)
        let later = CollItem("b")
        items.append(later)  // the array changed: fires
        #expect(queue.drain() == 1)
        later.isDone = true
        first.isDone = false
        #expect(queue.drain() == 1)  // once per tick
        items.remove(at: 0)  // one occurrence of `first` remains
        #expect(queue.drain() == 1)
        first.isDone = true
        #expect(queue.drain() == 1)
        items.remove(at: 0)  // the last occurrence
        #expect(queue.drain() == 1)
        first.isDone = false
        first.title = "unrelated"
        #expect(queue.drain() == 0)
        #expect(count.value == 6)
        withExtendedLifetime(token) {}
    }

    // MARK: Bulk operations

    @Test func bulkOperationsFireEachAffectedTokenOnce() {
        let queue = CoalescingQueue(target: .manual)
        let numbers = ObservedArray(0..<6)
        let count = CoreCounter()
        let log = CollLog<ArrayChanges>()
        var tokens = [
            numbers.observe(\.count, queue: queue) { _ in count.increment() },
            numbers.observe(.element(at: 1), queue: queue) { _ in count.increment() },
            numbers.observe(.element(at: 4), queue: queue) { _ in count.increment() },
            numbers.observe(.element(at: 9), queue: queue) { _ in count.increment() },
        ]
        tokens.append(numbers.observe(.mutations, queue: queue) { _, changes in log.append(changes) })
        numbers.replaceSubrange(2..<5, with: [7, 8])  // count, #4, *
        #expect(queue.drain() == 3)
        numbers.append(contentsOf: 10..<20)  // count, #9, *
        #expect(queue.drain() == 3)
        numbers.removeAll()  // count, #1, #4, #9, *
        #expect(queue.drain() == 5)
        #expect(count.value == 8)  // the change-list token logs instead of counting
        #expect(
            log.take() == [
                ArrayChanges(removed: [2, 3, 4], inserted: [2, 3]),
                ArrayChanges(inserted: Array(5..<15)),
                ArrayChanges(removed: Array(0..<15)),
            ])
        withExtendedLifetime(tokens) {}
    }

    @Test func immediateTokensSeeEachChange() {
        let numbers: ObservedArray<Int> = []
        let log = CollLog<ArrayChanges>()
        let token = numbers.observe(.mutations, options: .immediate) { _, changes in log.append(changes) }
        numbers.append(1)
        numbers.insert(0, at: 0)
        #expect(log.take() == [ArrayChanges(inserted: [0]), ArrayChanges(inserted: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func changeTokensOnCountAndIndexesGetOldValues() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = [1, 2, 3]
        let log = CollLog<String>()
        let tokens = [
            numbers.observe(.changes(\.count), queue: queue) { _, change in
                log.append("count \(change.old)→\(change.new)")
            },
            numbers.observe(.changes(\.[ifPresent: 1]), queue: queue) { _, change in
                log.append("#1 \(change.old.map(String.init) ?? "nil")→\(change.new.map(String.init) ?? "nil")")
            },
        ]
        numbers.remove(at: 0)
        numbers.remove(at: 0)
        #expect(queue.drain() == 2)
        #expect(log.take().sorted() == ["#1 2→nil", "count 3→1"])
        withExtendedLifetime(tokens) {}
    }

    // MARK: Protocols, copies, lifetimes

    @Test func behavesLikeAnArray() {
        let numbers: ObservedArray<Int> = [3, 1, 2]
        numbers.sort()
        numbers.append(contentsOf: [5, 4])
        numbers.reverse()
        numbers.insert(contentsOf: [9], at: 1)
        numbers.removeFirst()
        #expect(Array(numbers) == [9, 5, 3, 2, 1])
        #expect(numbers[1...2] == [5, 3])
        numbers[1...2] = [40, 30, 35]
        #expect(numbers.snapshot == [9, 40, 30, 35, 2, 1])
        #expect(numbers == ObservedArray([9, 40, 30, 35, 2, 1]))
        #expect(Set([numbers]).contains(ObservedArray([9, 40, 30, 35, 2, 1])))
        #expect(numbers.firstIndex(of: 35) == 3)
        #expect(numbers.description == "[9, 40, 30, 35, 2, 1]")
    }

    @Test func copiesCarryNoObservations() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = [1]
        let token = numbers.observe(.mutations, queue: queue) { _, _ in }
        let copy = ObservedArray(numbers)
        var snapshot = numbers.snapshot
        copy.append(2)
        snapshot.append(2)
        #expect(queue.drain() == 0)
        #expect(copy.attachedEdgeCount == 0)
        #expect(numbers.attachedEdgeCount == 1)
        #expect(numbers.observation.withLock { $0.logs.count } == 1)
        token.invalidate()
        // An ended change-list token's log is no longer written.
        #expect(numbers.observation.withLock { $0.logs.count } == 0)
    }

    @Test func tokensRetainNeitherTheArrayNorFollowedObjects() throws {
        let queue = CoalescingQueue(target: .manual)
        weak var weakArray: ObservedArray<CollItem>?
        weak var weakItem: CollItem?
        var tokens: [ObservationToken] = []
        try {
            let item = CollItem("a")
            let items: ObservedArray<CollItem> = [item]
            weakArray = items
            weakItem = item
            tokens.append(items.observe(.object(at: 0), queue: queue) { _, _ in })
            tokens.append(items.observe(.element(at: 0), queue: queue) { _ in })
            tokens.append(items.observe(.mutations, queue: queue) { _, _ in })
            tokens.append(items.observe(.each(\.title), queue: queue) { _ in })
            tokens.append(try items.observe(.path("0.title"), queue: queue) { _ in })
        }()
        #expect(weakArray == nil)
        #expect(weakItem == nil)
        #expect(tokens.allSatisfy { !$0.isValid })
    }

    @Test func anAttachedTokenEndsWhenTheArrayGoes() {
        let queue = CoalescingQueue(target: .manual)
        var numbers: ObservedArray<Int>? = [1]
        let token = numbers!.observe(.element(at: 0), queue: queue) { _ in }
        numbers![0] = 2
        numbers = nil  // the pending delivery keeps it alive until delivered
        #expect(queue.drain() == 1)
        #expect(!token.isValid)
    }

    // MARK: Tracking

    @Test func readsReportTheirSyntheticStorage() {
        let numbers: ObservedArray<Int> = [1, 2, 3, 4]
        let (_, countRead) = AccessCapture.capture { numbers.count }
        let (_, indexRead) = AccessCapture.capture { numbers[3] }
        let (_, again) = AccessCapture.capture { numbers[ifPresent: 3] }
        let (_, allRead) = AccessCapture.capture { numbers.snapshot }
        #expect(countRead.count == 1 && countRead.first?.serial == numbers.countSerial)
        #expect(indexRead.count == 1 && indexRead.first?.serial == again.first?.serial)
        #expect(indexRead.first?.serial != countRead.first?.serial)
        #expect(allRead.first?.serial == numbers.contentsSerial)
    }
}

/// A small deterministic generator for the replay test.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Observed arrays: precise bulk changes")
struct ObservedArrayBulkTests {
    @Test func removeAllWhereTouchesOnlyWhatItRemoves() {
        let queue = CoalescingQueue(target: .manual)
        let numbers = ObservedArray(0..<8)
        let count = CoreCounter()
        let log = CollLog<ArrayChanges>()
        let tokens = [
            numbers.observe(.element(at: 1), queue: queue) { _ in count.increment() },
            numbers.observe(.mutations, queue: queue) { _, changes in log.append(changes) },
        ]
        numbers.removeAll { $0 == 3 || $0 == 5 }  // index 1 keeps its element
        #expect(queue.drain() == 1)
        numbers.replaceSubrange(0..<3, with: [0, 1, 9, 2])  // [0, 1, 2] → [0, 1, 9, 2]: an insert at 2
        #expect(queue.drain() == 1)
        #expect(count.value == 0)
        #expect(log.take() == [ArrayChanges(removed: [3, 5]), ArrayChanges(inserted: [2])])
        withExtendedLifetime(tokens) {}
    }
}

@Suite("Observed arrays: index-following options")
struct ObservedArrayIndexOptionTests {
    @Test func endpointChangesSkipsShiftsThatLeaveAnEqualElement() {
        let queue = CoalescingQueue(target: .manual)
        let numbers: ObservedArray<Int> = [1, 1, 2]
        let plain = CoreCounter()
        let endpoint = CoreCounter()
        let tokens = [
            numbers.observe(.element(at: 1), queue: queue) { _ in plain.increment() },
            numbers.observe(.element(at: 1), options: .endpointChanges, queue: queue) { _ in endpoint.increment() },
        ]
        numbers.insert(1, at: 0)  // index 1 shifts, but still holds a 1
        #expect(queue.drain() == 1)
        numbers.remove(at: 0)
        numbers.remove(at: 0)  // index 1 now holds 2
        #expect(queue.drain() == 2)
        #expect([plain.value, endpoint.value] == [2, 1])
        withExtendedLifetime(tokens) {}
    }
}
