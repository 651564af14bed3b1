import ObservationTokens
import Testing

/// The documented declaration of a main-actor model: its initializer is `nonisolated`, like
/// the base class's it overrides. Its properties stay main-actor isolated.
@MainActor final class Counter: ObservableModel {
    @Observed var count = 0

    nonisolated override init() {
        super.init()
    }
}

/// A view model (main actor by the module's default) that follows a main-actor model.
final class CounterLabel {
    var text = ""
    private var tokens = Set<ObservationToken>()

    init(counter: Counter, queue: CoalescingQueue) {
        counter.observe(\.count, observer: self, options: .initial, queue: queue, isolation: MainActor.shared) {
            label, counter in
            label.text = "\(counter.count)"
        }
        .store(in: &tokens)
    }
}

@Suite struct MainActorModelTests {
    @Test func aMainActorModelIsObservedWithMainActorCallbacks() {
        let queue = CoalescingQueue(target: .manual)
        let counter = Counter()
        let label = CounterLabel(counter: counter, queue: queue)
        #expect(label.text == "0")
        counter.count = 1
        counter.count = 2
        #expect(queue.drain() == 1)
        #expect(label.text == "2")
    }

    @Test func aMainActorModelsValuesAreIterated() async {
        let queue = CoalescingQueue(target: .manual)
        let counter = Counter()
        var iterator = counter.values(of: \.count, queue: queue).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        counter.count = 5
        queue.drain()
        #expect(await iterator.next() == 5)
    }
}
