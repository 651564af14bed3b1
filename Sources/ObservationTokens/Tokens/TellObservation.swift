/// A handle on an observer-lifetime observation made with `tell`: fire it, schedule it, or
/// stop it.
///
/// The observed object owns a `tell` observation; this handle does not keep it alive (it
/// refers to it weakly), so dropping the handle changes nothing — unlike an
/// ``ObservationToken``, whose release ends its observation.
///
/// ```swift
/// let observation = person.tell(self, when: \.name) { screen, person in screen.render(person) }
/// observation.fire()   // render now, with the current name
/// ```
///
/// > Note: **Threading.** Every member is safe from any thread.
public struct TellObservation: Sendable {
    private weak var subscription: Subscription?

    init(_ subscription: Subscription) {
        self.subscription = subscription
    }

    /// Whether the observation is still active: not stopped, its observer and the observed
    /// object alive.
    public var isActive: Bool {
        guard let subscription, subscription.isActive else { return false }
        return !subscription.observerIsGone
    }

    /// Runs the callback now, on the calling thread, if the observation is active. Does not touch
    /// a pending delivery.
    ///
    /// - Returns: Whether the callback ran.
    @discardableResult
    public func fire() -> Bool {
        subscription?.deliverNow(oldValue: nil, isChange: false) ?? false
    }

    /// Queues one delivery for this tick without any change, as if a watched property had
    /// changed. Coalesces with real changes.
    public func schedule() {
        subscription?.schedule()
    }

    /// Ends the observation, like `stopTelling` for it alone. Idempotent.
    public func stop() {
        guard let subscription else { return }
        subscription.rootRegistry.endRetained { $0 === subscription }
    }
}
