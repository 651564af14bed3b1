internal import CObservationTokensRuntime

/// A per-thread pointer of the library, in C thread-local storage: reading or writing it is a
/// load or a store (a `pthread_getspecific`/`pthread_setspecific` pair was two calls and a
/// `swift_once` check of the lazily created key per use; a tracked computation uses them a
/// dozen times). Starts nil on every thread; nothing is freed at thread exit.
struct ThreadSlot {
    private let index: Int32

    /// The recording `@Observed` getters report to (`AccessCapture`).
    static var accessCapture: ThreadSlot { ThreadSlot(index: 0) }
    /// The computed properties computing on this thread (`SyntheticFrame`).
    static var syntheticFrame: ThreadSlot { ThreadSlot(index: 1) }
    /// The innermost collection of held-back `.immediate` checks (`ImmediateChecks`).
    static var immediateChecks: ThreadSlot { ThreadSlot(index: 2) }

    private init(index: Int32) { self.index = index }

    @inline(__always)
    func get() -> UnsafeMutableRawPointer? { ot_thread_slot(index) }

    @inline(__always)
    func set(_ value: UnsafeRawPointer?) { ot_set_thread_slot(index, value) }
}
