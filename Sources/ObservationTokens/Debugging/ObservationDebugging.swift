import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Debugging aids that work across objects: the live-token census, Graphviz export, and the
/// handler that watchpoints call when no debugger is attached.
///
/// The census is on from the start in debug builds. In optimized builds it is off until you
/// switch it on, and it sees the objects whose first observation came after that, so switch it
/// on early (first thing in `main`, or in a test's setup):
///
/// ```swift
/// ObservationDebugging.isCensusEnabled = true
/// // … run the app, open and close the screen that leaks …
/// print(ObservationDebugging.censusReport())
/// ```
///
/// > Note: **Cost.** With the census off (optimized builds, by default) nothing here runs:
/// > tokens are created and delivered exactly as without this type, and an object's first
/// > observation pays one relaxed atomic load. With the census on, an object's first
/// > observation also appends a weak reference to a process-wide list (a lock); tokens
/// > themselves never pay anything.
///
/// > Note: **Threading.** Every member is safe from any thread. Reports read the objects'
/// > registries under their locks and read property values only the way path walks do (under
/// > each object's registry lock); no user code runs.
public enum ObservationDebugging {
    // MARK: Census

    /// Whether objects observed from now on are listed for ``census()`` and ``dotGraph(of:)``.
    /// On from the start in debug builds, off by default in optimized builds. Switching it off
    /// forgets the listed objects.
    public static var isCensusEnabled: Bool {
        get { DebugCensusState.isEnabled.load(ordering: .relaxed) }
        set {
            DebugCensusState.isEnabled.store(newValue, ordering: .relaxed)
            if !newValue { DebugCensusState.reset() }
        }
    }

    /// One group of the census: live tokens of one observed type created at one place.
    public struct CensusEntry: Sendable, Hashable, CustomStringConvertible {
        /// The type of the objects the tokens are rooted at.
        public let observedType: String
        /// Where the tokens were created, as `file:line`.
        public let site: String
        /// How many live tokens (and observer-lifetime `tell` observations) are in the group.
        public let count: Int

        /// `count × observedType at site`.
        public var description: String { "\(count) × \(observedType) at \(site)" }
    }

    /// The live observations rooted at objects listed by the census, grouped by observed type
    /// and creation site, oldest first (by when the group's first object was first observed).
    ///
    /// A group that keeps growing while the app returns to the same state is a leak: tokens
    /// kept by something that should have let them go.
    ///
    /// ```swift
    /// ObservationDebugging.isCensusEnabled = true
    /// let token = counter.observe(\.value) { _ in }
    /// ObservationDebugging.census()   // [1 × Counter at MyApp/Screen.swift:12]
    /// ```
    ///
    /// - Returns: The groups; empty while the census is off.
    /// - Complexity: O(*o* + *e*) in the listed objects and their edges.
    public static func census() -> [CensusEntry] {
        var order: [String] = []
        var groups: [String: (type: String, site: String, count: Int)] = [:]
        var seen = Set<ObjectIdentifier>()
        let registries = DebugCensusState.liveRegistries()
        let listed = Set(registries.map(ObjectIdentifier.init))
        for registry in registries {
            // A computed property's own subscription is not a token: not counted.
            for token in registry.debugTokens() where token.main.isActive && token.main.site.kind != .computed {
                let main = token.main
                // Counted at its root when the root is listed, else where it is first seen.
                guard main.rootRegistry === registry || !listed.contains(ObjectIdentifier(main.rootRegistry))
                else { continue }
                guard seen.insert(ObjectIdentifier(main)).inserted else { continue }
                let type = String(describing: main.rootRegistry.ownerType)
                let site = main.site.description
                let key = type + "\u{0}" + site
                if groups[key] == nil { order.append(key) }
                groups[key, default: (type, site, 0)].count += 1
            }
        }
        return order.compactMap { key in
            groups[key].map { CensusEntry(observedType: $0.type, site: $0.site, count: $0.count) }
        }
    }

    /// ``census()`` as text, one group a line, with a total.
    ///
    /// ```swift
    /// print(ObservationDebugging.censusReport())
    /// // Live observations: 3
    /// //   2 × Counter at MyApp/Screen.swift:12
    /// //   1 × Person at MyApp/Header.swift:40
    /// ```
    ///
    /// - Returns: The report; it says so when the census is off.
    public static func censusReport() -> String {
        guard isCensusEnabled else {
            return "Census off: set ObservationDebugging.isCensusEnabled = true before the objects are first observed."
        }
        let entries = census()
        var lines = ["Live observations: \(entries.reduce(0) { $0 + $1.count })"]
        lines += entries.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }

    // MARK: Graphviz

    /// A Graphviz DOT graph of observer → token → observed object edges, for the objects the
    /// census lists, or for `object` alone (census on or off).
    ///
    /// ```swift
    /// let dot = ObservationDebugging.dotGraph(of: person)
    /// // write it to a file and run `dot -Tsvg graph.dot -o graph.svg`
    /// ```
    ///
    /// - Parameter object: The object whose observers to draw; nil for every listed object.
    /// - Returns: A `digraph` in DOT syntax: one node per token, labelled with its kind, what
    ///   it watches and its creation site, and one edge from it to each object, labelled with
    ///   the properties it watches there (or why the object keeps it).
    /// - Complexity: O(*e*) in the edges drawn.
    public static func dotGraph(of object: ObservableModelBase? = nil) -> String {
        let registries: [Registry]
        if let object {
            registries = object.existingRegistry.map { [$0] } ?? []
        } else {
            registries = DebugCensusState.liveRegistries()
        }
        var lines = ["digraph observations {", "  rankdir=LR;"]
        var drawn = Set<String>()
        func draw(_ id: String, _ line: String) {
            if drawn.insert(id).inserted { lines.append(line) }
        }
        for registry in registries {
            let objectID = "o" + DebugFormat.address(registry.ownerID)
            draw(objectID, "  \"\(objectID)\" [shape=box, label=\"\(DebugFormat.object(registry))\"];")
            let owner = registry.weakOwner
            for token in registry.debugTokens() where token.main.isActive {
                let main = token.main
                let tokenID = "t" + DebugFormat.address(ObjectIdentifier(main))
                var label = DebugFormat.kind(of: main)
                let watched = DebugFormat.watched(main)
                if !watched.isEmpty { label += " \"\(watched)\"" }
                label += " \(main.site)"
                draw(tokenID, "  \"\(tokenID)\" [shape=ellipse, label=\"\(escape(label))\"];")
                // One edge per token and object, labelled with what it watches there.
                let edge =
                    token.serials.isEmpty
                    ? keptHeading(of: main)
                    : token.serials.map { propertyName($0, in: owner, registry: registry) }.joined(separator: ", ")
                draw(
                    tokenID + objectID,
                    "  \"\(tokenID)\" -> \"\(objectID)\" [label=\"\(escape(edge))\"];")
                if let observer = main.loadObserver() {
                    let observerID = "w" + DebugFormat.address(ObjectIdentifier(observer))
                    let observerLabel = "\(type(of: observer)) \(DebugFormat.address(ObjectIdentifier(observer)))"
                    draw(
                        observerID,
                        "  \"\(observerID)\" [shape=oval, style=dashed, label=\"\(escape(observerLabel))\"];")
                    draw(observerID + tokenID, "  \"\(observerID)\" -> \"\(tokenID)\";")
                }
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The name of the property with storage serial `serial` of `owner` (nil once it is gone:
    /// a token rooted there names its own property, see `Subscription.pathDescription`): `*`, an
    /// `@Observed` or synthetic (`@Computed`, …) property's name, a collection's own storage
    /// (`count`, `contents`, …), else `#serial`.
    static func propertyName(_ serial: UInt64, in owner: ObservableModelBase?, registry: Registry) -> String {
        knownPropertyName(serial, in: owner, registry: registry) ?? "#\(serial)"
    }

    /// `propertyName`, nil when nothing names the storage.
    static func knownPropertyName(_ serial: UInt64, in owner: ObservableModelBase?, registry: Registry) -> String? {
        if serial == PathStep.wildcardSerial { return "*" }
        guard let owner else { return nil }
        let table = PropertyTable(owner)
        return table.name(ofSerial: serial, in: owner)
            ?? table.synthetic.first { $0.state(in: owner).serial == serial }?.name
            ?? (owner as? any CollectionDebugNames)?.debugName(ofSerial: serial)
    }

    /// Why an object keeps a token that is attached to none of its properties, as a heading.
    static func keptHeading(of token: Subscription) -> String {
        switch token.site.kind {
        case .willChange: "before each set"
        case .binding, .pipeline: "binding destination"
        case .tell: "observer-lifetime (tell)"
        default: "kept by this object"
        }
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    // MARK: Watchpoints

    private static let handler = Locked<@Sendable (WatchpointHit) -> Void>(state: defaultHandler)

    /// What a watchpoint does without a debugger: writes the hit to standard error.
    public static let defaultHandler: @Sendable (WatchpointHit) -> Void = { hit in
        var error = StandardError()
        print(hit, to: &error)
    }

    /// Sets what watchpoints call when no debugger is attached (with one attached they raise
    /// `SIGTRAP`, which stops in the debugger at the change). Pass ``defaultHandler`` to
    /// restore logging to standard error.
    ///
    /// ```swift
    /// ObservationDebugging.setWatchpointHandler { hit in log.error("\(hit)") }
    /// ```
    ///
    /// - Parameter handler: Called on the thread of the change, right after the store, with no
    ///   lock held.
    public static func setWatchpointHandler(_ handler: @escaping @Sendable (WatchpointHit) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    /// Whether a debugger is attached to the process: `TracerPid` in `/proc/self/status` on
    /// Linux, `P_TRACED` on Darwin; false elsewhere.
    public static var isDebuggerAttached: Bool {
        switch debuggerOverride.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default: break
        }
        #if os(Linux) && (canImport(Glibc) || canImport(Musl))
            guard let file = fopen("/proc/self/status", "r") else { return false }
            defer { fclose(file) }
            var buffer = [CChar](repeating: 0, count: 256)
            while fgets(&buffer, Int32(buffer.count), file) != nil {
                let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if let traced = isTraced(statusLine: line) { return traced }
            }
            return false
        #elseif canImport(Darwin)
            var info = kinfo_proc()
            var size = MemoryLayout<kinfo_proc>.stride
            var mib: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, getpid()]
            guard sysctl(&mib, UInt32(mib.count), &info, &size, nil, 0) == 0 else { return false }
            return info.kp_proc.p_flag & P_TRACED != 0
        #else
            return false
        #endif
    }

    /// For tests: 0 asks the system, 1 says a debugger is attached, 2 says none is.
    static let debuggerOverride = Atomic<UInt8>(0)

    /// Whether a `/proc/self/status` line says the process is traced: `nil` for other lines.
    static func isTraced(statusLine line: String) -> Bool? {
        guard line.hasPrefix("TracerPid:") else { return nil }
        let pid = Substring(line).dropFirst("TracerPid:".count).trimmingWhitespace
        return pid != "0" && !pid.isEmpty
    }

    /// Called by watchpoints: stops in the debugger, or calls the handler.
    static func watchpointDidHit(_ hit: WatchpointHit) {
        if isDebuggerAttached {
            #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
                raise(SIGTRAP)
                return
            #endif
        }
        let current = handler.withLock { $0 }
        current(hit)
    }
}

#if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
    private func writeToStandardError(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int {
        write(2, bytes, count)
    }
#endif

/// Standard error as a `TextOutputStream`.
private struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            var text = string
            text.withUTF8 { bytes in _ = writeToStandardError(bytes.baseAddress, bytes.count) }
        #else
            print(string, terminator: "")
        #endif
    }
}

extension Substring {
    fileprivate var trimmingWhitespace: Substring {
        var text = self
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
