/// The values of an observed property or path, with operators applied, waiting to be bound to
/// a destination or posted to a closure.
///
/// Start a pipeline with `pipeline(of:)` on a model (a property or a chain) or `pipeline(path:)`,
/// add operators, and finish it with ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)`` or
/// ``post(options:queue:fileID:line:_:)``. Only the finishing call creates an observation: it
/// returns an ``ObservationToken``, and the pipeline lives exactly as long as that token.
///
/// ```swift
/// let token = cart.pipeline(of: \.count)
///     .filter { $0 >= 0 }
///     .map { "\($0) items" }
///     .removeDuplicates()
///     .bind(to: badge, \.text)
/// ```
///
/// Operators run in the order they are declared, once per delivery. Each one sees what the one
/// before it produced; an operator that stops the value (a failing `filter`, a `compactMap`
/// returning nil, a duplicate for `removeDuplicates`) stops the whole push: nothing after it
/// runs and the destination is not written.
///
/// Each push reads the source's current value when it is delivered, so a source set 1,000 times
/// in one tick pushes once, its last value.
///
/// > Note: **Lifetime.** A pipeline holds its source objects strongly until it is finished;
/// > build and finish it in one expression. The token it returns holds sources and destination
/// > weakly, like every token.
public struct ValuePipeline<Output> {
    let sources: PipelineSources
    /// The puller every token shares, while every operator is stateless; nil otherwise.
    let sharedPuller: Puller<Output>?
    /// Builds a fresh puller (with fresh operator state) for each token, once an operator
    /// keeps state (`removeDuplicates`); nil while `sharedPuller` is set.
    ///
    /// Two optional closures rather than an enum: a generic enum would cost a metadata lookup
    /// per operator and per token in this unspecialized code.
    let makePuller: (@Sendable () -> Puller<Output>)?

    init(sources: PipelineSources, shared puller: @escaping Puller<Output>) {
        self.sources = sources
        sharedPuller = puller
        makePuller = nil
    }

    init(sources: PipelineSources, perToken makePuller: @escaping @Sendable () -> Puller<Output>) {
        self.sources = sources
        sharedPuller = nil
        self.makePuller = makePuller
    }

    /// The puller for a new token.
    func makeTokenPuller() -> Puller<Output> {
        Self.tokenPuller(shared: sharedPuller, make: makePuller)
    }

    /// The puller for a new token of a pipeline with these fields.
    static func tokenPuller(shared: Puller<Output>?, make: (@Sendable () -> Puller<Output>)?) -> Puller<Output> {
        if let shared { return shared }
        return make.unsafelyUnwrapped()
    }

    // Each operator builds its puller with a static function called directly (a generic
    // function used as a value would cost a closure context): once, shared by every token,
    // while the pipeline is stateless; once per token otherwise.

    private static func filtering(
        _ previous: @escaping Puller<Output>, _ isIncluded: @escaping @Sendable (Output) -> Bool
    ) -> Puller<Output> {
        { context, next in
            previous(&context) { context, value in
                if isIncluded(value) { next(&context, value) }
            }
        }
    }

    private static func mapping<Next>(
        _ previous: @escaping Puller<Output>, _ transform: @escaping @Sendable (Output) -> Next
    ) -> Puller<Next> {
        { context, next in
            previous(&context) { context, value in next(&context, transform(value)) }
        }
    }

    private static func compactMapping<Next>(
        _ previous: @escaping Puller<Output>, _ transform: @escaping @Sendable (Output) -> Next?
    ) -> Puller<Next> {
        { context, next in
            previous(&context) { context, value in
                if let transformed = transform(value) { next(&context, transformed) }
            }
        }
    }

    private static func applying(
        _ previous: @escaping Puller<Output>, _ body: @escaping @Sendable (Output) -> Void
    ) -> Puller<Output> {
        { context, next in
            previous(&context) { context, value in
                context.afterApply.append { body(value) }
                next(&context, value)
            }
        }
    }

    /// What `puller` hands on in one push: nil when it stops the push. (For `combineLatest`,
    /// which needs every input's value before it can go on.)
    private static func pulled(_ puller: Puller<Output>, _ context: inout PipelineContext) -> Output? {
        var result: Output?
        puller(&context) { _, value in result = value }
        return result
    }

    // MARK: Operators

    /// Lets through only the values for which `isIncluded` returns true; a rejected value
    /// stops the push.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).filter { $0.count > 3 }.bind(to: label, \.text)
    /// ```
    ///
    /// - Parameter isIncluded: Called once per push with the value so far.
    /// - Returns: The pipeline with the filter appended.
    public func filter(_ isIncluded: @escaping @Sendable (Output) -> Bool) -> ValuePipeline<Output> {
        if let sharedPuller { return ValuePipeline(sources: sources, shared: Self.filtering(sharedPuller, isIncluded)) }
        let make = makePuller.unsafelyUnwrapped
        return ValuePipeline(sources: sources, perToken: { Self.filtering(make(), isIncluded) })
    }

    /// Transforms each value, possibly to another type.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).map(\.isEmpty).bind(to: view, \.isHidden)
    /// ```
    ///
    /// - Parameter transform: Called once per push with the value so far.
    /// - Returns: The pipeline with the transform appended.
    public func map<Next>(_ transform: @escaping @Sendable (Output) -> Next) -> ValuePipeline<Next> {
        if let sharedPuller {
            return ValuePipeline<Next>(sources: sources, shared: Self.mapping(sharedPuller, transform))
        }
        let make = makePuller.unsafelyUnwrapped
        return ValuePipeline<Next>(sources: sources, perToken: { Self.mapping(make(), transform) })
    }

    /// Transforms each value and stops the push when the transform returns nil.
    ///
    /// ```swift
    /// let token = try form.pipeline(path: "age").compactMap { $0 as? Int }.bind(to: model, \.age)
    /// ```
    ///
    /// - Parameter transform: Called once per push with the value so far.
    /// - Returns: The pipeline with the transform appended.
    public func compactMap<Next>(_ transform: @escaping @Sendable (Output) -> Next?) -> ValuePipeline<Next> {
        if let sharedPuller {
            return ValuePipeline<Next>(sources: sources, shared: Self.compactMapping(sharedPuller, transform))
        }
        let make = makePuller.unsafelyUnwrapped
        return ValuePipeline<Next>(sources: sources, perToken: { Self.compactMapping(make(), transform) })
    }

    /// Stops a push whose value equals, by `isDuplicate`, the value the previous push had at
    /// this point.
    ///
    /// Every push is compared, `now()` included; the first push always passes. When a
    /// destination path moves to a new object, the push that brings the new object up to date
    /// passes even if the value did not change.
    ///
    /// - Parameter isDuplicate: Called with the previous value and the new one, with no lock held.
    /// - Returns: The pipeline with the operator appended.
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (_ previous: Output, _ next: Output) -> Bool
    ) -> ValuePipeline<Output> {
        // Keeps state, so each token gets its own puller.
        let shared = sharedPuller
        let make = makePuller
        return ValuePipeline(
            sources: sources,
            perToken: {
                let previous = Self.tokenPuller(shared: shared, make: make)
                let last = LastValue<Output>()
                return { context, next in
                    previous(&context) { context, value in
                        if let before = last.exchange(value), isDuplicate(before, value), !context.isRefresh { return }
                        next(&context, value)
                    }
                }
            })
    }

    /// Runs `body` after the value has been applied — written to the destination, or handed to
    /// the posted closure — with the value as it was at this point of the pipeline.
    ///
    /// Handlers run in declaration order after the apply, and not at all if an operator after
    /// them stopped the push.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name)
    ///     .onApply { name in print("label now shows", name) }
    ///     .bind(to: label, \.text)
    /// ```
    ///
    /// - Parameter body: Called once per applied push.
    /// - Returns: The pipeline with the handler appended.
    public func onApply(_ body: @escaping @Sendable (Output) -> Void) -> ValuePipeline<Output> {
        if let sharedPuller { return ValuePipeline(sources: sources, shared: Self.applying(sharedPuller, body)) }
        let make = makePuller.unsafelyUnwrapped
        return ValuePipeline(sources: sources, perToken: { Self.applying(make(), body) })
    }

    // MARK: Combining

    /// Combines the latest values of several pipelines into one value with `reduce`.
    ///
    /// The combined pipeline pushes at creation (with the finishing call's default `.initial`)
    /// and then at most once per tick, whichever inputs changed and however often. Any number of
    /// inputs, of different types and on different objects:
    ///
    /// ```swift
    /// let token = ValuePipeline.combineLatest(
    ///     person.pipeline(of: \.firstName), person.pipeline(of: \.lastName), settings.pipeline(of: \.showsAge),
    ///     person.pipeline(of: \.age)
    /// ) { first, last, showsAge, age in
    ///     showsAge ? "\(first) \(last), \(age)" : "\(first) \(last)"
    /// }
    /// .bind(to: label, \.text)
    /// ```
    ///
    /// Each push reads every input anew and runs its operators; if any input stops (a failing
    /// filter, a source that is gone), the push stops. The token ends when any input's object
    /// deinitializes.
    ///
    /// - Parameters:
    ///   - inputs: Two or more pipelines.
    ///   - reduce: Makes the combined value from the inputs' values, in order.
    /// - Returns: A pipeline of the combined values.
    /// - Complexity: O(*n*) in the number of inputs per push.
    public static func combineLatest<each Input>(
        _ inputs: repeat ValuePipeline<each Input>,
        reduce: @escaping @Sendable (repeat each Input) -> Output
    ) -> ValuePipeline<Output> {
        var sources: [PipelineSource] = []
        for input in repeat each inputs { sources.append(contentsOf: input.sources.all) }
        let shared = (repeat (each inputs).sharedPuller)
        let makers = (repeat (each inputs).makePuller)
        return ValuePipeline(
            sources: PipelineSources(sources),
            perToken: {
                let pullers = (repeat ValuePipeline<each Input>.tokenPuller(shared: each shared, make: each makers))
                return { context, next in
                    let values = (repeat ValuePipeline<each Input>.pulled(each pullers, &context))
                    for value in repeat each values {
                        if value == nil { return }
                    }
                    next(&context, reduce(repeat (each values)!))
                }
            })
    }

    // MARK: Finishing

    /// Binds the pipeline to a property of `destination`: each pushed value is written there.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).map { $0.uppercased() }.bind(to: label, \.text)
    /// ```
    ///
    /// With the default options the destination takes the current value at once; then each
    /// change of the source is pushed once per tick on `queue` (or inside the setter, with
    /// `.immediate`). Pass `options: []` to leave the destination alone until the first change.
    ///
    /// A destination that is a model takes part in the rules for bindings that meet or form a
    /// cycle (docs/Bindings.md, "Cycles"): where two changes meet, the later one wins, and a
    /// change crosses each binding once.
    ///
    /// - Parameters:
    ///   - destination: Held weakly. If it is an ``ObservableModel``, its deinit ends the token
    ///     at once; any other object's absence ends the token at the next push.
    ///   - keyPath: The property to write.
    ///   - options: `.initial` (the default) pushes at creation; `.immediate`; `.endpointChanges`
    ///     for path sources.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive; ``ObservationToken/now()`` pushes the
    ///   current value through this pipeline.
    /// - Complexity: O(*s*) in the number of sources to create; each push runs every operator once.
    @inlinable @inline(__always)
    public func bind<Destination: AnyObject>(
        to destination: Destination,
        _ keyPath: consuming ReferenceWritableKeyPath<Destination, Output>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        // Built here, in the caller's module, where it is specialized. The key path's lifetime
        // ends in the closure (`consume`, `__owned`), which makes the closure its only user: the
        // optimizer then moves a literal into it, and writing the property is a direct store
        // instead of a trip through the key path runtime (≈ 1,800 instructions). The closure
        // also reads the property (to compare) and hands the key path back when asked.
        let access = Self._access(consume keyPath)
        return _bind(
            to: destination, access: _UncheckedSendable(access), options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options))
    }

    /// Binds the pipeline to an optional property of `destination`: each value is written
    /// wrapped (a `String` pipeline to a `String?` property).
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).bind(to: label, \.subtitle)   // subtitle: String?
    /// ```
    ///
    /// The same as ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)`` in every other way.
    ///
    /// - Parameters:
    ///   - destination: Held weakly, as for the non-optional form.
    ///   - keyPath: The optional property to write.
    ///   - options: `.initial` (the default), `.immediate`, `.endpointChanges` for path sources.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    @inlinable @inline(__always)
    public func bind<Destination: AnyObject>(
        to destination: Destination,
        _ keyPath: consuming ReferenceWritableKeyPath<Destination, Output?>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        let access = ValuePipeline<Output?>._access(consume keyPath)
        return _promoted()._bind(
            to: destination, access: _UncheckedSendable(access), options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options))
    }

    /// The pipeline with each value wrapped in an `Optional`, for optional destinations.
    @usableFromInline
    func _promoted() -> ValuePipeline<Output?> {
        map { Optional($0) }
    }

    /// Writes, compares and names the property at `keyPath`, in one closure that is the key
    /// path's only user (see `bind(to:_:)`):
    /// - with a destination and a value, writes the value (`compare` false) or compares it with
    ///   what the property holds (`compare` true: 0 the same, 1 different, 2 can't tell);
    /// - with no destination, hands back `keyPath`.
    @inlinable @inline(__always)
    static func _access<Destination>(
        _ keyPath: __owned ReferenceWritableKeyPath<Destination, Output>
    ) -> _DestinationAccess<Destination, Output> {
        { destination, value, compare, keyPathOut in
            guard let destination, let value else {
                keyPathOut = keyPath
                return 0
            }
            if compare { return _bindingCompare(destination[keyPath: keyPath], value.pointee) }
            destination[keyPath: keyPath] = value.pointee
            return 0
        }
    }

    /// The non-inlinable half of `bind(to:_:)`.
    @usableFromInline
    func _bind<Destination: AnyObject>(
        to destination: Destination, access: _UncheckedSendable<_DestinationAccess<Destination, Output>>,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite
    ) -> ObservationToken {
        let reference = WeakReference(destination)
        let write: BindingWrite = { value, keyPathOut in
            guard let value else {
                _ = access.value(nil, nil, false, &keyPathOut)
                return true
            }
            guard let destination = reference.load(as: Destination.self) else { return false }
            _ = access.value(destination, value.assumingMemoryBound(to: Output.self), false, &keyPathOut)
            return true
        }
        guard let model = destination as? ObservableModelBase else {
            // Not a model: nothing reads it, so no cycle runs through it. A plain binding.
            return start(
                options: options, queue: queue, site: site,
                purpose: .binding(ObjectIdentifier(destination), write, alone: false),
                write: write)
        }
        var keyPath: AnyKeyPath?
        _ = write(nil, &keyPath)
        let key = keyPath.map { keyPath in
            TypedKey(
                keyPath: keyPath,
                reader: { object, keyPath in
                    guard let object = object as? Destination,
                        let keyPath = keyPath as? ReferenceWritableKeyPath<Destination, Output>
                    else { return nil }
                    return object[keyPath: keyPath]
                })
        }
        let compare: BindingCompare = { value in
            guard let destination = reference.load(as: Destination.self) else { return .unknown }
            var unused: AnyKeyPath?
            let answer = access.value(destination, value.assumingMemoryBound(to: Output.self), true, &unused)
            return BindingComparison(answer)
        }
        return startLinked(
            options: options, queue: queue, site: site, destination: .property(model, key), write: write,
            compare: compare)
    }

    /// Binds the pipeline to a property at the end of a path from `destination`, following the
    /// path when an object on it is replaced.
    ///
    /// ```swift
    /// // friend.name ← clown.name, whoever the friend is
    /// let token = clown.pipeline(of: \.name).bind(to: person, KeyPathChain(\.friend), \.name)
    /// ```
    ///
    /// When the path leads to a new object, that object gets the current value at once; while
    /// it leads nowhere (an optional is nil), pushes are dropped.
    ///
    /// - Parameters:
    ///   - destination: The root of the destination path; held weakly, and its deinit ends the
    ///     token.
    ///   - path: From `destination` to the object whose property is written.
    ///   - keyPath: The property to write.
    ///   - options: As for ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)``.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Destination: ObservableModelBase, Target: ObservableModelBase>(
        to destination: Destination,
        _ path: KeyPathChain<Destination, Target?>,
        _ keyPath: ReferenceWritableKeyPath<Target, Output>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        let box = WeakReference(destination)
        nonisolated(unsafe) let keyPath = keyPath  // key paths are immutable
        return startLinked(
            options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options),
            destination: .path(destination, path.path)
        ) { value, keyPathOut in
            guard let value else {
                keyPathOut = keyPath
                return true
            }
            guard let destination = box.load(as: Destination.self) else { return false }
            path.evaluate(destination)?[keyPath: keyPath] = value.assumingMemoryBound(to: Output.self).pointee
            return true
        }
    }

    /// Binds the pipeline to a property at the end of a path of non-optional objects from
    /// `destination`, following the path when an object on it is replaced.
    ///
    /// ```swift
    /// let token = clown.pipeline(of: \.name).bind(to: circus, KeyPathChain(\.headliner), \.name)
    /// ```
    ///
    /// The same as the optional-path variant, except that the path always leads somewhere.
    ///
    /// - Parameters:
    ///   - destination: The root of the destination path; held weakly, and its deinit ends the
    ///     token.
    ///   - path: From `destination` to the object whose property is written.
    ///   - keyPath: The property to write.
    ///   - options: As for ``bind(to:_:options:queue:fileID:line:)-(_,ReferenceWritableKeyPath<Destination,Output>,_,_,_,_)``.
    ///   - queue: Where pushes are delivered; the main queue by default.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the binding alive.
    public func bind<Destination: ObservableModelBase, Target: ObservableModelBase>(
        to destination: Destination,
        _ path: KeyPathChain<Destination, Target>,
        _ keyPath: ReferenceWritableKeyPath<Target, Output>,
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservationToken {
        let box = WeakReference(destination)
        nonisolated(unsafe) let keyPath = keyPath  // key paths are immutable
        return startLinked(
            options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .binding, options: options),
            destination: .path(destination, path.path)
        ) { value, keyPathOut in
            guard let value else {
                keyPathOut = keyPath
                return true
            }
            guard let destination = box.load(as: Destination.self) else { return false }
            path.evaluate(destination)[keyPath: keyPath] = value.assumingMemoryBound(to: Output.self).pointee
            return true
        }
    }

    /// Posts each pushed value to a closure: an observation that receives values instead of
    /// the object.
    ///
    /// ```swift
    /// let token = account.pipeline(of: \.balance)
    ///     .removeDuplicates()
    ///     .post(options: []) { balance in print("balance is now", balance) }
    /// ```
    ///
    /// The closure is your code, like a token's callback: what it changes is a new change (see
    /// docs/Bindings.md, "Cycles"). ``ModelObserving/stopPosting(_:)`` ends every posting of a
    /// property at once.
    ///
    /// - Parameters:
    ///   - options: `.initial` (the default) posts the current value at creation; pass `[]` to
    ///     receive only new values. `.immediate`; `.endpointChanges` for path sources.
    ///   - queue: Where values are delivered; the main queue by default.
    ///   - receive: Called once per push that passed every operator.
    ///   - fileID: The file that creates the token (the default), where debugging tools list it.
    ///   - line: The line that creates the token (the default), where debugging tools list it.
    /// - Returns: The token that keeps the posting alive.
    public func post(
        options: ObservationOptions = [.initial],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ receive: @escaping @Sendable (Output) -> Void
    ) -> ObservationToken {
        start(
            options: options, queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: .pipeline, options: options), purpose: .posting
        ) {
            value, _ in
            if let value { receive(value.assumingMemoryBound(to: Output.self).pointee) }
            return true
        }
    }

    /// Creates the subscriptions and the token of a binding that writes no model (or a
    /// posting): it pushes at every delivery, like any token's callback.
    ///
    /// - Parameter write: Writes a value; false when the destination is gone, which ends the
    ///   token.
    func start(
        options: ObservationOptions,
        queue: CoalescingQueue,
        site: CreationSite,
        purpose: BindingSubscription.Purpose,
        write: @escaping BindingWrite
    ) -> ObservationToken {
        let puller = makeTokenPuller()
        let push: @Sendable () -> Bool = { Self.push(puller, write) }
        let main: Subscription
        if !sources.rest.isEmpty {
            // Several sources: each source's subscription makes a hub pending, and the hub
            // pushes once per tick. With `.immediate`, each change pushes at once. The hub has
            // no edge: it is only ever scheduled, so it takes no options.
            let group = BindingGroup()
            let hub = BindingSubscription(
                root: sources.first.root, target: .property, options: [], queue: queue, site: site, group: group,
                purpose: purpose, push: push)
            group.add(hub)
            main = hub
            let onChange: @Sendable () -> Bool
            if options.contains(.immediate) {
                onChange = push
            } else {
                let weakHub = WeakReference(hub)
                onChange = {
                    weakHub.load(as: BindingSubscription.self)?.schedule()
                    return true
                }
            }
            for source in sources.all {
                let subscription = source.makeSubscription(options, queue, site, group, onChange, purpose: purpose)
                guard subscription.isActive else { break }
            }
        } else {
            // One source: its own subscription is the token's, and delivers the push itself.
            // Nothing else to end with it: no group.
            main = sources.first.makeSubscription(options, queue, site, nil, push, purpose: purpose)
        }
        if options.contains(.initial), main.isActive, !push() { main.end() }
        return ObservationToken(subscription: main)
    }

    /// Where a binding that writes a model writes.
    enum LinkedDestination {
        /// A property of `object`: an `@Observed` one when `key` resolves on it (watched and
        /// timed); else written blind, and a sentinel hears `object`'s deinit.
        case property(ObservableModelBase, TypedKey?)
        /// A property at the end of `path` from `object`: a new object there is brought up to
        /// date.
        case path(ObservableModelBase, ObservedPath)
        /// The property named `name` of `object` itself (a one-component string path).
        case named(ObservableModelBase, String)
    }

    /// Creates the subscriptions, the link and the token of a binding that writes a model (see
    /// ``BindingLink``).
    ///
    /// - Parameters:
    ///   - write: Writes a value; false when the destination is gone, which ends the token.
    ///   - compare: Compares a value with what the destination holds, when it can.
    func startLinked(
        options: ObservationOptions,
        queue: CoalescingQueue,
        site: CreationSite,
        destination: LinkedDestination,
        write: @escaping BindingWrite,
        compare: BindingCompare? = nil
    ) -> ObservationToken {
        let puller = makeTokenPuller()
        let group = BindingGroup()
        let all = sources.all
        let members = all.map { $0.member(options) }
        let target: ObservableModelBase
        var written: BindingMember?
        var watched: Subscription.Target?
        switch destination {
        case .property(let object, let key):
            target = object
            if let key, let serial = key.resolveSerial(on: object) {
                written = BindingMember.acquire(serial: serial, on: object)
                watched = .key(key, options: [])
            }
        case .path(let object, _):
            target = object
        case .named(let object, let name):
            target = object
            if let serial = PropertyTable(object).serial(ofProperty: name, in: object) {
                written = BindingMember.acquire(serial: serial, on: object)
                watched = .paths([ObservedPath(steps: [.name(name)])])
            }
        }
        // `cutOffBinding` finds bindings to a property of the destination, not to a path.
        var writesTarget = true
        if case .path = destination { writesTarget = false }
        let link = BindingLink(
            site: site, queue: queue, sources: members.compactMap { $0 }, destination: written,
            destinationID: writesTarget ? ObjectIdentifier(target) : nil,
            destinationKeyPath: {
                var keyPath: AnyKeyPath?
                _ = write(nil, &keyPath)
                return keyPath
            },
            push: { _, gate, isRefresh in Self.push(puller, write, compare, gate, isRefresh) })
        let main: LinkSubscription
        if all.count == 1 {
            main = all[0].makeLinkSubscription(options, queue, site, group, link, members[0], role: .main)
            link.start(main: main)
            group.add(main)
            all[0].start(main)
        } else {
            let hub = LinkSubscription(
                root: all[0].root, target: .property, options: [], queue: queue, site: site, group: group, link: link,
                member: nil, role: .main)
            link.start(main: hub)
            group.add(hub)
            main = hub
            let weakHub = WeakReference(hub)
            for (source, member) in zip(all, members) where !group.hasEnded {
                let subscription = source.makeLinkSubscription(
                    options, queue, site, group, link, member, role: .source(hub: weakHub))
                group.add(subscription)
                source.start(subscription)
            }
        }
        if !group.hasEnded {
            switch destination {
            case .property(let object, let key):
                if let watched, let key, let written {
                    let watcher = LinkSubscription(
                        root: object, target: watched, options: [], queue: queue, site: site, group: group,
                        link: link, member: written, role: .destination)
                    group.add(watcher)
                    if !group.hasEnded { _ = watcher.start(root: object, key: key) }
                } else {
                    group.addSentinel(on: object, site: site)
                }
            case .path(let object, let path):
                let watcher = LinkSubscription(
                    root: object, target: .paths([path]), options: options.union(.endpointChanges), queue: queue,
                    site: site, group: group, link: link, member: nil, role: .refresh)
                group.add(watcher)
                if !group.hasEnded { _ = watcher.start(root: object) }
            case .named(let object, _):
                if let watched, let written {
                    let watcher = LinkSubscription(
                        root: object, target: watched, options: [], queue: queue, site: site, group: group,
                        link: link, member: written, role: .destination)
                    group.add(watcher)
                    if !group.hasEnded { _ = watcher.start(root: object) }
                } else {
                    group.addSentinel(on: object, site: site)
                }
            }
        }
        if options.contains(.initial), main.isActive, link.run(.explicit) == .gone { main.end() }
        return ObservationToken(subscription: main)
    }

    /// Runs the operators and writes the value that comes through them, if one does; then the
    /// `onApply` handlers it reached. False when the destination was found gone.
    private static func push(_ puller: Puller<Output>, _ write: @escaping BindingWrite) -> Bool {
        var context = PipelineContext(isRefresh: false)
        var destinationIsGone = false
        puller(&context) { context, value in
            var unused: AnyKeyPath?
            let written = withUnsafePointer(to: value) { write(UnsafeRawPointer($0), &unused) }
            guard written else {
                destinationIsGone = true
                return
            }
            context.runAfterApply()
        }
        return !destinationIsGone
    }

    /// `push` for a link: asks `gate` before writing.
    private static func push(
        _ puller: Puller<Output>, _ write: @escaping BindingWrite, _ compare: BindingCompare?, _ gate: BindingGate,
        _ isRefresh: Bool
    ) -> BindingPushOutcome {
        var context = PipelineContext(isRefresh: isRefresh)
        var outcome = BindingPushOutcome.held
        // The gate runs within this call only; the operators' `next` can't keep it.
        withoutActuallyEscaping(gate) { gate in
            puller(&context) { context, value in
                withUnsafePointer(to: value) { pointer in
                    let value = UnsafeRawPointer(pointer)
                    guard gate({ compare?(value) ?? .unknown }) else { return }
                    var unused: AnyKeyPath?
                    outcome = write(value, &unused) ? .applied : .gone
                }
                if outcome == .applied { context.runAfterApply() }
            }
        }
        return outcome
    }
}

/// Writes a pushed value (pointed to, of the pipeline's output type) to a binding's
/// destination, and returns false when the destination is gone; given no value, hands back the
/// key path it writes (nil for a posting).
typealias BindingWrite = @Sendable (_ value: UnsafeRawPointer?, _ keyPath: inout AnyKeyPath?) -> Bool

/// Compares a pushed value (pointed to) with what the destination holds.
typealias BindingCompare = @Sendable (_ value: UnsafeRawPointer) -> BindingComparison

/// See `ValuePipeline._access(_:)`.
@usableFromInline
typealias _DestinationAccess<Destination, Output> =
    (_ destination: Destination?, _ value: UnsafePointer<Output>?, _ compare: Bool, _ keyPath: inout AnyKeyPath?)
    -> UInt8

/// Compares two values the way a setter does (`===` for class references, `==` for
/// `Equatable` values): 0 the same, 1 different, 2 when the type can't be compared.
@usableFromInline
func _bindingCompare<T>(_ lhs: T, _ rhs: T) -> UInt8 {
    guard ValueComparator.for(T.self)._withUnsafeGuaranteedRef({ $0.canCompare }) else { return 2 }
    return _valuesAreIdentical(lhs, rhs) ? 0 : 1
}

extension ValueComparator {
    /// Whether values of the type are compared (the others count as changed on every set).
    var canCompare: Bool { Swift.type(of: self) != ValueComparator.self }
}

extension BindingComparison {
    /// From `_bindingCompare`'s answer.
    init(_ answer: UInt8) {
        switch answer {
        case 0: self = .same
        case 1: self = .different
        default: self = .unknown
        }
    }
}

/// The value a `removeDuplicates` stage saw last, swapped under a lock; compared outside it.
final class LastValue<Value>: Locked<Value?>, @unchecked Sendable {  // state is guarded by Locked
    init() { super.init(state: nil) }

    /// Stores `value` and returns the one it replaces.
    func exchange(_ value: Value) -> Value? {
        withLock { last in
            defer { last = value }
            return last
        }
    }
}

extension ValuePipeline where Output: Equatable & SendableMetatype {
    /// Stops a push whose value equals (`==`) the value the previous push had at this point.
    ///
    /// ```swift
    /// let token = sensor.pipeline(of: \.reading).map { $0.rounded() }.removeDuplicates().post { print($0) }
    /// ```
    ///
    /// - Returns: The pipeline with the operator appended.
    public func removeDuplicates() -> ValuePipeline<Output> {
        removeDuplicates { $0 == $1 }
    }
}
