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

extension TellObservation: CustomReflectable {
    /// The handle as a mirror shows it: whether its observation is active and, while the observed
    /// object still holds the observation, where it was made.
    ///
    /// Test frameworks and debuggers walk a value's mirror to describe it (Swift Testing does for
    /// the values of a failed `#expect`). The mirror stops here: the observation behind the handle
    /// holds a callback that can't be copied and a reference to the observer that a mirror must
    /// not read once the observer is gone.
    ///
    /// ```swift
    /// final class Person: ObservableModel {
    ///     @Observed var name = ""
    /// }
    /// final class Screen {}
    /// let person = Person()
    /// let screen = Screen()
    /// let observation = person.tell(screen, when: \.name) { _, _ in }
    /// let labels = Mirror(reflecting: observation).children.map(\.label)
    /// // labels == ["isActive", "site"]
    /// ```
    ///
    /// - Complexity: O(1).
    /// - Note: Safe from any thread; reads the observation's state once.
    public var customMirror: Mirror {
        guard let subscription else {
            return Mirror(self, children: ["isActive": false], displayStyle: .struct)
        }
        return Mirror(
            self, children: ["isActive": isActive, "site": subscription.site.description], displayStyle: .struct)
    }
}
