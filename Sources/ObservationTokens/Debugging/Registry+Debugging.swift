/// Snapshots of a registry for the debugging aids: what is attached, retained for reading
/// outside the lock.
extension Registry {
    struct DebugMember {
        let subscription: Subscription
        let isLeaf: Bool
    }

    struct DebugProperty {
        let serial: UInt64
        let members: [DebugMember]
    }

    /// The observed properties with their subscriptions, and the observer-lifetime (`tell`)
    /// subscriptions. Retains the subscriptions (never a user object) under the lock; the
    /// caller releases them outside it. Empty once the owner has deinitialized.
    func debugSnapshot() -> (properties: [DebugProperty], retained: [Subscription]) {
        withLock { state in
            guard !state.isDead else { return ([], []) }
            var properties: [DebugProperty] = []
            for property in state.properties where !property.members.isEmpty {
                var members: [DebugMember] = []
                // Under the lock every member is alive (see `WeakSet`): retaining one is safe.
                property.members.forEachUnretained { member, isLeaf in
                    members.append(DebugMember(subscription: member.takeUnretainedValue(), isLeaf: isLeaf))
                }
                properties.append(DebugProperty(serial: property.serial, members: members))
            }
            return (properties, state.retained)
        }
    }
}

extension Registry {
    /// One token as the debugging aids show it on this registry's object: the subscription
    /// that stands for it (see `Subscription.mainSubscription`), the properties here it is
    /// attached to, and its subscriptions attached here.
    struct DebugToken {
        let main: Subscription
        /// The serials of the properties (or `*`) here that the token or one of its parts is
        /// attached to, each once, in the registry's order. Empty for a token this object only
        /// keeps (observer-lifetime, will-change, a binding's destination).
        var serials: [UInt64] = []
        /// Its subscriptions attached here, each once (itself, or its parts).
        var attached: [Subscription] = []
    }

    /// Every token attached to or kept by this object, each once however many of its
    /// subscriptions or paths run through here, in the order they first appear. Retains
    /// subscriptions, never a user object.
    func debugTokens() -> [DebugToken] {
        let snapshot = debugSnapshot()
        var tokens: [DebugToken] = []
        var index: [ObjectIdentifier: Int] = [:]
        // Outside the registry's lock: a part asks its group for its token (a lock of its own).
        func add(_ subscription: Subscription, serial: UInt64?) {
            let main = subscription.mainSubscription
            let position: Int
            if let known = index[ObjectIdentifier(main)] {
                position = known
            } else {
                position = tokens.count
                index[ObjectIdentifier(main)] = position
                tokens.append(DebugToken(main: main))
            }
            guard let serial else { return }
            if !tokens[position].serials.contains(serial) { tokens[position].serials.append(serial) }
            if !tokens[position].attached.contains(where: { $0 === subscription }) {
                tokens[position].attached.append(subscription)
            }
        }
        for property in snapshot.properties {
            for member in property.members { add(member.subscription, serial: property.serial) }
        }
        for subscription in snapshot.retained { add(subscription, serial: nil) }
        return tokens
    }
}
