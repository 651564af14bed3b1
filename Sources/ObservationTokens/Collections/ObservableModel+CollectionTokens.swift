extension ObservableModelBase {
    /// Starts a subscription on a collection's synthetic storage (count, contents, a cell);
    /// a token that has already ended if it can't attach (the collection is gone).
    final func _observeSynthetic(_ key: TypedKey, subscription: Subscription) -> ObservationToken {
        _start(key, subscription: subscription) ?? ObservationToken(subscription: subscription)
    }

    /// Starts a path subscription through a collection's synthetic storages.
    final func _observeSynthetic(_ subscription: Subscription) -> ObservationToken {
        _observe(subscription)
    }
}
