extension ModelObserving where Self: ObservableModelBase {

}

extension ModelObserving where Self: ObservableModelBase {
}

/// The value a change token on a path delivered last, swapped under a lock.
final class LastDelivered<Value>: Locked<Value>, @unchecked Sendable {  // state is guarded by Locked
    init(_ value: Value) { super.init(state: value) }

    /// Stores `value` and returns the one it replaces.
    func exchange(_ value: Value) -> Value {
        withLock { last in
            defer { last = value }
            return last
        }
    }
}

extension ModelObserving where Self: ObservableModelBase {
}
