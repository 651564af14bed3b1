// Sources that watch whatever a read touches: a tracking closure and a value computed by a
// closure. See `docs/Tracking.md`.

extension ObservationSource where Payload == Void {
    /// Whatever `read` reads: every `@Observed` (or computed) property it touched the last time
    /// it ran, on any object. It runs at registration and at each delivery (on the delivering
    /// thread), before the callback, and the token then watches what it read that time.
    ///
    /// ```swift
    /// let token = cart.observe(.tracking { cart in _ = cart.items.count; _ = cart.owner?.name }) { cart in
    ///     render(cart)
    /// }
    /// ```
    ///
    /// `observe { model in … }` is the same with the callback as the read.
    ///
    /// - Parameter read: Reads what the token watches; runs without any lock held.
    public static func tracking(_ read: @escaping @Sendable (Root) -> Void) -> ObservationSource<Root, Void> {
        ObservationSource<Root, Void> { root, delivery in
            let callback = delivery.callback
            let subscription = TrackedSubscription<Root, Void>(
                root: root, observer: delivery.observer, options: delivery.options, queue: delivery.queue,
                site: delivery.site(.tracked), skipsUnchanged: false, keepsLast: false, hasCallback: true,
                body: .init(
                    read: { _, model in read(model) },
                    deliver: { observer, model, _, _ in callback(observer, model, ()) }))
            return root._startTracked(subscription, observer: delivery.observer) {
                Root.emptyBody(".tracking { … }", delivery.fileID, delivery.line)
            }.token
        }
    }
}

extension ObservationSource {
    /// A value computed from the object: `compute` runs at registration and at each delivery,
    /// the token watches every `@Observed` (or computed) property it read, and the callback
    /// receives the value only when it differs from the one last delivered (`==` / `===`;
    /// other types on every change).
    ///
    /// ```swift
    /// let token = person.observe(.value { $0.firstName + " " + $0.lastName }) { _, fullName in
    ///     print(fullName)
    /// }
    /// ```
    ///
    /// - Parameter compute: Computes the value; runs without any lock held.
    public static func value<Value>(_ compute: @escaping @Sendable (Root) -> Value) -> ObservationSource<Root, Value> {
        ObservationSource<Root, Value> { root, delivery in
            root._observeValue(compute, delivery: delivery, kind: "value") { _, new in new }
        }
    }

    /// A value computed from the object, with the value last delivered: as ``value(_:)``, the
    /// callback receiving a ``PropertyChange``.
    ///
    /// - Parameter compute: Computes the value; runs without any lock held.
    public static func changes<Value>(of compute: @escaping @Sendable (Root) -> Value) -> ObservationSource<
        Root, PropertyChange<Value>
    > {
        ObservationSource<Root, PropertyChange<Value>> { root, delivery in
            root._observeValue(compute, delivery: delivery, kind: "changes(of:)") { old, new in
                PropertyChange(old: old, new: new)
            }
        }
    }
}

extension ObservableModelBase {
    /// The value sources' token: a tracked subscription that keeps the last value and skips
    /// an unchanged one.
    final func _observeValue<Root: ObservableModel, Value, Payload>(
        _ compute: @escaping @Sendable (Root) -> Value, delivery: _ObservationDelivery<Root, Payload>, kind: String,
        payload: @escaping @Sendable (_ old: Value, _ new: Value) -> Payload
    ) -> ObservationToken {
        let callback = delivery.callback
        let subscription = TrackedSubscription<Root, Value>(
            root: unsafeDowncast(self, to: Root.self), observer: delivery.observer, options: delivery.options,
            queue: delivery.queue, site: delivery.site(.tracked), skipsUnchanged: true, keepsLast: true,
            hasCallback: true,
            body: .init(
                read: { _, model in compute(model) },
                deliver: { observer, model, new, old in callback(observer, model, payload(old, new)) }))
        return _startTracked(subscription, observer: delivery.observer) {
            Root.emptyBody(".\(kind) { … }", delivery.fileID, delivery.line)
        }.token
    }
}
