import Synchronization

/// An asynchronous sequence of a property's values: one element per tick in which it changed,
/// carrying the value at delivery.
///
/// Create one with `values(of:)` (a property, a ``KeyPathChain``, or a string path)
/// and iterate it with `for await`:
///
/// ```swift
/// for await name in person.values(of: \.name) {
///     print("name is now", name)
/// }
/// ```
///
/// The observation starts when `values(of:)` returns: nothing changed after that is missed.
/// Each element is the latest value: a consumer slower than the changes skips the values it
/// had no time for, and never works through a backlog.
///
/// The sequence finishes (`next()` returns nil) when the observed object deinitializes, after
/// the last value delivered (at the queue's next tick, which carries the notice). It stops at once when the iterating task is cancelled. Its
/// observation ends as soon as its iterator is gone (a `for await` loop that `break`s or
/// returns drops it), or, if it was never iterated, when the sequence is gone.
///
/// > Note: **One loop.** The sequence has one slot and is iterated once, by one task. Call
/// > `values(of:)` again for another consumer.
///
/// > Note: **Threading.** Elements are produced by the token's queue (the main queue by
/// > default), so that queue must run: in a command-line program, an `async` `main` runs it
/// > while it awaits; otherwise pass a `.dispatch` queue.
public struct ObservedValues<Element: Sendable>: AsyncSequence, Sendable {
    /// The sequence never throws: it ends (returns nil) when the observation ends.
    public typealias Failure = Never

    /// Holds the stream until the iterator takes it over.
    let handle: ValuesHandle<Element>

    @usableFromInline
    init(stream: ValueStream<Element>) {
        handle = ValuesHandle(stream: stream)
    }

    /// Returns the iterator, which takes the observation over: from now on the observation
    /// lives as long as the iterator, whatever becomes of the sequence.
    ///
    /// A sequence is iterated once. A second iterator is a programming error: debug builds
    /// trap; release builds return an iterator that ends at once.
    public func makeAsyncIterator() -> Iterator {
        guard let stream = handle.take() else {
            assertionFailure("ObservedValues: a sequence is iterated once; call values(of:) again for another loop")
            return Iterator(stream: ValueStream(finished: true))
        }
        return Iterator(stream: stream)
    }

    /// Takes the values of an ``ObservedValues`` sequence.
    public struct Iterator: AsyncIteratorProtocol {
        /// The iterator never throws: `next()` returns nil once the observation has ended.
        public typealias Failure = Never

        @usableFromInline
        let stream: ValueStream<Element>

        @usableFromInline
        init(stream: ValueStream<Element>) {
            self.stream = stream
        }

        /// The latest value not taken yet, waiting for the next tick if there is none; nil
        /// when the observed object went away or the task was cancelled.
        @inlinable
        public mutating func next() async -> Element? {
            await stream.next()
        }

        /// The latest value not taken yet; see ``next()``.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await stream.next()
        }
    }
}

/// The sequence's hold on its stream, taken over by the first iterator.
final class ValuesHandle<Element: Sendable>: Sendable {
    private let stream: Locked<ValueStream<Element>?>

    init(stream: ValueStream<Element>) {
        self.stream = Locked(state: stream)
    }

    func take() -> ValueStream<Element>? {
        stream.withLock { $0.take() }
    }
}

/// Moves a key path (not `Sendable` in Swift 6) into the token's `@Sendable` callback. Key
/// paths are immutable; the library reads through them on the delivering thread, as it does
/// for every token.
@usableFromInline
struct SendableKeyPath<Root, Value>: @unchecked Sendable {
    @usableFromInline
    let keyPath: KeyPath<Root, Value>

    @inlinable
    init(keyPath: KeyPath<Root, Value>) {
        self.keyPath = keyPath
    }
}

extension ModelObserving where Self: ObservableModelBase {
    /// An asynchronous sequence of a property's values, one per tick in which it changed.
    ///
    /// ```swift
    /// Task {
    ///     for await zipCode in address.values(of: \.zipCode) {
    ///         print("zip code is now", zipCode)
    ///     }
    ///     print("address went away")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver. Any other key path gives a
    ///     sequence that delivers the current value (if asked) and nothing after.
    ///   - includingCurrent: Whether the first element is the value now; true by default.
    ///   - queue: Whose ticks produce the elements; the main queue by default.
    ///   - fileID: The file that asks for the sequence (the default), named by the debugging aids.
    ///   - line: The line that asks for the sequence (the default), named by the debugging aids.
    /// - Returns: The sequence; its observation starts now.
    /// - Complexity: O(1) per element.
    ///
    /// > Note: The values cross from the queue's thread to the consuming task, so they must be
    /// > `Sendable`. For a property holding a model, iterate a `Sendable` property of it, or use
    /// > a token.
    @inlinable
    public func values<Value: Sendable>(
        of keyPath: KeyPath<Self, Value>,
        includingCurrent: Bool = true,
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservedValues<Value> {
        let stream = ValueStream<Value>()
        let key = SendableKeyPath(keyPath: keyPath)
        let options: ObservationOptions = includingCurrent ? .initial : []
        stream.attach(
            _observe(
                keyPath, observer: stream, options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .values, options: options)
            ) { stream, model in stream.push(model[keyPath: key.keyPath]) })
        return ObservedValues(stream: stream)
    }

    /// An asynchronous sequence of a key path chain's endpoint, one per tick in which anything
    /// along the chain changed.
    ///
    /// ```swift
    /// let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
    /// for await zipCode in cache.values(of: zipCode) {
    ///     print(zipCode ?? "no address")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - chain: The path, rooted at the receiver.
    ///   - includingCurrent: Whether the first element is the endpoint now; true by default.
    ///   - queue: Whose ticks produce the elements; the main queue by default.
    ///   - fileID: The file that asks for the sequence (the default), named by the debugging aids.
    ///   - line: The line that asks for the sequence (the default), named by the debugging aids.
    /// - Returns: The sequence; its observation starts now.
    /// - Complexity: O(*n*) in the chain's length per element.
    public func values<Value: Sendable>(
        of chain: KeyPathChain<Self, Value>,
        includingCurrent: Bool = true,
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) -> ObservedValues<Value> {
        let stream = ValueStream<Value>()
        stream.attach(
            _observe(
                chain: chain, observer: stream, options: includingCurrent ? .initial : [], queue: queue,
                fileID: fileID, line: line, kind: .values
            ) { observer, root, delivered in
                // Deliveries pass the observer given at creation, alive.
                guard observer != nil else { return }
                let model = unsafeDowncast(root, to: Self.self)
                let value = chain.deliveredValue(delivered, on: model)
                _withObserver(observer, as: ValueStream<Value>.self) { $0.push(value) }
            })
        return ObservedValues(stream: stream)
    }

    /// An asynchronous sequence of the value at the end of a dotted string key path, one per
    /// tick in which anything along the path changed.
    ///
    /// ```swift
    /// for await zipCode in try cache.values(of: "currentUser.address.zipCode", as: String.self) {
    ///     print(zipCode ?? "no address")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The dotted path, rooted at the receiver.
    ///   - type: The endpoint's type.
    ///   - includingCurrent: Whether the first element is the value now; true by default.
    ///   - queue: Whose ticks produce the elements; the main queue by default.
    ///   - fileID: The file that asks for the sequence (the default), named by the debugging aids.
    ///   - line: The line that asks for the sequence (the default), named by the debugging aids.
    /// - Returns: The sequence; each element is nil while the endpoint is unreachable, holds
    ///   another type, or the path has a `*` (which names no single value).
    /// - Throws: ``KeyPathError`` naming the bad component and the type it was looked up on.
    /// - Complexity: O(*n*) in the path's length per element.
    public func values<Value: Sendable>(
        of path: String,
        as type: Value.Type,
        includingCurrent: Bool = true,
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) throws(KeyPathError) -> ObservedValues<Value?> {
        let parsed = try StringKeyPath.parse(path, root: self)
        let stream = ValueStream<Value?>()
        let options: ObservationOptions = includingCurrent ? .initial : []
        stream.attach(
            _observe(
                _ObserverSubscription(
                    root: self, observer: stream, target: .paths([parsed]), options: options, queue: queue,
                    site: CreationSite(fileID: fileID, line: line, kind: .values, options: options),
                    callback: { stream, model in
                        guard case .value(let value) = parsed.endpoint(from: model) else {
                            stream.push(nil)
                            return
                        }
                        stream.push(value as? Value)
                    })))
        return ObservedValues(stream: stream)
    }
}
