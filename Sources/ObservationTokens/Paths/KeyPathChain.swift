/// A typed key path of several segments, rooted at an ``ObservableModel``, that a token can
/// observe as a whole.
///
/// Build it from `@Observed` properties, one segment at a time. Each segment is checked by the
/// compiler; optional intermediates are looked through, and make the endpoint optional:
///
/// ```swift
/// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
/// // KeyPathChain<UserCache, String?>
/// let token = cache.observe(zipCode, observer: self) { label, cache in … }
/// ```
///
/// Swift can't take a composed key path such as `\.currentUser?.address?.zipCode` apart at
/// run time, which is why the chain keeps its segments. Observing the composed key path
/// itself also works (a tracked token, re-evaluated at each delivery); a chain re-walks its
/// segments inside the setter instead, which is cheaper when middle objects are replaced
/// often. Every segment must be one `@Observed` property: one that is not (a `let`, a plain
/// `var`, a composed key path such as `\.currentUser?.address`) traps in debug builds, with a
/// message that says what the segment reads and how to write it.
///
/// `@unchecked Sendable`: a chain holds only key paths, and closures that apply them.
public struct KeyPathChain<Root: ObservableModelBase, Value>: @unchecked Sendable {
    let steps: [PathStep]
    /// The endpoint now; nil when an optional intermediate is nil.
    @usableFromInline
    let evaluate: (Root) -> Value
    /// Calls a delivery's callback with the endpoint (`ChainSubscription.invoke`); made where the
    /// chain is spelled, where it is specialized, and it captures nothing.
    @usableFromInline
    let deliver: Deliver

    /// `evaluate`, then the callback with its value. Called from the subscription's generic
    /// code, a plain local of the endpoint's type was handled through its value witnesses: a
    /// destroy (a call of ≈ 30 instructions) for trivial values too (`Int?`, `Bool`, `Double`).
    @usableFromInline
    typealias Deliver = (
        _ evaluate: (Root) -> Value, _ root: Root, _ observer: AnyObject?,
        _ callback: @Sendable (AnyObject?, Root, Value) -> Void
    ) -> Void

    @inlinable @inline(__always)
    static var deliverer: Deliver {
        { evaluate, root, observer, callback in callback(observer, root, evaluate(root)) }
    }

    /// Adds the segment read by `segment` to `previous` (nil for the first segment).
    ///
    /// The inlinable initializers build `reader` and `evaluate` in the caller's module, where
    /// they are specialized; this part, which needs the key path object, stays here.
    @usableFromInline
    init<Previous, Model: ObservableModelBase, Next>(
        appendingTo previous: KeyPathChain<Root, Previous>?,
        segment: @escaping Segment<Model, Next>,
        reader: @escaping (ObservableModelBase, AnyKeyPath) -> Any?,
        modelReader: ((ObservableModelBase, AnyKeyPath) -> ObservableModelBase??)?,
        evaluate: @escaping (Root) -> Value, deliver: @escaping Deliver
    ) {
        var keyPath: AnyKeyPath?
        _ = segment(nil, &keyPath)
        let key = PathStep.key(
            TypedKey(keyPath: KeyPathIdentity.canonical(keyPath!), reader: reader, modelReader: modelReader))
        steps = previous.map { $0.steps + [key] } ?? [key]
        self.evaluate = evaluate
        self.deliver = deliver
    }

    /// Starts a chain with an `@Observed` property of `Root`.
    @inlinable @inline(__always)
    public init(_ keyPath: KeyPath<Root, Value>) {
        let segment = Self.segment(keyPath)
        self.init(
            appendingTo: KeyPathChain<Root, Value>?.none, segment: segment, reader: Self.reader(segment),
            modelReader: Self.modelReader(segment),
            evaluate: { Self.readExclusively(segment, on: $0) }, deliver: Self.deliverer)
    }

    /// The number of segments.
    public var count: Int { steps.count }

    /// Appends a segment read on a non-optional model.
    @inlinable @inline(__always)
    public func then<Next>(_ keyPath: KeyPath<Value, Next>) -> KeyPathChain<Root, Next>
    where Value: ObservableModelBase {
        let segment = Self.segment(keyPath)
        let read = Self.exclusiveRead(segment)
        let evaluate = _evaluate
        return KeyPathChain<Root, Next>(
            appendingTo: self, segment: segment, reader: Self.reader(segment), modelReader: Self.modelReader(segment),
            evaluate: { read(evaluate($0)) }, deliver: KeyPathChain<Root, Next>.deliverer)
    }

    /// Appends a segment read on an optional model; the endpoint becomes optional.
    @inlinable @inline(__always)
    public func then<Model: ObservableModelBase, Next>(_ keyPath: KeyPath<Model, Next>) -> KeyPathChain<Root, Next?>
    where Value == Model? {
        let segment = Self.segment(keyPath)
        let read = Self.exclusiveRead(segment)
        let evaluate = _evaluate
        return KeyPathChain<Root, Next?>(
            appendingTo: self, segment: segment, reader: Self.reader(segment), modelReader: Self.modelReader(segment),
            evaluate: { evaluate($0).map(read) }, deliver: KeyPathChain<Root, Next?>.deliverer)
    }

    /// Appends an optional segment read on an optional model; optionals are flattened.
    @inlinable @inline(__always)
    public func then<Model: ObservableModelBase, Next>(_ keyPath: KeyPath<Model, Next?>) -> KeyPathChain<Root, Next?>
    where Value == Model? {
        let segment = Self.segment(keyPath)
        let read = Self.exclusiveRead(segment)
        let evaluate = _evaluate
        return KeyPathChain<Root, Next?>(
            appendingTo: self, segment: segment, reader: Self.reader(segment), modelReader: Self.modelReader(segment),
            evaluate: { evaluate($0).flatMap(read) }, deliver: KeyPathChain<Root, Next?>.deliverer)
    }

    @usableFromInline
    var _evaluate: (Root) -> Value { evaluate }

    /// Reads one segment on a model, or, given nil, hands out its key path.
    ///
    /// The closure is the key path's only user. When it is built from a key path literal (the
    /// inlinable callers are inlined into the code that spells the chain), the optimizer then
    /// moves the literal into the closure and replaces the key path application with a direct
    /// getter call: a few dozen instructions instead of about a thousand in the key path runtime.
    @usableFromInline
    typealias Segment<Model, Next> = (Model?, inout AnyKeyPath?) -> Next?

    ///
    /// `Model` is a class here (and in `read` and `keyPath(of:)`): a `Model?` of an
    /// unconstrained `Model` is passed through memory, and the read copied the model out of it
    /// (a retain and a release around every getter call that the optimizer left in).
    @inlinable @inline(__always)
    static func segment<Model: ObservableModelBase, Next>(
        _ keyPath: __owned KeyPath<Model, Next>
    ) -> Segment<Model, Next> {
        { model, keyPathOut in
            guard let model else {
                keyPathOut = keyPath
                return nil
            }
            return model[keyPath: keyPath]
        }
    }

    /// The key path `segment` reads.
    @inlinable @inline(__always)
    static func keyPath<Model: ObservableModelBase, Next>(of segment: Segment<Model, Next>) -> AnyKeyPath {
        var keyPath: AnyKeyPath?
        _ = segment(nil, &keyPath)
        return keyPath.unsafelyUnwrapped
    }

    /// A path walk's reader for `segment`: nil for objects of other types.
    @inlinable @inline(__always)
    static func reader<Model: ObservableModelBase, Next>(
        _ segment: @escaping Segment<Model, Next>
    ) -> (ObservableModelBase, AnyKeyPath) -> Any? {
        { object, _ in
            // A class check on the metadata, cheaper than `as?` (a generic dynamic cast).
            guard object is Model else { return nil }
            let next: Next = read(segment, on: unsafeDowncast(object, to: Model.self))
            return next
        }
    }

    /// `reader` for a walk through the middle of the chain: the model the value holds, read in
    /// specialized code and reinterpreted by the layout its type was found to have, with no
    /// `Any` box and no cast per read (see `TypedKey.modelReader`). Nil for values that hold no
    /// model class (the walk then reads through `reader`).
    @inlinable @inline(__always)
    static func modelReader<Model: ObservableModelBase, Next>(
        _ segment: @escaping Segment<Model, Next>
    ) -> ((ObservableModelBase, AnyKeyPath) -> ObservableModelBase??)? {
        switch _ModelValueKind.of(Next.self) {
        case .model, .optionalModel:
            // `Item` and `Item?` are both laid out as `ObservableModel?` (a nullable reference).
            return { object, _ in
                guard object is Model else { return nil }
                let next = read(segment, on: unsafeDowncast(object, to: Model.self))
                return .some(unsafeBitCast(next, to: ObservableModelBase?.self))
            }
        case .other:
            return nil
        }
    }

    /// The value a delivery passes to the callback: the endpoint a `.endpointChanges` delivery
    /// compared (`delivered`), or the chain read now.
    ///
    /// The endpoint's route is a function of its own: generic code that may form a `Value?`
    /// looks up `Optional<Value>`'s metadata on entry (≈ 300 instructions), which every
    /// delivery without an endpoint paid for nothing.
    @inlinable
    func deliveredValue(_ delivered: Any?, on root: Root) -> Value {
        // Compared, not bound: binding copies the existential (≈ 75 instructions), and
        // destroying the copy costs as much again.
        if delivered == nil { return evaluate(root) }
        return carriedValue(delivered, on: root)
    }

    @usableFromInline @inline(never)
    func carriedValue(_ delivered: Any?, on root: Root) -> Value {
        (delivered as? EndpointDelivery)?.value(as: Value.self) ?? evaluate(root)
    }

    @inlinable @inline(__always)
    static func read<Model: ObservableModelBase, Next>(_ segment: Segment<Model, Next>, on model: Model) -> Next {
        var unused: AnyKeyPath?
        return segment(model, &unused).unsafelyUnwrapped
    }

    /// `readExclusively` of `segment`, as a closure that captures nothing else.
    ///
    /// A segment appended with `then` is read through this closure, not in the closure that
    /// also captures the previous segments' evaluation: the optimizer folds a segment's key path
    /// into the property's getter only in a closure whose captures are all known where the chain
    /// is spelled; one that also captures a closure made at run time calls the segment unfolded,
    /// which instantiates the key path object on every read (≈ 80 instructions and a release).
    @inlinable @inline(__always)
    static func exclusiveRead<Model: ObservableModelBase, Next>(
        _ segment: @escaping Segment<Model, Next>
    ) -> (Model) -> Next {
        { readExclusively(segment, on: $0) }
    }

    /// `read` for the endpoint a callback receives: it holds the model's store bit
    /// (`ObservableModel._readExclusively`), since the delivering thread may not own the
    /// properties on the way. (Path walks read through `reader` under the same bit already.)
    @inlinable @inline(__always)
    static func readExclusively<Model: ObservableModelBase, Next>(_ segment: Segment<Model, Next>, on model: Model)
        -> Next
    {
        model._readExclusively { read(segment, on: model) }
    }

    /// The chain's path, shared by every token of the chain (`ObservedPath.chainPaths`).
    var path: ObservedPath { paths[0] }

    /// `[path]`, one array shared by every token of the chain.
    var paths: [ObservedPath] { ObservedPath.chainPaths(steps) }

    /// `paths`, and the chain's evaluation for a token, both shared by every token of chains of
    /// the same key paths (and types): a token then keeps one reference to a shared object, where
    /// it kept the chain's own `evaluate` (a closure context, each holding the previous
    /// segment's) to free at its end.
    var shared: (paths: [ObservedPath], evaluator: ChainEvaluator<Root, Value>) {
        ObservedPath.chainPaths(steps) { ChainEvaluator(evaluate, deliver: deliver) }
    }
}

/// A typed chain's `evaluate`, in an object that tokens of chains with the same key paths share
/// (`KeyPathChain.shared`).
///
/// `@unchecked Sendable`: it holds only a closure that applies key paths.
final class ChainEvaluator<Root: ObservableModelBase, Value>: @unchecked Sendable {
    let evaluate: (Root) -> Value
    let deliver: KeyPathChain<Root, Value>.Deliver

    init(_ evaluate: @escaping (Root) -> Value, deliver: @escaping KeyPathChain<Root, Value>.Deliver) {
        self.evaluate = evaluate
        self.deliver = deliver
    }

    /// The value a `.endpointChanges` delivery passes: the endpoint it compared, or the chain
    /// read now if that endpoint can't be a `Value`.
    ///
    /// Apart from the plain delivery: generic code that may form a `Value?` looks up
    /// `Optional<Value>`'s metadata on entry (≈ 300 instructions), which every delivery without
    /// an endpoint would pay for nothing.
    @inline(never)
    func value(at endpoint: ObservedPath.Endpoint, on root: Root) -> Value {
        EndpointDelivery(endpoint: endpoint).value(as: Value.self) ?? evaluate(root)
    }
}

/// The subscription of a typed chain's token (`ObservationSource.chain`): the delivery's
/// callback, and the chain's evaluation shared with every token of chains of the same key paths,
/// which gives the callback the endpoint.
///
/// The evaluation is kept here, not in a closure around the delivery's callback, so a chain token
/// frees one closure context at its end (the one its `observe` form made around the caller's
/// callback), whichever form made it: with or without an observer, on the main actor, through
/// `.changes(chain)`.
///
/// `@unchecked Sendable`: see `Subscription`.
final class ChainSubscription<Root: ObservableModelBase, Value>: Subscription, @unchecked Sendable {
    /// The callback, in a noncopyable wrapper: a delivery borrows it where it is stored (a
    /// `switch` over a noncopyable value borrows it), so its context is not retained and
    /// released around each delivery, as a plain closure loaded from a `var` is. Borrowing it
    /// while the callback runs is safe: the callback is released only by `releaseCallback`,
    /// which runs when no delivery is running (`Subscription.end`, `finishDelivery`).
    private struct Callback: ~Copyable {
        let call: @Sendable (AnyObject?, Root, Value) -> Void
    }

    // Stored as in `_ModelSubscription`.
    @exclusivity(unchecked) private var callback: Optional<Callback>
    private let evaluator: ChainEvaluator<Root, Value>
    private let observer: WeakReference?
    /// The extras (the path, its edges and their lock), in this object's allocation: a chain
    /// token always has them (see `SubscriptionExtras`).
    @exclusivity(unchecked) private var extrasInPlace: SubscriptionExtrasStorage

    init(
        root: __shared Root, observer: AnyObject?, paths: [ObservedPath], evaluator: ChainEvaluator<Root, Value>,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite,
        callback: @escaping @Sendable (AnyObject?, Root, Value) -> Void
    ) {
        let rootRegistry = root.registry
        self.callback = Callback(call: consume callback)
        self.evaluator = evaluator
        self.observer = observer.map(WeakReference.init)
        extrasInPlace = SubscriptionExtrasStorage(paths: paths)
        super.init(
            rootRegistry: rootRegistry, hasObserver: observer != nil, target: .paths(paths), options: options,
            queue: queue, wantsOldValue: false, site: site, keepsExtrasInPlace: true)
        withUnsafeMutablePointer(to: &extrasInPlace) { placeExtras($0) }
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    override func observerType() -> AnyObject.Type? { observer?.loadType() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        // The root is always a `Root`: it is the object this subscription was created on. The
        // endpoint is read now, each segment under its object's store bit (see
        // `KeyPathChain.readExclusively`).
        let root = unsafeDowncast(root, to: Root.self)
        // The chain's `deliver`, made where the chain was spelled, reads the endpoint and calls
        // the callback with it, so no generic code here handles a `Value` (a local of it was
        // destroyed through its value witness, ≈ 30 instructions, for `Int?` too). The callback
        // is borrowed where it is stored (see `Callback`); a delivery is running, so nothing
        // else releases it meanwhile (see `releaseCallback`). The evaluator is borrowed (`self`
        // holds it, a `let`): called through the reference, its closures' context was retained
        // and released too.
        Unmanaged.passUnretained(evaluator)._withUnsafeGuaranteedRef { evaluator in
            switch callback {
            case .some(let callback): evaluator.deliver(evaluator.evaluate, root, observer, callback.call)
            case .none: break
            }
        }
    }

    /// A `.endpointChanges` delivery: the endpoint it compared.
    override func invoke(observer: AnyObject?, root: ObservableModelBase, endpoint: ObservedPath.Endpoint) {
        let root = unsafeDowncast(root, to: Root.self)
        switch callback {
        case .some(let callback): callback.call(observer, root, evaluator.value(at: endpoint, on: root))
        case .none: break
        }
    }

    override func releaseCallback() {
        callback = nil
    }
}

extension KeyPathChain {
    /// Starts a token of this chain on `root` with the subscription `make` builds from the
    /// chain's shared paths and evaluation, the options (none for a chain whose segments fail
    /// their check: the token ends at once) and the creation site.
    func startToken(
        on root: Root, options: ObservationOptions, fileID: StaticString, line: UInt,
        _ make: (
            _ paths: [ObservedPath], _ evaluator: ChainEvaluator<Root, Value>, _ options: ObservationOptions,
            _ site: CreationSite
        ) -> Subscription
    ) -> ObservationToken {
        let isValid = root.checkChains([steps], fileID: fileID, line: line)
        let (paths, evaluator) = shared
        let subscription = make(
            paths, evaluator, isValid ? options : [],
            CreationSite(fileID: fileID, line: line, kind: .chain, options: options))
        let token = ObservationToken(subscription: subscription)
        root.start(subscription)
        if !isValid { token.invalidate() }
        return token
    }
}

extension Sequence<PathStep> {
    /// A typed chain's segment that is not one `@Observed` property of the object it is applied
    /// to (a `let`, a plain `var`, a composed key path): its position (1-based), key and that
    /// object, checked along the objects the chain reaches from `root` now. A chain like that
    /// would never watch past the segment. Segments beyond a nil (or non-model) intermediate
    /// can't be checked yet.
    ///
    /// Reads as a path walk does (`PathStep.readForWalk(on:)`: under each object's registry
    /// lock and store bit), since other threads may be setting the properties the chain reads
    /// while a token is made: a plain read raced with their setters (a crash).
    func firstMisfitSegment(from root: ObservableModelBase) -> (
        position: Int, key: TypedKey, object: ObservableModelBase
    )? {
        var object = root
        for (index, step) in enumerated() {
            guard case .typed(let box) = step else { return nil }
            guard let (_, value) = step.readForWalk(on: object) else {
                // Nothing read: a nil value, or a segment that is not one `@Observed` property.
                // A key this object or its class has resolved is one: the value was nil.
                if object.existingRegistry?.cachedSerial(for: box.key.keyPath) != nil
                    || PropertyTable(object).entry(forKeyPath: box.key.keyPath) != nil
                {
                    return nil
                }
                // Never resolved (only a misfit, or a first resolution that found nil, comes
                // here): a nil value can't be checked yet; anything else is the misfit.
                return box.key.read(object) == nil ? nil : (index + 1, box.key, object)
            }
            guard let next = PathStep.model(in: value) else { return nil }
            object = next
        }
        return nil
    }
}

extension ObservableModelBase {
    /// Checks the typed chains of a new token: a segment that is not one `@Observed` property
    /// is a programming error (a trap in debug builds, whose message says what the segment
    /// reads and how to fix it). Returns false when the token must end.
    final func checkChains(_ chains: [[PathStep]], fileID: StaticString, line: UInt) -> Bool {
        for steps in chains {
            guard let (position, key, object) = steps.firstMisfitSegment(from: self) else { continue }
            let reads = object.observedReads(of: key)
            let written = DebugFormat.keyPathText(key.keyPath, reads: reads.map(\.name))
            let segment = "segment \(position) of the key path chain observed at \(fileID):\(line), \(written),"
            if reads.isEmpty {
                _reportMisuse(
                    "\(segment) reads no @Observed property, so the token would never watch past it. Mark that property @Observed, or observe the chain only up to it."
                )
            } else {
                let split = reads.map { "(\\.\($0.name))" }.joined(separator: ".then")
                let fix =
                    reads.count > 1
                    ? "Give each property a segment of its own (.then\(split))"
                    : "End the segment at the property (\\.\(reads[0].name))"
                _reportMisuse(
                    "\(segment) is not one @Observed property: it reads \(reads.map(\.qualified).joined(separator: ", ")), and a chain follows one property per segment. \(fix), or observe the key path itself (observe(\(written))), which follows everything it reads."
                )
            }
            return false
        }
        return true
    }

    /// The `@Observed` properties reading `key` on this object reads, in reading order
    /// (repeats included): for misuse messages. Runs the key path's getters once.
    final func observedReads(of key: TypedKey) -> [(name: String, qualified: String)] {
        var accesses: [AccessCapture.TrackedAccess] = []
        withUnsafeMutablePointer(to: &accesses) { all in
            var recording = AccessCapture.Recording()
            recording.all = all
            withUnsafeMutablePointer(to: &recording) { recording in
                let previous = AccessCapture.beginTracking(recording)
                _ = key.read(self)
                AccessCapture.endTracking(restoring: previous)
            }
        }
        return accesses.map { access in
            let name = ObservationDebugging.propertyName(
                access.serial, in: access.registry.weakOwner, registry: access.registry)
            return (name, "\(access.registry.ownerType).\(name)")
        }
    }

    /// The misuse message for a key path of a list (`observe([…])`, `.whichOf`,
    /// `tell(_:whenAnyOf:)`) that is not one `@Observed` property of this object: what it reads,
    /// and the fix.
    final func listMisfit(_ key: TypedKey) -> String {
        let reads = observedReads(of: key)
        let written = DebugFormat.keyPathText(key.keyPath, reads: reads.map(\.name))
        if reads.isEmpty {
            return
                "\(written) reads no @Observed property of \(type(of: self)), so the token would never hear of it. Mark the property @Observed, or leave it out of the list."
        }
        return
            "\(written) is not one @Observed property of \(type(of: self)): it reads \(reads.map(\.qualified).joined(separator: ", ")), and a list watches properties. List the @Observed properties it reads, or observe it with a token of its own (observe(\(written))), which follows everything it reads."
    }

    /// The first of a list subscription's key paths that is not one `@Observed` property of
    /// this object.
    final func firstMisfitKey(of subscription: Subscription) -> TypedKey? {
        for path in subscription.paths {
            guard case .typed(let box)? = path.steps.first else { continue }
            if PathStep.typed(box).resolveSerial(on: self) == nil { return box.key }
        }
        return nil
    }
}

/// A ``KeyPathChain`` with its endpoint type erased, so that chains to different types can be
/// observed by one token.
///
/// ```swift
/// let token = cache.observe([
///     AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)),
///     AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.name)),
/// ]) { cache in … }   // one callback per tick, whichever path changed
/// ```
public struct AnyKeyPathChain<Root: ObservableModelBase>: Sendable {
    let steps: [PathStep]

    /// Erases the endpoint type of `chain`.
    public init<Value>(_ chain: KeyPathChain<Root, Value>) {
        steps = Array(chain.steps)
    }
}
