/// Gives equal key paths one object, for paths that compare key paths by identity.
///
/// A chain segment's key path object is the one its reading closure hands out (see
/// `KeyPathChain.Segment`), and where the optimizer moved a literal into that closure it may be
/// a copy of the literal's object. Paths compare key paths by identity, to share walks and in
/// each registry's key path cache; so chains spelled apart must agree on one object per key path.
enum KeyPathIdentity {
    private struct State {
        /// Objects seen before, and the object each stands for. Holding both keeps every
        /// identity here from being reused while cached.
        var known: [ObjectIdentifier: (object: AnyKeyPath, canonical: AnyKeyPath)] = [:]
        /// The first object seen for each key path, by value.
        var canonical: [AnyKeyPath: AnyKeyPath] = [:]
    }

    private static let table = Locked(state: State())

    /// Key paths built at run time are new objects each time; past this many, they are left
    /// as they are rather than kept forever.
    static let limit = 1_024

    /// The object that stands for every key path equal to `keyPath`.
    static func canonical(_ keyPath: AnyKeyPath) -> AnyKeyPath {
        let id = ObjectIdentifier(keyPath)
        return table.withLock { state in
            // The same object again (the usual case): no hashing of the key path's components.
            if let known = state.known[id] { return known.canonical }
            guard state.known.count < limit else { return state.canonical[keyPath] ?? keyPath }
            let canonical = state.canonical[keyPath] ?? keyPath
            if state.canonical[keyPath] == nil { state.canonical[keyPath] = keyPath }
            state.known[id] = (keyPath, canonical)
            return canonical
        }
    }
}
