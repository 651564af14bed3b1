import Synchronization

/// The process-wide list behind the census: registries created while the census was on, held
/// weakly, in creation order. Touched only when a registry is created (once per observed
/// object, never per token) and only while the census is on: from the start in debug builds
/// (which already count every token, see `LiveCounters`), on request in optimized builds.
enum DebugCensusState {
    static let isEnabled = Atomic<Bool>(LiveCounters.isCounting)

    private final class WeakRegistry: @unchecked Sendable {  // written once, at creation
        weak var registry: Registry?
        init(_ registry: Registry) { self.registry = registry }
    }

    private static let registries = Locked<[WeakRegistry]>(state: [])

    /// Called from `Registry.init`: one relaxed load when the census is off.
    @inline(__always)
    static func registryCreated(_ registry: Registry) {
        guard isEnabled.load(ordering: .relaxed) else { return }
        register(registry)
    }

    @inline(never)
    private static func register(_ registry: Registry) {
        let box = WeakRegistry(registry)
        registries.withLock { list in
            // Drop dead entries now and then, so the list follows the live objects.
            if list.count >= 64, list.count.nonzeroBitCount == 1 { list.removeAll { $0.registry == nil } }
            list.append(box)
        }
    }

    /// The live registries, oldest first.
    static func liveRegistries() -> [Registry] {
        let boxes = registries.withLock { list in
            list.removeAll { $0.registry == nil }
            return list
        }
        return boxes.compactMap(\.registry)
    }

    static func reset() {
        registries.withLock { $0.removeAll() }
    }
}
