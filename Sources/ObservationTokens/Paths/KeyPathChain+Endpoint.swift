extension ObservedPath {
    /// The endpoint as a chain's callback receives it, read the way path walks read: every
    /// value under its object's registry lock, so the draining thread never reads a property
    /// while the thread that owns it writes it (see `PathStep.readForWalk`).
    ///
    /// `fallback` (the chain's own typed evaluation) is used only if the value can't be cast,
    /// which a chain's own path never produces.
    func endpointValue<Root, Value>(from root: Root, fallback: (Root) -> Value) -> Value
    where Root: ObservableModel {
        switch endpoint(from: root) {
        case .value(let value):
            if let typed = value as? Value { return typed }
        case .unreachable:
            // Unreachable only through a nil (or gone) optional link: the endpoint type is optional.
            if let none = Optional<Void>.none as Any as? Value { return none }
        }
        return fallback(root)
    }
}
