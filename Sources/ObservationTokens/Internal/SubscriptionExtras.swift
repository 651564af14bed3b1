import Synchronization

/// The parts of a subscription that most tokens never need, kept out of line so a plain
/// single-property token stays small (see `docs/Performance.md`, W7), together with the lock
/// that guards them.
///
/// Allocated at creation for path tokens (several paths, paths through other objects, names,
/// `*`, `.endpointChanges`) and for change tokens. A plain single-property token has none and
/// never takes a lock of its own.
///
/// Locking rule: this lock may be held while taking a registry lock, never the other way round.
final class SubscriptionExtras: Locked<SubscriptionExtras.State>, @unchecked Sendable {  // state is guarded by Locked
    /// The observed paths; empty for a single-property change token.
    let paths: [ObservedPath]

    /// The last change (a `Registry.nextVisit` stamp) that handled this subscription, so one
    /// change handles it once even if its path runs through the changed property twice.
    let lastVisit = Atomic<UInt64>(0)

    struct State {
        /// Where the paths run now.
        var edges = [Edge]()
        /// Change tokens: this tick's old value.
        var oldValue: Any?
        /// `.endpointChanges`: the endpoints seen at the last delivery.
        var lastEndpoints: [StoredEndpoint] = []
        /// The paths' names, remembered when the root deinitializes.
        var rememberedDescription: String?
    }

    init(paths: [ObservedPath]) {
        self.paths = paths
        super.init(state: State())
    }

    /// Empties what an ended subscription no longer needs and returns it, for release outside
    /// the lock.
    func takeEnded() -> Ended {
        withLock { state in
            // Moved out, not copied and emptied: no retain and release of each part.
            var ended = Ended()
            swap(&ended.edges, &state.edges)
            swap(&ended.oldValue, &state.oldValue)
            swap(&ended.lastEndpoints, &state.lastEndpoints)
            return ended
        }
    }

    struct Ended {
        var edges: [Edge] = []
        var oldValue: Any?
        var lastEndpoints: [StoredEndpoint] = []
    }
}
