/// The subscription behind `breakOnInvoke()`: watches what another token watches, on its
/// queue and with its options, and stops (or calls the watchpoint handler) when that token's
/// callback has run for a change. A separate subscription, so tokens without a breakpoint pay
/// nothing for the feature.
final class InvokeBreakpoint: Subscription, @unchecked Sendable {  // see Subscription
    private let watched: Subscription
    private let label: String

    init(watching watched: Subscription, paths: [ObservedPath], label: String, site: CreationSite) {
        self.watched = watched
        self.label = label
        var options: ObservationOptions = []
        if watched.isImmediate { options.insert(.immediate) }
        if watched.wantsEndpoints { options.insert(.endpointChanges) }
        super.init(
            rootRegistry: watched.rootRegistry, hasObserver: watched.hasObserver, target: .paths(paths),
            options: options, queue: watched.queue, wantsOldValue: false, site: site)
    }

    /// The watched token's observer: when it is gone, that token stops and so does this one.
    override func loadObserver() -> AnyObject? { watched.loadObserver() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        guard watched.isActive else {
            end()
            return
        }
        ObservationDebugging.watchpointDidHit(
            WatchpointHit(
                path: label, root: DebugFormat.object(rootRegistry), oldValue: "", newValue: "",
                site: site.description, isInvoke: true))
    }

    /// The paths to watch for `watched`: its own, or for a single-property token the property
    /// it is attached to, by name. Nil for tracked tokens (what they watch changes with each
    /// evaluation) and ended tokens.
    static func paths(for watched: Subscription) -> [ObservedPath]? {
        guard watched.isActive, !String(describing: type(of: watched)).hasPrefix("TrackedSubscription") else {
            return nil
        }
        if !watched.isProperty { return watched.paths.isEmpty ? nil : watched.paths }
        guard let root = watched.rootRegistry.weakOwner else { return nil }
        let snapshot = watched.rootRegistry.debugSnapshot()
        guard
            let property = snapshot.properties.first(where: { property in
                property.members.contains { $0.subscription === watched }
            }),
            let name = PropertyTable(root).name(ofSerial: property.serial, in: root)
        else { return nil }
        return [ObservedPath(step: .name(name))]
    }
}

extension ObservationToken {
    /// A breakpoint on this token's callback: stops in the debugger (`SIGTRAP`) each time the
    /// callback has run for a change, or calls the watchpoint handler when no debugger is
    /// attached (see ``ObservationDebugging``).
    ///
    /// The breakpoint is a token of its own, watching what this token watches on the same queue
    /// with the same options: it stops in the same drain as this token's callback, next to it —
    /// right after it for a single-property token; for a path token right after it as a rule,
    /// right before it when the breakpoint reuses the place of a path observation that ended
    /// earlier — and stops too once this token has ended. This token itself is not changed, so tokens without breakpoints pay nothing.
    ///
    /// ```swift
    /// let token = address.observe(\.zipCode) { address in render(address) }
    /// let breakpoint = token.breakOnInvoke()
    /// ```
    ///
    /// - Parameters:
    ///   - fileID: The file the breakpoint is set in, for its log lines; leave the default.
    ///   - line: The line the breakpoint is set on, for its log lines; leave the default.
    /// - Returns: The breakpoint's token; release it to remove the breakpoint. An ended token
    ///   if this token has ended. A tracked token can't have a breakpoint (what it watches
    ///   changes with each evaluation: use `breakOnChange(of:)` on its root instead): that
    ///   traps in debug builds and returns an ended token in release builds.
    /// - Complexity: Like creating this token again.
    public func breakOnInvoke(fileID: StaticString = #fileID, line: UInt = #line) -> ObservationToken {
        let site = CreationSite(fileID: fileID, line: line)
        if String(describing: type(of: subscription)).hasPrefix("TrackedSubscription") {
            _reportMisuse(
                "breakOnInvoke() at \(site) on a tracked token (created at \(subscription.site)): what it watches changes with each evaluation, so it can't have a breakpoint. Use breakOnChange(of:) on its root instead."
            )
        }
        guard let paths = InvokeBreakpoint.paths(for: subscription),
            let root = subscription.rootRegistry.weakOwner
        else {
            return ObservationToken(subscription: InvokeBreakpoint.ended(watching: subscription, site: site))
        }
        let label = "token \(DebugFormat.address(ObjectIdentifier(subscription))) \"\(subscription.pathDescription)\""
        let breakpoint = InvokeBreakpoint(watching: subscription, paths: paths, label: label, site: site)
        let token = ObservationToken(subscription: breakpoint)
        _ = breakpoint.start(root: root)
        return withExtendedLifetime(root) { token }
    }
}

extension InvokeBreakpoint {
    /// A breakpoint that never stops, for tokens that can't have one.
    static func ended(watching watched: Subscription, site: CreationSite) -> InvokeBreakpoint {
        let breakpoint = InvokeBreakpoint(watching: watched, paths: [], label: "", site: site)
        breakpoint.end()
        return breakpoint
    }
}
