/// One observation. Keep it to keep observing; release it or call ``invalidate()`` to stop.
///
/// `observe` methods on ``ObservableModel`` return a token. The observation is active exactly
/// while the token is alive and valid; it ends, at the latest, when any of these happens:
///
/// 1. the token deinitializes (its last strong reference goes away);
/// 2. ``invalidate()`` is called;
/// 3. the observed object deinitializes.
///
/// A token that was given an observer also ends, at the next delivery, if the observer is gone.
///
/// ```swift
/// final class AddressLabel {
///     var text = ""
///     private var tokens = Set<ObservationToken>()
///
///     init(address: Address) {
///         address.observe(\.zipCode, observer: self) { label, address in
///             label.text = address.zipCode
///         }
///         .store(in: &tokens)
///     }
/// }
/// ```
///
/// Tokens are `Hashable` by identity: two tokens are equal only if they are the same token.
///
/// > Note: **Lifetime.** The token holds the observed object and the observer weakly, and the
/// > observed object never retains the token. The callback closure is released inside the call
/// > that ends the token: `invalidate()`, the token's `deinit`, the observed object's `deinit`,
/// > or the delivery that finds the observer gone. If the callback is running at that moment (on
/// > another thread, or because it invalidated its own token), the closure is released when that
/// > call returns.
///
/// > Note: **Threading.** All members are safe to call from any thread. Once `invalidate()`
/// > returns, the callback never starts again, even for a change already pending in this tick
/// > — with one exception: if a delivery is already under way on another thread (the queue's
/// > target), that one callback may still run. On the delivering thread itself, the usual
/// > case, `invalidate()` is exact.
public final class ObservationToken: Sendable, Hashable, CustomDebugStringConvertible {
    let subscription: Subscription

    init(subscription: Subscription) {
        self.subscription = subscription
    }

    deinit {
        // The token holds the subscription until this deinit finishes; no retain needed.
        Unmanaged.passUnretained(subscription)._withUnsafeGuaranteedRef { $0.end() }
    }

    /// Whether the observation is still active.
    public var isValid: Bool {
        subscription.isActive
    }

    /// Ends the observation now. Idempotent; safe from any thread, and from inside any callback,
    /// this token's own included. A delivery already pending in this tick is cancelled.
    public func invalidate() {
        subscription.end()
    }

    /// Runs the callback now, on the calling thread, if the token is valid and the observed
    /// object (and observer, if any) are alive. Does not touch a pending delivery.
    ///
    /// - Returns: Whether the callback ran.
    @discardableResult
    public func fire() -> Bool {
        subscription.deliverNow(oldValue: nil, isChange: false)
    }

    /// Queues one delivery for this tick without any change, as if a watched property had
    /// changed. Coalesces with real changes. Immediate-mode tokens are delivered at the end of
    /// the tick too.
    public func schedule() {
        subscription.schedule()
    }

    /// Inserts the token into a set that keeps it alive.
    public func store(in set: inout Set<ObservationToken>) {
        set.insert(self)
    }

    /// Inserts the token into a bag that keeps it alive.
    public func store(in bag: TokenBag) {
        bag.insert(self)
    }

    /// Tokens are equal when they are the same token (identity, as `===`).
    ///
    /// - Parameters:
    ///   - lhs: A token.
    ///   - rhs: Another token.
    /// - Returns: Whether `lhs` and `rhs` are the same object.
    public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool {
        lhs === rhs
    }

    /// Hashes the token's identity, so a `Set<ObservationToken>` holds each token once.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// Names the observed object, what the token watches as it was written (property names,
    /// paths, a tracked key path, "tracking closure"), where the token was created, and whether
    /// it is still active.
    ///
    /// Property names come from the observed object while it lives and are remembered when it
    /// deinitializes. At the instant the object is deinitializing on another thread (its weak
    /// references are already gone, its bookkeeping not yet done), a property may read
    /// `<key path>`.
    public var debugDescription: String {
        let paths = DebugFormat.watched(subscription)
        let state = isValid ? "active" : "ended"
        return "ObservationToken(\(subscription.rootTypeName) \(paths), created at \(subscription.site), \(state))"
    }
}

extension ObservationToken: CustomReflectable {
    /// The token as a mirror shows it: whether it is valid and where it was made.
    ///
    /// Test frameworks and debuggers walk a value's mirror to describe it (Swift Testing does for
    /// the values of a failed `#expect`). A token's mirror stops here: the observation behind it
    /// holds a callback that can't be copied and references that a mirror must not read once
    /// their objects are gone.
    ///
    /// ```swift
    /// final class Person: ObservableModel {
    ///     @Observed var name = ""
    /// }
    /// let token = Person().observe(\.name) { _ in }
    /// let labels = Mirror(reflecting: token).children.map(\.label)
    /// // labels == ["isValid", "site"]
    /// ```
    ///
    /// - Complexity: O(1).
    /// - Note: Safe from any thread; reads the token's state once.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["isValid": isValid, "site": subscription.site.description], displayStyle: .class)
    }
}
