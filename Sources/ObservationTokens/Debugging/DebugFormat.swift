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

    /// The options the token was made with: as its call was given them when its site knows
    /// them, else as the subscription runs.
    static func options(of subscription: Subscription) -> String {
        var options = ObservationOptions()
        if let passed = subscription.site.options {
            options = passed
        } else {
            if subscription.isInitial { options.insert(.initial) }
            if subscription.isImmediate { options.insert(.immediate) }
            if subscription.wantsEndpoints { options.insert(.endpointChanges) }
        }
        var names: [String] = []
        if options.contains(.initial) { names.append(".initial") }
        if options.contains(.immediate) { names.append(".immediate") }
        if options.contains(.endpointChanges) { names.append(".endpointChanges") }
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

    /// What kind of token: the call that made it (see `TokenKind`), or, for code that didn't
    /// say, `property` or `path` from what it watches.
    static func kind(of subscription: Subscription) -> String {
        let kind = subscription.site.kind
        guard kind == .unspecified else { return kind.label }
        return subscription.isProperty ? "property" : "path"
    }

    /// What the token watches, as it was written: its property's name, its paths, its key path
    /// (tracked tokens), or what its parts watch (a binding's hub). Reads no property value
    /// except along the token's own paths, the way path walks do.
    static func watched(_ subscription: Subscription) -> String {
        if let written = subscription.writtenDescription { return written }
        return pathNames(of: subscription)
    }

    /// A tracked token's key path as written: Swift prints an `@Observed` property (a
    /// computed property, to Swift) as `<computed 0x… (Type)>`, so each of those components is
    /// named after the property the token's last evaluation read in its place, when it read
    /// one per such component (`\Person.address?.zipCode`); else the components show their
    /// type, followed by what the evaluation read (`\Person.<computed String> (reads
    /// firstName, lastName)`).
    static func keyPathText(_ keyPath: AnyKeyPath, readBy subscription: Subscription) -> String {
        keyPathText(keyPath, reads: readNames(of: subscription))
    }

    /// `keyPathText(_:readBy:)` with the names read given (none: components show their type).
    static func keyPathText(_ keyPath: AnyKeyPath, reads: [String]) -> String {
        let text = "\(keyPath)"
        var parts: [Substring] = []
        var types: [Substring] = []
        var rest = Substring(text)
        while let start = rest.firstRange(of: "<computed 0x") {
            parts.append(rest[..<start.lowerBound])
            // The type in parentheses may nest them: find the closing one, then `>`.
            var index = start.upperBound
            while index < rest.endIndex, rest[index] != "(" { index = rest.index(after: index) }
            guard index < rest.endIndex else { return text }
            let typeStart = rest.index(after: index)
            var depth = 1
            while depth > 0 {
                index = rest.index(after: index)
                guard index < rest.endIndex else { return text }
                if rest[index] == "(" { depth += 1 } else if rest[index] == ")" { depth -= 1 }
            }
            types.append(rest[typeStart..<index])
            let close = rest.index(after: index)
            guard close < rest.endIndex, rest[close] == ">" else { return text }
            rest = rest[rest.index(after: close)...]
        }
        guard !types.isEmpty else { return text }
        let names = reads.count == types.count ? reads.map { Substring($0) } : types.map { "<computed \($0)>" }
        var result = ""
        for (part, name) in zip(parts, names) { result += part + name }
        result += rest
        // Swift ends an optional chain with `?` (the wrap of the result): not written.
        if result.hasSuffix("?") { result.removeLast() }
        if reads.count != types.count, !reads.isEmpty { result += " (reads \(joined(reads)))" }
        return result
    }

    /// The names of the properties a tracked subscription's last evaluation read, in reading
    /// order (its edges).
    static func readNames(of subscription: Subscription) -> [String] {
        guard let extras = subscription.extras else { return [] }
        let edges = extras.withLock { state in state.edges.map { (registry: $0.registry, serial: $0.serial) } }
        return edges.map { edge in
            ObservationDebugging.propertyName(edge.serial, in: edge.registry.weakOwner, registry: edge.registry)
        }
    }

    /// Texts joined with ", ", each once, in order, without empty ones.
    static func joined(_ texts: [String]) -> String {
        unique(texts.filter { !$0.isEmpty }).joined(separator: ", ")
    }

    /// One line describing a token, as seen from the registry `here`.
    static func line(for subscription: Subscription, here: Registry?) -> String {
        var text = "\(kind(of: subscription)) \(address(ObjectIdentifier(subscription)))"
        let watched = watched(subscription)
        if !watched.isEmpty { text += " \"\(watched)\"" }
        if subscription.rootRegistry !== here { text += " rooted at \(object(subscription.rootRegistry))" }
        // A computed property's own subscription: the property says it all (no user call made it).
        if subscription.site.kind == .computed { return text }
        text += " observer: \(observer(of: subscription))"
        text += " options: \(options(of: subscription))"
        if subscription.site.kind != .willChange { text += " queue: \(queue(subscription.queue))" }
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

    /// The subscription's property or paths as names. Path tokens are described with
    /// `describe`, which reads only the way path walks do; a property by its name in its
    /// class's table (empty for a collection's own storages, which the headings name).
    static func pathNames(of subscription: Subscription) -> String {
        if subscription.isProperty {
            guard let serial = subscription.attachedPropertySerial else { return subscription.pathDescription }
            let registry = subscription.rootRegistry
            let owner = registry.weakOwner
            // A collection's own storage (`contents`) is named by the heading, not by the token.
            if owner is any CollectionDebugNames { return "" }
            guard owner != nil else { return subscription.propertyNameAfterDeinit ?? "" }
            return ObservationDebugging.knownPropertyName(serial, in: owner, registry: registry) ?? ""
        }
        guard let extras = subscription.extras, !extras.paths.isEmpty, let root = subscription.rootRegistry.weakOwner
        else { return subscription.pathDescription }
        return extras.paths.map { $0.describe(from: root) }.joined(separator: ", ")
    }

    static func unique(_ names: [String]) -> [String] {
        var seen: [String] = []
        for name in names where !seen.contains(name) { seen.append(name) }
        return seen
    }
}
