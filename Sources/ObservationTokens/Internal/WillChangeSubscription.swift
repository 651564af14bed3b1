/// The subscription behind `observeWillChange`: called on the setting thread right before a
/// store of any `@Observed` property of its object, with the old value still in place.
///
/// It has no edge. Its object's registry keeps it among its retained subscriptions (ended with
/// the object, like `tell` observations) and counts it in `willChangeCount`; the object is
/// marked read by paths, so its setters call `_beginExclusiveStore()` out of line before
/// storing, which finds and calls it. The setters' inline code is unchanged.
///
/// A breakpoint on a will-change token (`breakOnInvoke()`) is one too, registered after it, so
/// it runs right after it; it ends once that token has ended.
final class WillChangeSubscription: Subscription, @unchecked Sendable {  // see Subscription
    @exclusivity(unchecked) private var callback: (@Sendable (ObservableModelBase) -> Void)?
    /// For a breakpoint: the token it stops after, and its name in the debugging aids.
    private let breakpoint: (of: Subscription, label: String)?

    init(
        root: __shared ObservableModelBase, site: CreationSite,
        callback: @escaping @Sendable (ObservableModelBase) -> Void
    ) {
        self.callback = callback
        breakpoint = nil
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: .property, options: .immediate,
            queue: CoalescingQueue.main, wantsOldValue: false, site: site)
    }

    /// A breakpoint on the will-change token `watched`: stops (or calls the watchpoint
    /// handler) right after its callback.
    init(breakpointOf watched: Subscription, label: String, root: __shared ObservableModelBase, site: CreationSite) {
        callback = { _ in }
        breakpoint = (watched, label)
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: .property, options: .immediate,
            queue: CoalescingQueue.main, wantsOldValue: false, site: site)
    }

    /// Every property of its object: `*`; a breakpoint's label for a breakpoint.
    override var writtenDescription: String? { breakpoint?.label ?? "*" }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        guard let breakpoint else {
            callback?(root)
            return
        }
        guard breakpoint.of.isActive else {
            end()
            return
        }
        InvokeBreakpoint.hit(label: breakpoint.label, root: rootRegistry, site: site)
    }

    override func releaseCallback() {
        callback = nil
        rootRegistry.willChangeCount.subtract(1, ordering: .releasing)
        rootRegistry.endRetained { $0 === self }
    }

    /// Registers it with its object, which must be alive.
    func register(on object: ObservableModelBase) {
        let registry = object.registry
        registry.willChangeCount.add(1, ordering: .releasing)
        registry.retain(self)
        registry.markReadByPaths()
    }

    /// Calls the object's will-change observations, with no lock held.
    static func tell(_ registry: Registry) {
        let observers = registry.withLock { state in state.retained.compactMap { $0 as? WillChangeSubscription } }
        for observer in observers { observer.deliverNow(oldValue: nil, isChange: false) }
    }
}
