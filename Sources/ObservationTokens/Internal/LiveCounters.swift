import Synchronization

/// Counts of live internal objects, so tests can prove that nothing accumulates.
package enum LiveCounters {
    package static let subscriptions = Atomic<Int>(0)

    /// Subscriptions currently alive in the process.
    package static var liveSubscriptions: Int { subscriptions.load(ordering: .relaxed) }
}
