import Synchronization

/// Counts of live internal objects, so tests can prove that nothing accumulates.
///
/// Kept in debug builds only (where tests run): counting costs two atomic operations per token,
/// a measurable share of creating and ending one.
package enum LiveCounters {
    package static let subscriptions = Atomic<Int>(0)

    /// Whether this build counts (debug builds).
    package static var isCounting: Bool {
        #if DEBUG
            true
        #else
            false
        #endif
    }

    /// Subscriptions currently alive in the process (always 0 when not counting).
    package static var liveSubscriptions: Int { subscriptions.load(ordering: .relaxed) }
}
