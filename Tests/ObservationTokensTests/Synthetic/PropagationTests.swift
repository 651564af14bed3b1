import Synchronization
import Testing

@testable import ObservationTokens

// One change, one consistent delivery: computed values settle before anyone is told, and each
// token compares a computed value with what *it* saw.

enum PropFilter: Sendable, Equatable {
    case all, active, done

    func includes(_ isDone: Bool) -> Bool {
        switch self {
        case .all: true
        case .active: !isDone
        case .done: isDone
        }
    }
}

/// `@unchecked Sendable`: see ``CorePerson``.
final class PropTodoItem: ObservableModel, @unchecked Sendable, Equatable {
    @Observed var title: String
    @Observed var done = false

    init(_ title: String, done: Bool = false) {
        _title = Observed(wrappedValue: title)
        _done = Observed(wrappedValue: done)
    }

    static func == (lhs: PropTodoItem, rhs: PropTodoItem) -> Bool { lhs === rhs }
}

/// The to-do list of the propagation issue: a filter, and two computed values it feeds.
/// `@unchecked Sendable`: see ``CorePerson``.
final class PropTodoList: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var items: ObservedArray<PropTodoItem> = []
    @Observed var filter = PropFilter.all
    @Computed({ (list: PropTodoList) in
        list.counts.tick("remaining")
        return list.items.count { !$0.done }
    })
    var remainingCount: Int
    @Computed({ (list: PropTodoList) in
        list.counts.tick("filtered")
        return list.items.filter { list.filter.includes($0.done) }
    })
    var filteredItems: [PropTodoItem]
}

/// Plain one-word computed values (`Bool`, `Double`), which are compared and stored by their bits.
/// `@unchecked Sendable`: see ``CorePerson``.
final class PropWords: ObservableModel, @unchecked Sendable {
    @Observed var x = 0
    @Observed var y = 1
    @Computed({ (words: PropWords) in words.x % 2 == 0 }) var isEven: Bool
    @Computed({ (words: PropWords) in Double(words.x) / Double(words.y) }) var ratio: Double
}

/// `b = 2a`, `c = b + 1`, `d = c % 2`.
/// `@unchecked Sendable`: see ``CorePerson``.
final class PropChain: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var a = 0
    @Computed({ (chain: PropChain) in
        chain.counts.tick("b")
        return chain.a * 2
    })
    var b: Int
    @Computed({ (chain: PropChain) in
        chain.counts.tick("c")
        return chain.b + 1
    })
    var c: Int
    @Computed({ (chain: PropChain) in
        chain.counts.tick("d")
        return chain.c % 2
    })
    var d: Int
}

/// `s = x + y`, `t = s + z`, and `parity = x % 2`.
/// `@unchecked Sendable`: see ``CorePerson``.
final class PropSums: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    @Observed var x = 0
    @Observed var y = 0
    @Observed var z = 0
    @Computed({ (sums: PropSums) in
        sums.counts.tick("s")
        return sums.x + sums.y
    })
    var s: Int
    @Computed({ (sums: PropSums) in
        sums.counts.tick("t")
        return sums.s + sums.z
    })
    var t: Int
    @Computed({ (sums: PropSums) in sums.x % 2 }) var parity: Int
    var tState: ComputedState<PropSums, Int> { _t.state }
    @Hybrid({ (sums: PropSums) in sums.x * 10 }) var scaled: Int
    @Computed({ (sums: PropSums) in
        sums.counts.tick("never")
        return sums.x - 1
    })
    var neverRead: Int
}

@Suite("Propagation: one change, one consistent delivery")
struct PropagationTests {
    // MARK: Computed values settle before anyone is told

    @Test func aViewModelWatchingAFilterAndTheListItFeedsRendersOncePerChange() {
        // Given a list with two items and a token on the filter and both computed values
        let queue = CoalescingQueue(target: .manual)
        let list = PropTodoList()
        list.items.append(PropTodoItem("write"))
        list.items.append(PropTodoItem("test", done: true))
        let renders = CoreRecorder<String>()
        let token = list.observe([\.filter, \.remainingCount, \.filteredItems], queue: queue) { list in
            renders.append("\(list.filter) \(list.remainingCount) \(list.filteredItems.map(\.title))")
        }
        // When the filter changes
        list.filter = .active
        // Then one drain renders once, with the final values, and nothing is left for later
        #expect(queue.drain() == 1)
        #expect(renders.entries == [#"active 1 ["write"]"#])
        #expect(queue.drain() == 0)
        // When an item is done
        list.items[0].done = true
        #expect(queue.drain() == 1)
        #expect(renders.entries.last == "active 0 []")
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aTrackingClosureOverTheFilterAndTheListRendersOncePerChange() {
        let queue = CoalescingQueue(target: .manual)
        let list = PropTodoList()
        list.items.append(PropTodoItem("write"))
        let renders = CoreRecorder<String>()
        let token = list.observe(queue: queue) { list in
            renders.append("\(list.filter) \(list.remainingCount) \(list.filteredItems.count)")
        }
        #expect(renders.entries == ["all 1 1"])  // a tracking closure runs once to find its reads
        list.filter = .done
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)
        #expect(renders.entries == ["all 1 1", "done 1 0"])
        withExtendedLifetime(token) {}
    }

    @Test func everyLevelOfADerivedChainIsDeliveredOnceInTheSameDrain() {
        // Given a token on each level of b = 2a, c = b + 1, d = c % 2
        let queue = CoalescingQueue(target: .manual)
        let chain = PropChain()
        let heard = CoreRecorder<String>()
        let tokens = [
            chain.observe(\.a, queue: queue) { heard.append("a=\($0.a)") },
            chain.observe(\.b, queue: queue) { heard.append("b=\($0.b)") },
            chain.observe(\.c, queue: queue) { heard.append("c=\($0.c)") },
            chain.observe(\.d, queue: queue) { heard.append("d=\($0.d)") },
        ]
        chain.counts.reset()
        // When a changes (d = (2a + 1) % 2 is always 1: it recomputes equal)
        chain.a = 5
        // Then a, b and c are heard once each, in one drain, and d's token does not run
        #expect(queue.drain() == 3)
        #expect(heard.entries.sorted() == ["a=5", "b=10", "c=11"])
        #expect(queue.drain() == 0)
        // and each level computed once
        #expect([chain.counts["b"], chain.counts["c"], chain.counts["d"]] == [1, 1, 1])
        withExtendedLifetime(tokens) {}
    }

    @Test func drainCountsOnlyUserCallbacks() {
        // Given a token on a computed value whose recomputation finds it unchanged
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let token = sums.observe(\.parity, queue: queue) { _ in }
        // When its input changes by an even amount
        sums.x = 2
        // Then the drain recomputes and compares, and returns 0: no callback ran
        #expect(queue.drain() == 0)
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aBoolComputedValueThatChangesAndBackBeforeTheDrainDeliversNothing() {
        // Given a token that saw isEven == true
        let queue = CoalescingQueue(target: .manual)
        let words = PropWords()
        let heard = CoreRecorder<Bool>()
        let token = words.observe(\.isEven, queue: queue) { heard.append($0.isEven) }
        // When x becomes odd, isEven is read (false, while the token still holds true), and x
        // becomes even again
        words.x = 1
        #expect(words.isEven == false)
        words.x = 2
        // Then the drain finds the value the token saw: no callback
        #expect(queue.drain() == 0)
        #expect(heard.entries.isEmpty)
        // and a real change is still heard, once
        words.x = 3
        #expect(queue.drain() == 1)
        #expect(heard.entries == [false])
        withExtendedLifetime(token) {}
    }

    @Test func aDoubleComputedValueComparesByEquality() {
        // Given a token on ratio = x / y (0.0)
        let queue = CoalescingQueue(target: .manual)
        let words = PropWords()
        let heard = CoreRecorder<String>()
        let token = words.observe(\.ratio, queue: queue) { heard.append($0.ratio.isNaN ? "nan" : "\($0.ratio)") }
        // When the ratio becomes -0.0, which == 0.0
        words.y = -1
        // Then nothing is heard
        #expect(queue.drain() == 0)
        // When it becomes NaN (0 / 0), and NaN again through another input
        words.y = 0
        #expect(queue.drain() == 1)
        words.x = 2
        words.x = 0
        // Then every NaN counts as a change (NaN != NaN)
        #expect(queue.drain() == 1)
        #expect(heard.entries == ["nan", "nan"])
        withExtendedLifetime(token) {}
    }

    @Test func aTokenOnAStoredPropertyReadsTheFinalComputedValue() {
        // Given a token on x that reads t, and one on t
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let onX = CoreRecorder<Int>()
        let onT = CoreRecorder<Int>()
        let xToken = sums.observe(\.x, queue: queue) { onX.append($0.t) }
        let tToken = sums.observe(\.t, queue: queue) { onT.append($0.t) }
        // When x and then z change
        sums.x = 1
        sums.z = 10
        // Then both run in one drain, and both read the final t
        #expect(queue.drain() == 2)
        #expect(onX.entries == [11])
        #expect(onT.entries == [11])
        withExtendedLifetime((xToken, tToken)) {}
    }

    @Test func aCallbackThatChangesAnInputMakesALaterTokenRunOnceWithTheFinalValue() {
        // Given a token on y whose callback sets x, and a token on t made after it
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let onT = CoreRecorder<Int>()
        let setter = sums.observe(\.y, queue: queue) { sums in sums.x = sums.y * 100 }
        let tToken = sums.observe(\.t, queue: queue) { onT.append($0.t) }
        // When y changes (t changes through y, then again through the callback's x)
        sums.y = 1
        // Then the t token runs once, in the same drain, with the final value
        #expect(queue.drain() == 2)
        #expect(onT.entries == [101])
        #expect(queue.drain() == 0)
        withExtendedLifetime((setter, tToken)) {}
    }

    // MARK: Tokens compare with what they saw

    @Test func aTokenMadeAfterItsComputedValueWentUnobservedIsNotDeaf() {
        // Given a token on t, dropped
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        var first: ObservationToken? = sums.observe(\.t, queue: queue) { _ in }
        first = nil
        _ = first
        // When x changes while nobody observes t, and then a new token is made
        sums.x = 1
        let heard = CoreRecorder<Int>()
        let token = sums.observe(\.t, queue: queue) { heard.append($0.t) }
        // Then every later change is delivered
        for value in 2...4 {
            sums.x = value
            #expect(queue.drain() == 1)
        }
        #expect(heard.entries == [2, 3, 4])
        withExtendedLifetime(token) {}
    }

    @Test func eachTokenComparesWithWhatItSawNotWithTheLastPublishedValue() {
        // Given a token a that saw t = 2
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let heardA = CoreRecorder<Int>()
        let heardB = CoreRecorder<Int>()
        let a = sums.observe(\.t, queue: queue) { heardA.append($0.t) }
        sums.x = 2
        #expect(queue.drain() == 1)
        // When x goes back to 0, a token b is made (t is 0 then), and x goes to 2 again
        sums.x = 0
        let b = sums.observe(\.t, queue: queue) { heardB.append($0.t) }
        sums.x = 2
        // Then b hears 0 -> 2, and a, which saw 2, hears nothing
        #expect(queue.drain() == 1)
        #expect(heardA.entries == [2])
        #expect(heardB.entries == [2])
        withExtendedLifetime((a, b)) {}
    }

    @Test func aChangeAndAChangeBackAcrossAReadDeliverNothing() {
        // Given a token that saw t = 2
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let heard = CoreRecorder<Int>()
        let token = sums.observe(\.t, queue: queue) { heard.append($0.t) }
        sums.x = 2
        #expect(queue.drain() == 1)
        // When t is read at 0 in between, then goes back to 2
        sums.x = 0
        #expect(sums.t == 0)
        sums.x = 5
        #expect(sums.t == 5)
        sums.x = 2
        // Then the token hears nothing: t is what it saw
        #expect(queue.drain() == 0)
        #expect(heard.entries == [2])
        // and the earlier values are no longer kept
        #expect(sums.tState.historyCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aTrackingClosureOverAComputedValueThatRecomputedEqualDoesNotRun() {
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let runs = CoreCounter()
        let token = sums.observe(queue: queue) { sums in
            _ = sums.parity
            runs.increment()
        }
        #expect(runs.value == 1)
        sums.x = 2  // parity 0 -> 0
        #expect(queue.drain() == 0)
        #expect(runs.value == 1)
        sums.x = 3  // parity 0 -> 1
        #expect(queue.drain() == 1)
        #expect(runs.value == 2)
        withExtendedLifetime(token) {}
    }

    @Test func aTokenMadeAfterAChangeInTheSameTickDoesNotHearIt() {
        // Given changes of a stored and a computed value
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        _ = sums.t
        sums.x = 1
        // When tokens are made after them, in the same tick
        let stored = sums.observe(\.x, queue: queue) { _ in Issue.record("stored token heard an earlier change") }
        let computed = sums.observe(\.t, queue: queue) { _ in Issue.record("computed token heard an earlier change") }
        // Then neither hears of them: what they compare with is the value at registration
        #expect(queue.drain() == 0)
        withExtendedLifetime((stored, computed)) {}
    }

    @Test func aTokenMadeMidTickWithInitialRunsOnceNowAndNotAgainForTheEarlierChange() {
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        _ = sums.t
        sums.x = 1
        let heard = CoreRecorder<Int>()
        let token = sums.observe(\.t, options: .initial, queue: queue) { heard.append($0.t) }
        #expect(heard.entries == [1])
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func changeTokensOnAComputedValueGetTheValueTheySawAsOld() {
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let changes = CoreRecorder<String>()
        let token = sums.observe(.changes(\.t), queue: queue) { _, change in
            changes.append("\(change.old)->\(change.new)")
        }
        sums.x = 3
        #expect(queue.drain() == 1)
        sums.x = 7
        #expect(sums.t == 7)
        sums.y = 1
        #expect(queue.drain() == 1)
        #expect(changes.entries == ["0->3", "3->8"])
        withExtendedLifetime(token) {}
    }

    @Test func aHybridSetIsHeardOnlyWhenItDiffersFromWhatTheTokenSaw() {
        let queue = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let heard = CoreRecorder<Int>()
        let token = sums.observe(\.scaled, queue: queue) { heard.append($0.scaled) }
        sums.scaled = 0  // what it is
        #expect(queue.drain() == 0)
        sums.scaled = 4
        #expect(queue.drain() == 1)
        sums.x = 1  // invalidates: recomputed 10
        #expect(queue.drain() == 1)
        #expect(heard.entries == [4, 10])
        withExtendedLifetime(token) {}
    }

    @Test func aStarTokenHearsAComputedPropertyOnlyWhenItsValueChanges() throws {
        let queue = CoalescingQueue(target: .manual)
        let chain = PropChain()
        let fired = CoreCounter()
        let token = try chain.observe(.path("*"), queue: queue) { _ in fired.increment() }
        chain.a = 1
        #expect(queue.drain() == 1)  // a changed (and b, c with it): once
        chain.invalidate(\.d)
        #expect(queue.drain() == 0)  // d recomputed equal
        #expect(fired.value == 1)
        withExtendedLifetime(token) {}
    }

    // MARK: .immediate tokens

    @Test func immediateTokensOnAComputedValueRunInsideTheSetterOnlyWhenItChanged() {
        let sums = PropSums()
        let heard = CoreRecorder<Int>()
        let token = sums.observe(\.parity, options: .immediate) { heard.append($0.parity) }
        sums.x = 2
        #expect(heard.entries == [])  // 0 -> 0
        sums.x = 3
        #expect(heard.entries == [1])  // inside the setter, recomputed there
        sums.y = 5
        #expect(heard.entries == [1])  // parity does not read y
        withExtendedLifetime(token) {}
    }

    // MARK: Queues

    @Test func aComputedValueObservedOnTwoQueuesIsDeliveredByEachWithoutAQueueOfItsOwn() {
        // Given tokens on t through two manual queues (say, one per test or per server queue)
        let first = CoalescingQueue(target: .manual)
        let second = CoalescingQueue(target: .manual)
        let sums = PropSums()
        let heard = CoreRecorder<String>()
        let one = sums.observe(\.t, queue: first) { heard.append("first \($0.t)") }
        let two = sums.observe(\.t, queue: second) { heard.append("second \($0.t)") }
        // When x changes, and only the second queue drains
        sums.x = 4
        #expect(second.drain() == 1)
        // Then the second token heard it, and the first waits for its own queue
        #expect(heard.entries == ["second 4"])
        #expect(first.drain() == 1)
        #expect(heard.entries == ["second 4", "first 4"])
        withExtendedLifetime((one, two)) {}
    }

    // MARK: Lifetimes

    @Test func invalidatingAPropertyNeverReadComputesNothing() {
        let sums = PropSums()
        sums.invalidate(\.neverRead)
        #expect(sums.counts["never"] == 0)
        #expect(!sums.isValid(\.neverRead))
        _ = sums.neverRead
        #expect(sums.isValid(\.neverRead))
        sums.invalidate(\.neverRead)
        #expect(!sums.isValid(\.neverRead))
        #expect(sums.counts["never"] == 1)
        #expect(!sums.isValid(\.x))  // not synthetic
    }
}

/// A reader whose computed value reads another object weakly.
/// `@unchecked Sendable`: see ``CorePerson``.
final class PropReader: ObservableModel, @unchecked Sendable {
    let counts = ComputeCounts()
    weak var source: PropSource?
    @Computed({ (reader: PropReader) in
        reader.counts.tick("total")
        return reader.source?.value ?? -1
    })
    var total: Int
}

/// `@unchecked Sendable`: see ``CorePerson``.
final class PropSource: ObservableModel, @unchecked Sendable {
    @Observed var value = 0
    weak var reader: PropReader?
    @Computed({ (source: PropSource) in source.reader?.total ?? -2 }) var mirrored: Int
}

@Suite("Propagation: computed values and object lifetimes")
struct PropagationLifetimeTests {
    @Test func anInputThatDeinitializesInvalidatesTheValueAndKeepsNothingAlive() {
        // Given a reader whose computed value read a source, and nobody drains any queue
        weak var weakReader: PropReader?
        do {
            let reader = PropReader()
            weakReader = reader
            var source: PropSource? = PropSource()
            source!.value = 5
            reader.source = source
            #expect(reader.total == 5)
            // When the source deinitializes
            source = nil
            // Then the value is invalid, and the next read recomputes it
            #expect(!reader.isValid(\.total))
            #expect(reader.total == -1)
            #expect(reader.counts["total"] == 2)
        }
        // and nothing (no queue) kept the reader alive
        #expect(weakReader == nil)
    }

    @Test func aTokenOnAValueReadFromAnObjectThatGoesAwayHearsTheChange() {
        let queue = CoalescingQueue(target: .manual)
        let reader = PropReader()
        var source: PropSource? = PropSource()
        source!.value = 5
        reader.source = source
        let heard = CoreRecorder<Int>()
        let token = reader.observe(\.total, queue: queue) { heard.append($0.total) }
        source = nil
        #expect(queue.drain() == 1)
        #expect(heard.entries == [-1])
        withExtendedLifetime(token) {}
    }

    @Test func twoModelsWhoseComputedValuesReadEachOtherWeaklyBothGoAway() {
        weak var weakReader: PropReader?
        weak var weakSource: PropSource?
        do {
            let reader = PropReader()
            let source = PropSource()
            reader.source = source
            source.reader = reader
            weakReader = reader
            weakSource = source
            #expect(source.mirrored == 0)
            source.value = 3  // invalidates total, and mirrored through it
            #expect(source.mirrored == 3)
        }
        #expect(weakReader == nil)
        #expect(weakSource == nil)
    }
}
