extension ObservableModelBase {
    /// A readable listing of every live token attached to this object, each once, under the
    /// properties it watches here: its kind (the call that made it: `property`, `list`,
    /// `chain`, `path`, `tracked`, `whichOf`, `tell`, `binding`, …) and address, what it watches
    /// as it was written, the root when the token is rooted elsewhere (a path or tracked token
    /// that runs through or ends here), the observer's type and address, the options it was
    /// given, queue, and creation site. Tokens this object only keeps follow under their own
    /// headings: will-change tokens, observer-lifetime (`tell`) observations not attached here,
    /// and bindings that write to this object. A path that no longer runs where it is attached
    /// (an object on it was replaced through `storedValue`, without the setter) gets a
    /// `WARNING: stale wiring` line naming the path and the objects.
    ///
    /// ```swift
    /// print(address.observationReport)
    /// // Address 0x600001234560: 2 observations
    /// //   zipCode:
    /// //     property 0x6000… "zipCode" observer: none options: [] queue: main created at App/Label.swift:8
    /// //     path 0x6000… "address.zipCode" rooted at Person 0x6000… observer: none … created at App/Header.swift:21
    /// ```
    ///
    /// - Returns: The listing; "no observations" when nothing is attached.
    /// - Complexity: O(*e* × *l*) in the edges attached here and the lengths of their paths
    ///   (each path token's paths are walked again to check for stale wiring).
    ///
    /// > Note: Safe from any thread. Property names come from the class's property table (no
    /// > values read); the stale-wiring check reads the paths' properties the way path walks do,
    /// > under each object's registry lock. No user code runs.
    public final var observationReport: String {
        let header = "\(type(of: self)) \(DebugFormat.address(ObjectIdentifier(self)))"
        guard let registry = existingRegistry else { return header + ": no observations" }
        let tokens = registry.debugTokens()
        // Tokens under a heading each: the properties they watch here, or why this object
        // keeps them. Headings in the order their first token appears.
        var headings: [String] = []
        var lines: [String: [String]] = [:]
        var warnings: [String] = []
        for token in tokens {
            let heading =
                token.serials.isEmpty
                ? ObservationDebugging.keptHeading(of: token.main)
                : token.serials.map { ObservationDebugging.propertyName($0, in: self, registry: registry) }
                    .joined(separator: ", ")
            if lines[heading] == nil { headings.append(heading) }
            lines[heading, default: []].append("    " + DebugFormat.line(for: token.main, here: registry))
            for subscription in token.attached {
                if let warning = DebugFormat.staleWarning(for: subscription) { warnings.append(warning) }
            }
        }
        let count = tokens.count
        let summary = count == 0 ? "no observations" : count == 1 ? "1 observation" : "\(count) observations"
        var report = [header + ": " + summary]
        for heading in headings { report += ["  \(heading):"] + (lines[heading] ?? []) }
        return (report + warnings).joined(separator: "\n")
    }
}

extension ModelObserving where Self: ObservableModelBase {
    /// A watchpoint: stops in the debugger when the value at `keyPath` changes, or calls the
    /// watchpoint handler when no debugger is attached (by default it logs the old and new
    /// value and where the watchpoint was set; see ``ObservationDebugging``).
    ///
    /// The key path may run through other objects: the watchpoint follows it when an object on
    /// the way is replaced, like any tracked token. It fires `.immediate`ly, on the thread of
    /// the change, so the debugger stops with the setter on the stack.
    ///
    /// ```swift
    /// let watch = person.breakOnChange(of: \.address.zipCode)
    /// person.address.zipCode = "97210"   // stops here in lldb, or logs
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: What to watch; it must read at least one `@Observed` property.
    ///   - fileID: The file the watchpoint is set in, for its log lines; leave the default.
    ///   - line: The line the watchpoint is set on, for its log lines; leave the default.
    /// - Returns: The token; release it to remove the watchpoint.
    /// - Complexity: One evaluation of `keyPath` per change of what it read.
    ///
    /// > Note: With a debugger attached the process gets `SIGTRAP`: continue from it to go on.
    public func breakOnChange<Value>(
        of keyPath: KeyPath<Self, Value>,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        let path = "\(keyPath)"
        let site = CreationSite(fileID: fileID, line: line)
        let root = "\(Self.self) \(DebugFormat.address(ObjectIdentifier(self)))"
        return _observeTracked(
            TypedKey(keyPath), read: _TrackedRead(_KeyPathAccess(keyPath)), observer: nil, options: .immediate,
            queue: .main,
            site: site.with(kind: .watchpoint, options: []), keepsLast: true, reportsMisuse: true
        ) { (_: AnyObject?, _: Self, new: Value, old: Value) in
            ObservationDebugging.watchpointDidHit(
                WatchpointHit(
                    path: path, root: root, oldValue: String(describing: old), newValue: String(describing: new),
                    site: site.description))
        }.token
    }
}
