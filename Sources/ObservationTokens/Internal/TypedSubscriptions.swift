// The subscriptions that own a callback, one class per callback shape.
//
// Each stores the caller's closure with the caller's own types. Converting a
// `(Counter) -> Void` to `(ObservableModel) -> Void` with `unsafeBitCast` would make the compiler
// wrap it in reabstraction thunks: one more allocation per token and two more calls per delivery.
//
// The root is taken `__shared` (borrowed): only its registry is kept, and a retain of a model
// goes through its side table (models have weak references). `borrowing` would say the same, but
// Swift 6.3 rejects reading `registry` through the generic type from a `borrowing` parameter.

/// A subscription whose callback receives the observed object.
@usableFromInline
final class _ModelSubscription<Model: ObservableModelBase>: Subscription, @unchecked Sendable {  // see Subscription
    /// The callback, in a noncopyable wrapper: a delivery borrows it where it is stored (a
    /// `switch` over a noncopyable value borrows it), so its context is not retained and
    /// released around each delivery, as a closure loaded from a `var` is. Safe while it runs:
    /// `releaseCallback` runs only with no delivery running.
    private struct Callback: ~Copyable {
        let call: @Sendable (Model) -> Void
    }

    // `Optional<…>`, not `…?`: no implicit nil to overwrite, so `init` stores the argument.
    @exclusivity(unchecked) private var callback: Optional<Callback>

    @usableFromInline
    init(
        root: __shared Model, target: Target, options: ObservationOptions, queue: CoalescingQueue, site: CreationSite,
        callback: @escaping @Sendable (Model) -> Void
    ) {
        // The registry first: with no call after the callback is stored, storing it moves the
        // argument (a call in between made it a retain and a release).
        let rootRegistry = root.registry
        self.callback = Callback(call: consume callback)
        super.init(
            rootRegistry: rootRegistry, hasObserver: false, target: target, options: options, queue: queue,
            wantsOldValue: false, site: site)
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        // The root is always a `Model`: it is the object this subscription was created on.
        switch callback {
        case .some(let callback): callback.call(unsafeDowncast(root, to: Model.self))
        case .none: break
        }
    }

    override func releaseCallback() {
        callback = nil
    }
}

/// Calls `body` with `observer`, which the caller holds (a delivery loaded it), as an
/// `Observer`, borrowed. A plain `unsafeDowncast` passed on is retained and released once more
/// around the call, and an observer, weakly referenced, takes the runtime's slow path for both
/// (≈ 130 instructions per delivery).
/// Nil, calling nothing, without an observer.
@inlinable @inline(__always) @discardableResult
func _withObserver<Observer: AnyObject, Result>(
    _ observer: AnyObject?, as _: Observer.Type, _ body: (Observer) -> Result
) -> Result? {
    // Not `guard let`: the binding is a copy, which the optimizer keeps (a retain and a release).
    guard observer != nil else { return nil }
    return Unmanaged<Observer>.fromOpaque(Unmanaged.passUnretained(observer.unsafelyUnwrapped).toOpaque())
        ._withUnsafeGuaranteedRef(body)
}

/// A subscription whose callback receives the observer and the observed object.
@usableFromInline
// `@unchecked Sendable`: see `Subscription`.
final class _ObserverSubscription<Observer: AnyObject, Model: ObservableModelBase>: Subscription, @unchecked Sendable {
    /// Stored as in `_ModelSubscription`.
    private struct Callback: ~Copyable {
        let call: @Sendable (Observer, Model) -> Void
    }

    @exclusivity(unchecked) private var callback: Optional<Callback>
    private let observer: WeakReference

    @usableFromInline
    init(
        root: __shared Model, observer: Observer, target: Target, options: ObservationOptions, queue: CoalescingQueue,
        site: CreationSite, callback: @escaping @Sendable (Observer, Model) -> Void
    ) {
        let rootRegistry = root.registry
        self.callback = Callback(call: consume callback)
        self.observer = WeakReference(observer)
        super.init(
            rootRegistry: rootRegistry, hasObserver: true, target: target, options: options, queue: queue,
            wantsOldValue: false, site: site)
    }

    override func loadObserver() -> AnyObject? { observer.load() }

    override func observerType() -> AnyObject.Type? { observer.loadType() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        // Deliveries pass the observer given at creation (an `Observer`), alive.
        _withObserver(observer, as: Observer.self) { observer in
            switch callback {
            case .some(let callback): callback.call(observer, unsafeDowncast(root, to: Model.self))
            case .none: break
            }
        }
    }

    override func releaseCallback() {
        callback = nil
    }
}

/// A subscription with a type-erased callback, for the entry points that build their own
/// closure (change tokens, chains delivering their endpoint).
final class ErasedSubscription: Subscription, @unchecked Sendable {  // see Subscription
    /// Stored as in `_ModelSubscription`.
    private struct Callback: ~Copyable {
        let call: _GeneralCallback
    }

    // `observer` before `callback`: the other subscriptions store their callback first, and
    // with this one stored there too, the compiler merged their identical `releaseCallback`s
    // into one, which the others reached through a jump (≈ 4 instructions per token ended).
    private let observer: WeakReference?
    @exclusivity(unchecked) private var callback: Optional<Callback>

    init(
        root: __shared ObservableModelBase, observer: AnyObject?, target: Target, options: ObservationOptions,
        queue: CoalescingQueue, wantsOldValue: Bool, site: CreationSite, callback: @escaping _GeneralCallback
    ) {
        self.callback = Callback(call: callback)
        self.observer = observer.map(WeakReference.init)
        super.init(
            rootRegistry: root.registry, hasObserver: observer != nil, target: target, options: options,
            queue: queue, wantsOldValue: wantsOldValue, site: site)
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    override func observerType() -> AnyObject.Type? { observer?.loadType() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        // A stored nil, passed by address: a `nil` literal here is built on the stack and
        // destroyed through the existential's witnesses after the call (≈ 55 instructions).
        switch callback {
        case .some(let callback): callback.call(observer, root, noValue)
        case .none: break
        }
    }

    override func invoke(observer: AnyObject?, root: ObservableModelBase, oldValue: Any?) {
        switch callback {
        case .some(let callback): callback.call(observer, root, oldValue)
        case .none: break
        }
    }

    /// A `.endpointChanges` delivery: the third argument is the endpoint it compared, as an
    /// ``EndpointDelivery`` (these subscriptions never take old values and endpoints both).
    override func invoke(observer: AnyObject?, root: ObservableModelBase, endpoint: ObservedPath.Endpoint) {
        switch callback {
        case .some(let callback): callback.call(observer, root, EndpointDelivery(endpoint: endpoint))
        case .none: break
        }
    }

    override func releaseCallback() {
        callback = nil
    }
}

/// The `nil` old value that `ErasedSubscription` passes, stored once.
nonisolated(unsafe) private let noValue: Any? = nil

/// A type-erased callback: the observer (nil without one), the observed object, and the old
/// value for change tokens (nil when unknown).
@usableFromInline
typealias _GeneralCallback = @Sendable (_ observer: AnyObject?, _ root: ObservableModelBase, _ oldValue: Any?) -> Void

/// What a `.endpointChanges` delivery passes to a type-erased callback in place of an old
/// value: the endpoint it compared, so the callback can deliver that very value.
struct EndpointDelivery {
    let endpoint: ObservedPath.Endpoint

    /// The endpoint as a `Value`: nil if it was unreachable and `Value` can't say so.
    func value<Value>(as _: Value.Type) -> Value? {
        switch endpoint {
        case .value(let value): value as? Value
        case .unreachable: (Any?.none as Any) as? Value
        }
    }
}
