import Dispatch
import Foundation
import ObservationTokens

/// Models for the concurrency suites: plain nonisolated models, as a Swift 6 user writes them.
final class ConcAddress: ObservableModel {
    @Observed var zipCode = ""
}

final class ConcPerson: ObservableModel {
    @Observed var name = ""
    @Observed var age = 0
    @Observed var address: ConcAddress?
}

/// A main-actor view model, the kind of object main-actor callbacks update.
@MainActor final class ConcViewModel {
    var title = ""
    var calls = 0
    var log: [String] = []

    func record(_ value: String) {
        title = value
        calls += 1
        log.append(value)
    }
}

/// Waits for one turn of the main queue: every block scheduled on it before this call has run.
func concMainQueueTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}

/// Runs `body` on a new thread and waits for it, blocking the caller: called from the main
/// actor, nothing scheduled on the main queue can run until `body` returns.
func concOnOtherThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
    let done = DispatchSemaphore(value: 0)
    let result = RelLock<Result?>(nil)
    let thread = Thread {
        result.withLock { $0 = body() }
        done.signal()
    }
    thread.start()
    done.wait()
    return result.withLock { $0! }
}
