import Synchronization

/// The state behind one ``ObservedValues`` sequence: the token, the latest undelivered value,
/// and the waiting consumer.
///
/// A slot, not a buffer: a value the consumer hasn't taken yet is replaced by the next one, so
/// a slow consumer sees the latest value, never a backlog. The token's callback (on the
/// queue's target) fills the slot or hands the value to a waiting consumer; the consumer's
/// `next()` empties it or waits. The stream is the token's observer, held weakly, so the
/// observation ends when the last iterator (and sequence) holding the stream goes away.
@usableFromInline
final class ValueStream<Element: Sendable>: ObservedObjectDeinitObserver, Sendable {
    // Internal and `@usableFromInline` so that `push` and `next()` are specialized in the
    // caller's module: unspecialized, each call looks up the metadata of these generic types.
    @usableFromInline
    struct State {
        @usableFromInline var latest: Element?
        @usableFromInline var hasLatest = false
        @usableFromInline var finished = false
        @usableFromInline var waiter: CheckedContinuation<Element?, Never>?
        @usableFromInline var token: ObservationToken?

        @usableFromInline
        init() {}
    }

    @usableFromInline
    let state = Locked(state: State())

    /// Creates an empty stream; `finished` makes one that ends at once.
    @usableFromInline
    init(finished: Bool = false) {
        state.withLock { $0.finished = finished }
    }

    deinit {
        // Ends the token at once: the sequence and its iterators are gone.
        let token = state.withLock { $0.token.take() }
        token?.invalidate()
    }

    /// Keeps the token that feeds this stream. A stream finished before (its object went away
    /// during `.initial`) ends the token at once.
    @usableFromInline
    func attach(_ token: ObservationToken) {
        let finished = state.withLock { state -> Bool in
            if state.finished { return true }
            state.token = token
            return false
        }
        if finished { token.invalidate() }
    }

    /// Called by the token with the value at delivery.
    @inlinable
    func push(_ value: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter.take() { return waiter }
            state.latest = value
            state.hasLatest = true
            return nil
        }
        waiter?.resume(returning: value)
    }

    /// The observed object went away: the sequence ends after the value still in the slot.
    @usableFromInline
    func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice) {
        finish(dropLatest: false)
    }

    /// Ends the sequence; `dropLatest` also forgets a value not taken yet (cancellation).
    @usableFromInline
    func finish(dropLatest: Bool) {
        let (waiter, token) = state.withLock { state in
            state.finished = true
            if dropLatest {
                state.latest = nil
                state.hasLatest = false
            }
            return (state.waiter.take(), state.token.take())
        }
        waiter?.resume(returning: nil)
        token?.invalidate()
    }

    /// The next value: the one in the slot, or the next delivered; nil once finished.
    @inlinable
    func next() async -> Element? {
        if Task.isCancelled {
            finish(dropLatest: true)
            return nil
        }
        // Fast path: a value is waiting (the consumer keeps up with the ticks, or is slower),
        // or the stream ended. No continuation, no cancellation handler.
        let (ready, value) = state.withLock { state -> (Bool, Element?) in
            if state.hasLatest {
                state.hasLatest = false
                return (true, state.latest.take())
            }
            return (state.finished, nil)
        }
        if ready { return value }
        return await waitForNext()
    }

    /// The slow path of `next()`: waits for a delivery, or for cancellation.
    @usableFromInline
    func waitForNext() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                // (resume now, with this value) or wait for a delivery.
                let (resumeNow, value) = state.withLock { state -> (Bool, Element?) in
                    if state.hasLatest {
                        state.hasLatest = false
                        return (true, state.latest.take())
                    }
                    if state.finished { return (true, nil) }
                    guard state.waiter == nil else {
                        // A second consumer: a programming error, trapped in debug builds; in
                        // release builds that consumer's sequence ends.
                        assertionFailure(
                            "ObservedValues: iterate one sequence from one task at a time; call values(of:) again for another consumer"
                        )
                        return (true, nil)
                    }
                    state.waiter = continuation
                    return (false, nil)
                }
                if resumeNow { continuation.resume(returning: value) }
            }
        } onCancel: {
            finish(dropLatest: true)
        }
    }
}
