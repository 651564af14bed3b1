/// The subscription behind `observeWillChange`: called on the setting thread right before a
/// store of any `@Observed` property of its object, with the old value still in place.
///
/// It has no edge. Its object's registry keeps it among its retained subscriptions (ended with
/// the object, like `tell` observations) and counts it in `willChangeCount`; the object is
/// marked read by paths, so its setters call `_beginExclusiveStore()` out of line before
/// storing, which finds and calls it. The setters' inline code is unchanged.
final class WillChangeSubscription: Subscription, @unchecked Sendable {  // see Subscription
    @exclusivity(unchecked) private var callback: (@Sendable (ObservableModelBase) -> Void)?

    init(root: __shared ObservableModelBase, site: CreationSite, callback: @escaping @Sendable (ObservableModelBase) -> Void) {
        self.callback = callback
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: .property, options: .immediate,
            queue: CoalescingQueue.main, wantsOldValue: false, site: site)
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        callback?(root)
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
