import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The pushes a binding is making on this thread, and the change they carry.
///
/// A *change* is named by a number from one process-wide clock (``BindingClock``): a change
/// made outside any push (a user's set, a callback's) gets a new number when a binding first
/// hears of it; a push carries the number of the change it copies, and every property it
/// writes — and whatever else changes while it writes (the destination's `didSet`, `onApply`
/// handlers, `.immediate` callbacks run by the write) — holds that change from then on. The
/// rules that use the numbers are `BindingLink`'s.
///
/// A queued delivery of a binding starts a wave of its own, tied to its queue: a push that
/// changes the source of another binding of that queue (and the same thread) does not make it
/// pending, which would defer it to the next drain if it already ran in this one; the wave
/// pushes it right after the running push instead (`later`), in order. So everything one drain
/// causes through bindings settles in that drain. Pushes made at a set (`.immediate`), at
/// creation, by `now()`, or when a value lands from another queue start a wave without a queue:
/// bindings of any queue they reach become pending as usual.
///
/// Lives on the stack of the push that started it; the thread-local slot points to it while
/// it runs. Touched only by its thread.
final class BindingWave {
    /// The queue whose drain runs this wave; nil for a wave started outside a drain.
    let queue: CoalescingQueue?
    /// The change the push now writing carries; 0 while no push writes (its operators run).
    var origin: UInt64 = 0
    /// Links of `queue` whose source a push changed, to push once the running push returns.
    private var later: [BindingLink] = []
    private var next = 0
    /// Pushes the wave made for `later` links that wrote something, for the drain's count.
    var laterPushes = 0

    init(queue: CoalescingQueue?) {
        self.queue = queue
    }

    /// The wave running on this thread, if any.
    static var current: BindingWave? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<BindingWave>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The change a push writing now carries on this thread, or 0 when no push writes.
    static var currentOrigin: UInt64 {
        guard let raw = pthread_getspecific(key) else { return 0 }
        return Unmanaged<BindingWave>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.origin }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "ObservationTokens could not create its thread-local key")
        return key
    }()

    /// Runs `body` with `self` as the thread's wave, then the links it collected; restores the
    /// wave that was there before.
    func run<T>(_ body: () -> T) -> T {
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, previous) }
        let result = body()
        while next < later.count {
            let link = later[next]
            next += 1
            if link.pushLater(in: self) { laterPushes += 1 }
        }
        later = []
        next = 0
        return result
    }

    /// Pushes `link` once the running push returns, unless it is waiting for that already.
    func pushLater(_ link: BindingLink) {
        for index in next..<later.count where later[index] === link { return }
        later.append(link)
    }

    /// Runs `body` with `origin` as the change being written; restores the one before.
    @inline(__always)
    func writing<T>(_ origin: UInt64, _ body: () -> T) -> T {
        let saved = self.origin
        self.origin = origin
        defer { self.origin = saved }
        return body()
    }
}

/// The clock that numbers changes for bindings: later changes get larger numbers.
enum BindingClock {
    private static let last = Atomic<UInt64>(0)

    /// A number larger than every one handed out before.
    static func next() -> UInt64 {
        last.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
