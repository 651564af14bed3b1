/// Observer-count transitions collected under locks and reported after every lock is released.
struct ObservationStateHooks {
    /// Nil until a call is collected (almost always: only owners adopting the protocol collect
    /// calls). A nil is destroyed inline, where an empty array was released by a call, once per
    /// token started and once per token ended.
    private var calls: [(registry: Registry, serial: UInt64, isObserved: Bool)]?

    mutating func append(registry: Registry, serial: UInt64, isObserved: Bool) {
        guard registry.reportsObservationState else { return }
        if calls == nil { calls = [] }
        calls!.append((registry, serial, isObserved))
    }

    /// Calls `observationStateDidChange` on each owner still alive that adopts
    /// `ObservationStateObserving`. No lock may be held.
    @inline(__always)
    func run() {
        if let calls { runCalls(calls) }
    }

    private func runCalls(_ calls: [(registry: Registry, serial: UInt64, isObserved: Bool)]) {
        for call in calls {
            guard let owner = call.registry.weakOwner as? any ObservationStateObserving else { continue }
            if call.serial == PathStep.wildcardSerial {
                // `*` counts for every property that has no observer of its own.
                let own = Set(call.registry.observedSerials)
                for entry in PropertyTable(owner).entries where !own.contains(entry.serial(in: owner)) {
                    owner.observationStateDidChange(forProperty: entry.name, isObserved: call.isObserved)
                }
            } else if let name = PropertyTable(owner).name(ofSerial: call.serial, in: owner) {
                owner.observationStateDidChange(forProperty: name, isObserved: call.isObserved)
            }
        }
    }
}
