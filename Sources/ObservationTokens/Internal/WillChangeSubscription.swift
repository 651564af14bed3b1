/// The subscription behind `observeWillChange`: called on the setting thread right before a
/// store of one property, with the old value still in place (KVO's `.prior`).
///
/// It has no edge. Its object's registry keeps it among its retained subscriptions (ended with
/// the object, like `tell` observations) and counts it in `willChangeCount`; the object is
/// marked read by paths, so its setters call `_beginStore(serial:)` out of line before storing,
/// which finds and calls it.
final class WillChangeSubscription: Subscription, @unchecked Sendable {  // see Subscription
    /// Nil for a key path that is not an `@Observed` property: such a one is never registered.
    let serial: UInt64?
    @exclusivity(unchecked) private var callback: (@Sendable (ObservableModel) -> Void)?

    init(root: __shared ObservableModel, serial: UInt64?, site: CreationSite, callback: @escaping @Sendable (ObservableModel) -> Void) {
        self.serial = serial
        self.callback = callback
        super.init(
            rootRegistry: root.registry, hasObserver: false, target: .property, options: .immediate,
            queue: CoalescingQueue.main, wantsOldValue: false, site: site)
    }

    override func invoke(observer: AnyObject?, root: ObservableModel) {
        callback?(root)
    }

    override func releaseCallback() {
        callback = nil
        guard serial != nil else { return }
        rootRegistry.willChangeCount.subtract(1, ordering: .releasing)
        rootRegistry.endRetained { $0 === self }
    }

    /// Registers it with its object, which must be alive.
    func register(on object: ObservableModel) {
        let registry = object.registry
        registry.willChangeCount.add(1, ordering: .releasing)
        registry.retain(self)
        registry.markReadByPaths()
    }

    /// Calls the will-change observations of `serial`, with no lock held.
    static func tell(_ registry: Registry, serial: UInt64) {
        let observers = registry.withLock { state in
            state.retained.compactMap { $0 as? WillChangeSubscription }.filter { $0.serial == serial }
        }
        for observer in observers { observer.deliverNow(oldValue: nil, isChange: false) }
    }
}
