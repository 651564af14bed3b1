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
