import Testing

@testable import ObservationTokens

/// Used on the test's thread only; callbacks receive it as their argument.
final class RelReentrantModel: ObservableModel {
    @Observed var a = 0
    @Observed var b = 0
}

/// Holds the only strong reference to a model, so a callback can release it.
/// `@unchecked Sendable`: touched only on the test's thread (the `.manual` queue drains there).
final class RelModelHolder: @unchecked Sendable {
    var model: RelReentrantModel?
    init(_ model: RelReentrantModel?) { self.model = model }
}

/// Counts deinit notices. `@unchecked Sendable`: notices arrive on the draining (test) thread.
final class RelDeinitObserver: ObservedObjectDeinitObserver, @unchecked Sendable {
    var notices: [ObservedObjectDeinitNotice] = []
    func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice) { notices.append(notice) }
}

/// The re-entrancy matrix: what a callback may do to the library while it runs, one test per
/// cell. Every test drives its own `.manual` queue on the test's thread.
@Suite(.timeLimit(.minutes(1))) struct ReentrancyTests {
    let queue = CoalescingQueue(target: .manual)
    let model = RelReentrantModel()
    let log = RelLog()

    /// Given a token whose callback invalidates that same token, and a second token;
    /// when the property changes twice, with a drain after each change;
    /// then the first token fires once and never again, and the drain still delivers the other.
    @Test func callbackThatInvalidatesItsOwnTokenFiresOnceAndNeverAgain() {
        let own = RelTokenBox()
        var canary: RelCanary? = RelCanary("captured by the self-invalidating callback")
        weak let weakCanary = canary
        own.token = model.observe(\.a, queue: queue) { [log, canary] _ in
            _ = canary
            log.append("self")
            own.token?.invalidate()
        }
        canary = nil
        let other = model.observe(\.a, queue: queue) { [log] _ in log.append("other") }

        model.a = 1
        #expect(queue.drain() == 2)
        #expect(own.token?.isValid == false)
        #expect(weakCanary == nil, "the callback's captures are released by invalidate()")
        model.a = 2
        #expect(queue.drain() == 1)

        #expect(log.entries == ["self", "other", "other"])
        #expect(model.observerCount(of: \.a) == 1)
        withExtendedLifetime(other) {}
    }

    /// Given a token whose callback drops the last reference to that same token;
    /// when the property changes twice, with a drain after each change;
    /// then the token fires once, is freed, and never fires again.
    @Test func callbackThatDropsItsOwnTokenFiresOnceAndNeverAgain() {
        let own = RelTokenBox()
        own.token = model.observe(\.a, queue: queue) { [log] _ in
            log.append("self")
            own.token = nil
        }
        weak let weakToken = own.token
        let other = model.observe(\.a, queue: queue) { [log] _ in log.append("other") }

        model.a = 1
        #expect(queue.drain() == 2)
        #expect(weakToken == nil)
        model.a = 2
        #expect(queue.drain() == 1)

        #expect(log.entries == ["self", "other", "other"])
        #expect(model.observerCount(of: \.a) == 1)
        withExtendedLifetime(other) {}
    }

    /// Given two pending tokens, where the first one's callback invalidates the second;
    /// when the queue drains;
    /// then the second never fires, not in this drain and not later.
    @Test func callbackThatInvalidatesAnotherPendingTokenPreventsItsDelivery() {
        let second = RelTokenBox()
        let first = model.observe(\.a, queue: queue) { [log] _ in
            log.append("first")
            second.token?.invalidate()
        }
        second.token = model.observe(\.b, queue: queue) { [log] _ in log.append("second") }
        model.a = 1  // first becomes pending first, so it fires first
        model.b = 1
        #expect(queue.pendingCount == 2)

        #expect(queue.drain() == 1)
        model.b = 2
        #expect(queue.drain() == 0)

        #expect(log.entries == ["first"])
        #expect(second.token?.isValid == false)
        withExtendedLifetime(first) {}
    }

    /// Given a callback that creates a new token on the property that just changed;
    /// when the queue drains, then the property changes again and the queue drains again;
    /// then the new token does not fire for the change that happened before it existed, and
    /// fires from the next change on (documented in docs/Reliability.md).
    @Test func tokenCreatedInsideCallbackFiresFromTheNextChangeNotThisOne() {
        let created = RelTokenBox()
        let queue = queue
        let first = model.observe(\.a, queue: queue) { [log] model in
            log.append("first \(model.a)")
            if created.token == nil {
                created.token = model.observe(\.a, queue: queue) { [log] model in log.append("created \(model.a)") }
            }
        }

        model.a = 1
        #expect(queue.drain() == 1)
        #expect(queue.pendingCount == 0)
        model.a = 2
        #expect(queue.drain() == 2)

        #expect(log.entries == ["first 1", "first 2", "created 2"])
        withExtendedLifetime(first) {}
    }

    /// Given a callback that sets the property its own token observes (twice in all);
    /// when the queue drains repeatedly;
    /// then each drain runs the callback exactly once (no loop inside a drain) and each new
    /// value is delivered in the next tick.
    @Test func callbackThatSetsItsOwnPropertyFiresAgainNextTickNotInThisDrain() {
        let token = model.observe(\.a, queue: queue) { [log] model in
            log.append("saw \(model.a)")
            if model.a < 3 { model.a += 1 }
        }

        model.a = 1
        #expect(queue.drain() == 1)
        #expect(queue.pendingCount == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)

        #expect(log.entries == ["saw 1", "saw 2", "saw 3"])
        withExtendedLifetime(token) {}
    }

    /// Given tokens A on `a` and B on `b`, both pending, A first; B's callback sets `a`;
    /// when the queue drains;
    /// then A, which already fired in this drain, fires again in the next tick with the new
    /// value, not in this drain.
    @Test func callbackThatSetsAPropertyOfATokenThatAlreadyFiredDefersItToTheNextTick() {
        let tokenA = model.observe(\.a, queue: queue) { [log] model in log.append("A \(model.a)") }
        let tokenB = model.observe(\.b, queue: queue) { [log] model in
            log.append("B \(model.b)")
            model.a = 100
        }
        model.a = 1
        model.b = 1

        #expect(queue.drain() == 2)
        #expect(log.entries == ["A 1", "B 1"])
        #expect(queue.pendingCount == 1)
        #expect(queue.drain() == 1)
        #expect(queue.drain() == 0)

        #expect(log.entries == ["A 1", "B 1", "A 100"])
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    /// The other half of the rule: given token A whose callback sets `b`, watched by token B
    /// that has not fired in this drain;
    /// when the queue drains;
    /// then B fires in the same drain.
    @Test func callbackThatSetsAPropertyOfATokenNotYetFiredFiresItInTheSameDrain() {
        let tokenA = model.observe(\.a, queue: queue) { [log] model in
            log.append("A")
            model.b = 7
        }
        let tokenB = model.observe(\.b, queue: queue) { [log] model in log.append("B \(model.b)") }
        model.a = 1

        #expect(queue.drain() == 2)
        #expect(queue.pendingCount == 0)
        #expect(log.entries == ["A", "B 7"])
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    /// Given an object whose only strong reference is dropped by a callback of one of its two
    /// pending tokens (the other one has an observer that wants deinit notices);
    /// when the queue drains;
    /// then both callbacks run (a pending delivery keeps the object alive), the object is freed
    /// right after, both tokens end, and the observer is told once.
    @Test func callbackThatReleasesTheObservedObjectLetsItGoAfterPendingDeliveries() {
        let holder = RelModelHolder(RelReentrantModel())
        weak let weakModel = holder.model
        let observer = RelDeinitObserver()
        let releasing = holder.model!.observe(\.a, queue: queue) { [log] model in
            log.append("releasing \(model.a)")
            holder.model = nil
        }
        let watching = holder.model!.observe(\.a, observer: observer, queue: queue) { [log] _, model in
            log.append("watching \(model.a)")
        }
        holder.model!.a = 5

        #expect(queue.drain() == 2)
        _ = queue.drain()  // deinit notices travel through the queue too

        #expect(log.entries == ["releasing 5", "watching 5"])
        #expect(weakModel == nil)
        #expect(!releasing.isValid)
        #expect(!watching.isValid)
        #expect(observer.notices.count == 1)
    }

    /// Given a callback that calls `drain()` on the queue that is running it, and sets a
    /// property watched by a second token;
    /// when the queue drains;
    /// then the nested call returns 0 at once (no deadlock), and the outer drain delivers the
    /// second token.
    @Test func drainCalledFromACallbackReturnsZeroAndTheOuterDrainDeliversEverything() {
        let nested = RelLog()
        let queue = queue
        let first = model.observe(\.a, queue: queue) { [log] model in
            log.append("first")
            model.b = 1
            nested.append("\(queue.drain())")
        }
        let second = model.observe(\.b, queue: queue) { [log] _ in log.append("second") }
        model.a = 1

        #expect(queue.drain() == 2)

        #expect(nested.entries == ["0"])
        #expect(log.entries == ["first", "second"])
        #expect(queue.pendingCount == 0)
        withExtendedLifetime((first, second)) {}
    }
}
