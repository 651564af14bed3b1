/// Text for the debugging aids: names and addresses of objects, and one line per subscription.
enum DebugFormat {
    static func address(_ id: ObjectIdentifier) -> String {
        "0x" + String(UInt(bitPattern: id), radix: 16)
    }

    static func object(_ registry: Registry) -> String {
        "\(registry.ownerType) \(address(registry.ownerID))"
    }

    static func observer(of subscription: Subscription) -> String {
        guard subscription.hasObserver else { return "none" }
        guard let observer = subscription.loadObserver() else { return "gone" }
        return "\(type(of: observer)) \(address(ObjectIdentifier(observer)))"
    }

    static func options(of subscription: Subscription) -> String {
        var names: [String] = []
        if subscription.isInitial { names.append(".initial") }
        if subscription.isImmediate { names.append(".immediate") }
        if subscription.wantsEndpoints { names.append(".endpointChanges") }
        return "[" + names.joined(separator: ", ") + "]"
    }

    static func queue(_ queue: CoalescingQueue) -> String {
        if queue === CoalescingQueue.main { return "main" }
        switch queue.target {
        case .main: return "main-target \(address(ObjectIdentifier(queue)))"
        case .dispatch(let dispatch): return "dispatch(\(dispatch.label)) \(address(ObjectIdentifier(queue)))"
        case .manual: return "manual \(address(ObjectIdentifier(queue)))"
        }
    }

    /// What kind of observation, from the subscription's class.
    static func kind(of subscription: Subscription) -> String {
        let name = String(describing: type(of: subscription))
        if name.hasPrefix("TrackedSubscription") { return "tracked" }
        if subscription.extras?.paths.isEmpty == false { return "path" }
        if subscription.wantsOldValue { return "change" }
        return "property"
    }

    /// One line describing a subscription, as seen from the registry `here`.
    static func line(for subscription: Subscription, here: Registry?) -> String {
        var text = "\(kind(of: subscription)) \(address(ObjectIdentifier(subscription)))"
        let paths = pathNames(of: subscription)
        if !paths.isEmpty { text += " \"\(paths)\"" }
        if subscription.rootRegistry !== here { text += " rooted at \(object(subscription.rootRegistry))" }
        text += " observer: \(observer(of: subscription))"
        text += " options: \(options(of: subscription))"
        text += " queue: \(queue(subscription.queue))"
        text += " created at \(subscription.site)"
        if !subscription.isActive { text += " (ended)" }
        return text
    }

    /// A WARNING line if a path subscription is attached where its paths no longer run: an
    /// object on the path was replaced behind its setter's back (`storedValue`). Walks the paths
    /// again with the library's own reads (under each object's registry lock).
    static func staleWarning(for subscription: Subscription) -> String? {
        guard !subscription.isProperty, let extras = subscription.extras, !extras.paths.isEmpty,
            subscription.isActive, let root = subscription.rootRegistry.weakOwner
        else { return nil }
        let attached = extras.withLock { $0.edges }
        var problems: [String] = []
        for (index, path) in extras.paths.enumerated() where !path.hasInnerWildcard {
            var keys: [ObservedPath.EdgeKey] = []
            _ = path.walk(from: root, pathIndex: index, into: &keys, needsEndpoint: false)
            let now = keys.map { (ObjectIdentifier($0.registry), $0.serial) }
            let was = attached.filter { Int($0.path) == index }.map { (ObjectIdentifier($0.registry), $0.serial) }
            let stale = attached.filter { edge in
                Int(edge.path) == index
                    && !now.contains { $0.0 == ObjectIdentifier(edge.registry) && $0.1 == edge.serial }
            }
            let missing = keys.filter { key in
                !was.contains { $0.0 == ObjectIdentifier(key.registry) && $0.1 == key.serial }
            }
            guard !stale.isEmpty || !missing.isEmpty else { continue }
            var problem = "path \"\(path.describe(from: root))\" of \(address(ObjectIdentifier(subscription)))"
            problem += " rooted at \(object(subscription.rootRegistry))"
            if !stale.isEmpty {
                problem += " is still attached to " + unique(stale.map { object($0.registry) }).joined(separator: ", ")
            }
            if !missing.isEmpty {
                problem +=
                    (stale.isEmpty ? " " : " but ") + "now runs through "
                    + unique(missing.map { object($0.registry) }).joined(separator: ", ")
            }
            problems.append(problem)
        }
        guard !problems.isEmpty else { return nil }
        return "WARNING: stale wiring: " + problems.joined(separator: "; ")
            + " (an object on the path was replaced without its setter, e.g. through storedValue;"
            + " call propertyDidChange(_:) after such a write)"
    }

    /// The subscription's paths as dotted names. Path tokens are described with `describe`,
    /// which reads only the way path walks do; the others by their names only.
    static func pathNames(of subscription: Subscription) -> String {
        guard !subscription.isProperty, let extras = subscription.extras, !extras.paths.isEmpty,
            let root = subscription.rootRegistry.weakOwner
        else { return subscription.pathDescription }
        return extras.paths.map { $0.describe(from: root) }.joined(separator: ", ")
    }

    private static func unique(_ names: [String]) -> [String] {
        var seen: [String] = []
        for name in names where !seen.contains(name) { seen.append(name) }
        return seen
    }
}
