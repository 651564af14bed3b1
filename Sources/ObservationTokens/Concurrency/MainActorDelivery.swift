import Dispatch
import Synchronization

/// Runs `@MainActor` callbacks from the library's `@Sendable` delivery path.
///
/// A delivery that already runs on the main actor (a `.main` queue's drain, or a `drain()`
/// called from main-actor code) calls the callback synchronously, inside the drain. A delivery
/// that runs anywhere else (a `.dispatch` queue, a `drain()` on another thread, an `.immediate`
/// token set on another thread) hops: it schedules the callback with `DispatchQueue.main.async`
/// and returns; the hopped callback is skipped if the token ended in the meantime.
enum MainActorDelivery {
    /// Marks the main queue, which is the main actor's executor. On Linux a program that runs
    /// the main queue with `dispatchMain()` services it from a worker thread, so the main
    /// queue, not the main thread, is what identifies the main actor (libdispatch also counts
    /// the main thread's own code as running on the main queue).
    private static let mainQueueKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    /// Whether the calling code runs on the main actor's executor.
    static var isOnMainActor: Bool {
        DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// Runs a main-actor tracking closure (the read and the callback in one) where a delivery
    /// runs, which must be the main actor: its reads are what the token watches, so it can't be
    /// sent there for later. Elsewhere: a debug build traps naming the fix; a release build
    /// skips the run and logs once.
    static func runTracking(at fileID: StaticString, _ line: UInt, _ body: @MainActor () -> Void) {
        guard isOnMainActor else {
            let message =
                "a main-actor tracking closure (observe(isolation: MainActor.shared) { … } at \(fileID):\(line)) ran off the main actor; deliver it through the main queue, or a .manual queue drained on the main actor"
            _reportMisuse(message)
            if offMainReported.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
                _logMisuse(message)
            }
            return
        }
        MainActor.assumeIsolated { body() }
    }

    private static let offMainReported = Atomic<Bool>(false)
}

/// Carries values that the library hands from the delivering thread to the main actor, as
/// the setting thread already handed them to the delivering thread.
struct MainActorHandOff<Value>: @unchecked Sendable {
    let value: Value
}

/// The link between a `@MainActor` callback and the subscription that runs it, so that a
/// hopped delivery can check that its token is still active when the main actor runs it.
///
/// The gate holds the subscription strongly: subscription → callback → gate → subscription is
/// a cycle only while the observation is active; ending it releases the callback, and so the
/// gate.
final class MainActorGate: Sendable {
    private let subscription = Locked<Subscription?>(state: nil)

    /// Links the gate to the token's subscription, once the token exists.
    func attach(_ token: ObservationToken) -> ObservationToken {
        subscription.withLock { $0 = token.subscription }
        return token
    }

    /// False once the linked observation ended; true before a link exists (`.initial`) and for
    /// `tell` observations, which end with their observer (the hop checks that too).
    var isActive: Bool {
        subscription.withLock { $0?.isActive ?? true }
    }

    /// A callback of one argument that runs `callback` on the main actor.
    func wrap<A>(_ callback: @escaping @MainActor @Sendable (A) -> Void) -> @Sendable (A) -> Void {
        { a in
            let arguments = MainActorHandOff(value: a)
            if MainActorDelivery.isOnMainActor {
                MainActor.assumeIsolated { callback(arguments.value) }
                return
            }
            DispatchQueue.main.async {
                guard self.isActive else { return }
                MainActor.assumeIsolated { callback(arguments.value) }
            }
        }
    }

    /// A callback of two arguments that runs `callback` on the main actor.
    func wrap<A, B>(_ callback: @escaping @MainActor @Sendable (A, B) -> Void) -> @Sendable (A, B) -> Void {
        { a, b in
            let arguments = MainActorHandOff(value: (a, b))
            if MainActorDelivery.isOnMainActor {
                MainActor.assumeIsolated { callback(arguments.value.0, arguments.value.1) }
                return
            }
            DispatchQueue.main.async {
                guard self.isActive else { return }
                MainActor.assumeIsolated { callback(arguments.value.0, arguments.value.1) }
            }
        }
    }

    func wrap<A, B, C>(_ callback: @escaping @MainActor @Sendable (A, B, C) -> Void) -> @Sendable (A, B, C) -> Void {
        { a, b, c in
            let arguments = MainActorHandOff(value: (a, b, c))
            if MainActorDelivery.isOnMainActor {
                MainActor.assumeIsolated { callback(arguments.value.0, arguments.value.1, arguments.value.2) }
                return
            }
            DispatchQueue.main.async {
                guard self.isActive else { return }
                MainActor.assumeIsolated { callback(arguments.value.0, arguments.value.1, arguments.value.2) }
            }
        }
    }
}
