import Testing

@testable import ObservationTokens

/// A leaf another model's computed value reads through a reference.
private final class ConfirmingLeaf: ObservableModel, @unchecked Sendable {
    @Observed var value = 0
}

/// Computed values whose reads change from one computation to the next. `runs` counts the
/// computations of each, so a test can tell a set that invalidated a value from one that did
/// not. `@unchecked Sendable`: one thread at a time in these tests.
private final class ConfirmingTotal: ObservableModel, @unchecked Sendable {
    let runs = RelLock<[String: Int]>([:])
    @Observed var a = 0
    @Observed var b = 0
    @Observed var c = 0
    @Observed var d = 0
    @Observed var useC = true
    @Observed var short = false
    @Observed var leaf = ConfirmingLeaf()

    /// Reads `a`, `b`, `useC`, then `c` or `d`.
    @Computed({ (model: ConfirmingTotal) in
        model.count("branch")
        return model.a + model.b + (model.useC ? model.c : model.d)
    })
    var branch: Int

    /// Reads `short`, `a`, then `b` unless `short`.
    @Computed({ (model: ConfirmingTotal) in
        model.count("prefix")
        return model.short ? model.a : model.a + model.b
    })
    var prefix: Int

    /// Reads `a` twice, then `b`.
    @Computed({ (model: ConfirmingTotal) in
        model.count("twice")
        return model.a * 10 + model.a + model.b
    })
    var twice: Int

    /// Reads `leaf`, then the leaf's `value`.
    @Computed({ (model: ConfirmingTotal) in
        model.count("through")
        return model.leaf.value
    })
    var through: Int

    func count(_ name: String) { runs.withLock { $0[name, default: 0] += 1 } }
    func runs(_ name: String) -> Int { runs.withLock { $0[name, default: 0] } }
}

/// A computation whose edges are as its last computation left them confirms its reads against
/// them in place, recording nothing while they come in the same order. These check what a
/// computation that reads something else keeps: the storages it confirmed before its reads
/// differed, the new ones, and nothing it no longer reads.
@Suite("Synthetic: computations confirm what they read in place")
struct ComputedConfirmationTests {
    @Test func aComputationThatDivergesAfterConfirmingAPrefixStillDependsOnThePrefix() {
        // Given a value computed twice from `a`, `b`, `useC` and `c` (the second confirms them),
        // with a token on it
        let queue = CoalescingQueue(target: .manual)
        let model = ConfirmingTotal()
        let seen = RelLock<[Int]>([])
        let token = model.observe(\.branch, queue: queue) { model in
            let value = model.branch
            seen.withLock { $0.append(value) }
        }
        #expect(model.branch == 0)
        model.a = 1
        #expect(model.branch == 1)
        // When its fourth read becomes `d`
        model.useC = false
        #expect(model.branch == 1)
        #expect(model.runs("branch") == 3)
        // Then `c` no longer invalidates it, while `a`, `b` and `useC` still do
        model.c = 100
        #expect(model.branch == 1)
        #expect(model.runs("branch") == 3)
        model.a = 5
        #expect(model.branch == 5)
        model.b = 2
        #expect(model.branch == 7)
        model.d = 3
        #expect(model.branch == 10)
        model.useC = true
        #expect(model.branch == 107)
        #expect(model.runs("branch") == 7)
        #expect(queue.drain() == 1)
        #expect(seen.withLock { $0 } == [107])
        withExtendedLifetime(token) {}
    }

    @Test func aComputationThatReadsFewerStoragesThanLastTimeDropsTheRest() {
        // Given a value computed twice from `short`, `a` and `b`
        let queue = CoalescingQueue(target: .manual)
        let model = ConfirmingTotal()
        let token = model.observe(\.prefix, queue: queue) { _ in }
        #expect(model.prefix == 0)
        model.b = 1
        #expect(model.prefix == 1)
        // When it stops reading `b` (its reads so far confirmed, one fewer)
        model.short = true
        #expect(model.prefix == 0)
        #expect(model.runs("prefix") == 3)
        // Then `b` no longer invalidates it; `a` does
        model.b = 50
        #expect(model.prefix == 0)
        #expect(model.runs("prefix") == 3)
        model.a = 4
        #expect(model.prefix == 4)
        #expect(model.runs("prefix") == 4)
        model.short = false
        #expect(model.prefix == 54)
        #expect(model.runs("prefix") == 5)
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test func aComputationThatReadsAStorageTwiceKeepsEveryEdge() {
        // Given a value that reads `a` twice, then `b`
        let queue = CoalescingQueue(target: .manual)
        let model = ConfirmingTotal()
        let seen = RelLock<[Int]>([])
        let token = model.observe(\.twice, queue: queue) { model in
            let value = model.twice
            seen.withLock { $0.append(value) }
        }
        #expect(model.twice == 0)
        // When each input changes, tick by tick
        for round in 1...3 {
            model.a = round
            #expect(model.twice == round * 11 + (round - 1) * 100)
            model.b = round * 100
            #expect(queue.drain() == 1)
        }
        // Then every change was heard, and each computed once per change
        #expect(seen.withLock { $0 } == [111, 222, 333])
        #expect(model.runs("twice") == 7)
        withExtendedLifetime(token) {}
    }

    @Test func aComputationThatReadsThroughANewReferenceDependsOnTheNewObjectOnly() {
        // Given a value that reads `leaf.value`, computed twice
        let queue = CoalescingQueue(target: .manual)
        let model = ConfirmingTotal()
        let first = model.leaf
        let token = model.observe(\.through, queue: queue) { _ in }
        #expect(model.through == 0)
        first.value = 1
        #expect(model.through == 1)
        // When `leaf` points at another object of the same class
        let second = ConfirmingLeaf()
        second.value = 2
        model.leaf = second
        #expect(model.through == 2)
        #expect(model.runs("through") == 3)
        // Then the old leaf's value no longer invalidates it; the new one's does
        first.value = 9
        #expect(model.through == 2)
        #expect(model.runs("through") == 3)
        second.value = 3
        #expect(model.through == 3)
        #expect(model.runs("through") == 4)
        #expect(queue.drain() == 1)
        withExtendedLifetime((token, first, second)) {}
    }
}
