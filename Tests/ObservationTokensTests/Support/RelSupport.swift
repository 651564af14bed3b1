import Dispatch
import ObservationTokens
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lock for test bookkeeping, built on `pthread_mutex_t` so that the thread sanitizer sees
/// every hand-over (it intercepts pthread calls; it can't see the futex slow path of
/// `Synchronization.Mutex` on Linux, see docs/Reliability.md).
///
/// `@unchecked Sendable`: `state` is only touched inside `withLock`, under the mutex.
final class RelLock<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    init(_ state: State) {
        self.state = state
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

/// Starts threads that wait for each other on a shared barrier before running, and joins
/// them with a bound.
enum RelThreads {
    private final class Start: @unchecked Sendable {  // immutable after init; barrier is a pthread object
        let barrier: UnsafeMutablePointer<pthread_barrier_t>
        let group: DispatchGroup
        let body: @Sendable (Int) -> Void
        let index: Int

        init(
            barrier: UnsafeMutablePointer<pthread_barrier_t>, group: DispatchGroup, index: Int,
            body: @escaping @Sendable (Int) -> Void
        ) {
            self.barrier = barrier
            self.group = group
            self.index = index
            self.body = body
        }
    }

    /// Runs `body(index)` on `count` new threads, released together by a barrier, and waits up
    /// to `timeout` seconds for all of them.
    ///
    /// - Returns: false if some thread had not finished within `timeout` (a deadlock, or
    ///   something very slow). The threads are left running in that case.
    static func run(count: Int, timeout seconds: Double, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
        barrier.initialize(to: pthread_barrier_t())
        pthread_barrier_init(barrier, nil, UInt32(count))
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let start = Start(barrier: barrier, group: group, index: index, body: body)
            var thread = pthread_t()
            let status = pthread_create(
                &thread, nil,
                { raw in
                    // The thread lets go of `body` (and whatever it captured) before it signals
                    // the group, so a test may check a deinit right after `run` returns.
                    let group: DispatchGroup
                    do {
                        let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                        group = start.group
                        pthread_barrier_wait(start.barrier)
                        start.body(start.index)
                    }
                    group.leave()
                    return nil
                }, Unmanaged.passRetained(start).toOpaque())
            precondition(status == 0, "pthread_create failed: \(status)")
            pthread_detach(thread)
        }
        let finished = group.wait(timeout: .now() + seconds) == .success
        if finished {
            // Every thread has passed the barrier; it is safe to free it.
            pthread_barrier_destroy(barrier)
            barrier.deallocate()
        }
        return finished
    }
}

/// Iteration counts for the heavy tests. `OBSERVATION_TOKENS_TSAN=1` (set by `.ci/run` for the
/// thread-sanitizer run, where everything runs 5 to 15 times slower) divides them by
/// `tsanDivisor`, so the sanitizer run stays within the CI budget.
enum RelScale {
    static let isThreadSanitizerRun: Bool = {
        guard let value = getenv("OBSERVATION_TOKENS_TSAN") else { return false }
        return String(cString: value) == "1"
    }()

    static func iterations(_ full: Int, tsanDivisor: Int) -> Int {
        isThreadSanitizerRun ? max(1, full / tsanDivisor) : full
    }
}

/// An object whose only job is to be captured or referenced, so a `weak` reference can tell
/// when it was freed.
final class RelCanary: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// A reference to a token that a callback can reach (to invalidate or drop its own token).
///
/// `@unchecked Sendable`: only touched on the thread that drains the test's `.manual` queue.
final class RelTokenBox: @unchecked Sendable {
    var token: ObservationToken?
    init(_ token: ObservationToken? = nil) { self.token = token }
}

/// A log that callbacks append to. `@unchecked Sendable`: tests that use it drain their
/// `.manual` queue on the test's own thread, so all accesses happen on one thread.
final class RelLog: @unchecked Sendable {
    var entries: [String] = []
    func append(_ entry: String) { entries.append(entry) }
}

/// A small seeded generator (xorshift64*), so a failing run can be replayed.
struct RelRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}

/// A suite trait for suites whose tests run threads of their own (`RelThreads.run` and the
/// like): such suites take turns, one at a time, and the suite should also be `.serialized`.
///
/// Swift Testing runs test functions on the cooperative pool, which has one thread per core.
/// A stress test that joins its threads blocks one of them for as long as its threads run
/// (tens of seconds under the thread sanitizer on a busy machine); two at once blocked the
/// whole pool of a 2-core machine, and every other test that had already started its
/// one-minute time limit waited without running and failed with "Time limit exceeded". With
/// this trait at most one pool thread is ever held by a join. The turn is taken around the
/// whole suite, *before* any of its tests starts its time limit (a test's limit starts outside
/// test-level scopes, so a per-test turn would count the wait), and the wait for it suspends
/// rather than blocks.
struct RelThreadStressTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await RelStressTurn.shared.take()
        defer { RelStressTurn.shared.give() }
        try await function()
    }
}

extension Trait where Self == RelThreadStressTrait {
    /// Runs the suite when no other `.threadStress` suite runs; see ``RelThreadStressTrait``.
    static var threadStress: Self { Self() }
}

/// A first-come, first-served turn for ``RelThreadStressTrait``: waiting suspends the task.
final class RelStressTurn: Sendable {
    static let shared = RelStressTurn()

    private let state = RelLock((busy: false, waiting: [CheckedContinuation<Void, Never>]()))

    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()  // the turn passes straight on: still busy
        }
        next?.resume()
    }
}
