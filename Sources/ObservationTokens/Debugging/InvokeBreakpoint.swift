/// The subscription behind `breakOnInvoke()`: watches what another token watches, on its
/// queue and with its options, and stops (or calls the watchpoint handler) when that token's
/// callback has run for a change. A separate subscription, so tokens without a breakpoint pay
/// nothing for the feature.
final class InvokeBreakpoint: Subscription, @unchecked Sendable {  // see Subscription
    private let watched: Subscription
    private let label: String

    init(watching watched: Subscription, target: Target, label: String, site: CreationSite) {
        self.watched = watched
        self.label = label
        var options: ObservationOptions = []
        if watched.isImmediate { options.insert(.immediate) }
        if watched.wantsEndpoints { options.insert(.endpointChanges) }
        super.init(
            rootRegistry: watched.rootRegistry, hasObserver: watched.hasObserver, target: target,
            options: options, queue: watched.queue, wantsOldValue: false, site: site)
    }

    /// The watched token's observer: when it is gone, that token stops and so does this one.
    override func loadObserver() -> AnyObject? { watched.loadObserver() }

    override var writtenDescription: String? { label }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        guard watched.isActive else {
            end()
            return
        }
        Self.hit(label: label, root: rootRegistry, site: site)
    }

    static func hit(label: String, root: Registry, site: CreationSite) {
        ObservationDebugging.watchpointDidHit(
            WatchpointHit(
                path: label, root: DebugFormat.object(root), oldValue: "", newValue: "", site: site.description,
                isInvoke: true))
    }

    /// How a breakpoint can watch what `watched` watches.
    enum Plan {
        /// The same property of the root (a single-property token, `.mutations`).
        case property(serial: UInt64)
        /// The same paths from the root (lists, chains, string paths, `whichOf`, collection
        /// tokens, single-source bindings).
        case paths([ObservedPath])
        /// Right after it, before each set of the root (a will-change token).
        case willChange
        /// None: the misuse message's reason and fix.
        case impossible(String)
    }

    /// The plan for a live token, from what it is attached to.
    static func plan(for watched: Subscription) -> Plan {
        if watched.site.kind == .willChange { return .willChange }
        if watched.hasDebugParts {
            return .impossible(
                "its parts (one per source, or one per side of a two-way binding) deliver it too, and they may watch other objects than its root. Use breakOnChange(of:) on a source instead, or put a breakpoint in the binding's own code (a map or onApply stage)."
            )
        }
        if watched.isProperty {
            if let serial = watched.attachedPropertySerial { return .property(serial: serial) }
            // A binding's hub: only ever scheduled by its parts, which may be on other objects.
            return .impossible(
                "it has no edge of its own: its parts (one per source, or one per side of a two-way binding) schedule it, and they may watch other objects than its root. Use breakOnChange(of:) on a source instead, or put a breakpoint in the binding's own code (a map or onApply stage)."
            )
        }
        if !watched.paths.isEmpty { return .paths(watched.paths) }
        // A tracked token: its edges are what its last evaluation read.
        return .impossible(
            "what a tracked token watches changes with each evaluation, so it can't have a breakpoint. Use breakOnChange(of:) on its root instead."
        )
    }
}

extension ObservationToken {
    /// A breakpoint on this token's callback: stops in the debugger (`SIGTRAP`) each time the
    /// callback has run for a change, or calls the watchpoint handler when no debugger is
    /// attached (see ``ObservationDebugging``).
    ///
    /// The breakpoint is a token of its own, watching what this token watches on the same queue
    /// with the same options: it stops in the same drain as this token's callback, next to it —
    /// right after it as a rule; right before it when the breakpoint reuses the place of an
    /// observation that ended earlier, and for an `.whichOf` token (whose callback is
    /// queued by its parts) — and stops too once this token has ended. A will-change token's
    /// breakpoint stops right after its callback, inside the setter. This token itself is not
    /// changed, so tokens without breakpoints pay nothing.
    ///
    /// ```swift
    /// let token = address.observe(\.zipCode) { address in render(address) }
    /// let breakpoint = token.breakOnInvoke()
    /// ```
    ///
    /// Every kind of token can have one except two, whose callbacks no single watch can
    /// follow: a tracked token (what it watches changes with each evaluation: use
    /// `breakOnChange(of:)` on its root instead) and a binding with several sources or two sides
    /// (use `breakOnChange(of:)` on a source). For those it traps in debug builds, naming the
    /// fix, and returns an ended token in release builds.
    ///
    /// - Parameters:
    ///   - fileID: The file the breakpoint is set in, for its log lines; leave the default.
    ///   - line: The line the breakpoint is set on, for its log lines; leave the default.
    /// - Returns: The breakpoint's token; release it to remove the breakpoint. An ended token
    ///   if this token has ended.
    /// - Complexity: Like creating this token again.
    public func breakOnInvoke(fileID: StaticString = #fileID, line: UInt = #line) -> ObservationToken {
        let site = CreationSite(fileID: fileID, line: line, kind: .breakpoint, options: [])
        let watched = subscription
        guard watched.isActive, let root = watched.rootRegistry.weakOwner else {
            return ObservationToken(subscription: InvokeBreakpoint.ended(watching: watched, site: site))
        }
        let label =
            "token \(DebugFormat.address(ObjectIdentifier(watched))) \"\(DebugFormat.watched(watched))\""
        let breakpoint: Subscription
        switch InvokeBreakpoint.plan(for: watched) {
        case .impossible(let reason):
            _reportMisuse(
                "breakOnInvoke() at \(site) on a \(DebugFormat.kind(of: watched)) token (created at \(watched.site)): \(reason)"
            )
            return ObservationToken(subscription: InvokeBreakpoint.ended(watching: watched, site: site))
        case .willChange:
            let willChange = WillChangeSubscription(breakpointOf: watched, label: label, root: root, site: site)
            willChange.register(on: root)
            breakpoint = willChange
        case .property(let serial):
            let invoke = InvokeBreakpoint(watching: watched, target: .property, label: label, site: site)
            _ = invoke.start(serial: serial)
            breakpoint = invoke
        case .paths(let paths):
            let invoke = InvokeBreakpoint(watching: watched, target: .paths(paths), label: label, site: site)
            _ = invoke.start(root: root)
            breakpoint = invoke
        }
        return withExtendedLifetime(root) { ObservationToken(subscription: breakpoint) }
    }
}

extension InvokeBreakpoint {
    /// A breakpoint that never stops, for tokens that have ended or can't have one.
    static func ended(watching watched: Subscription, site: CreationSite) -> InvokeBreakpoint {
        let breakpoint = InvokeBreakpoint(watching: watched, target: .paths([]), label: "", site: site)
        breakpoint.end()
        return breakpoint
    }
}
