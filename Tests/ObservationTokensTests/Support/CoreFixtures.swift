import Dispatch
import Foundation
import Synchronization

@testable import ObservationTokens

// Shared fixtures of the core rule tests (issue 2). Every name starts with `Core` so these
// fixtures can't clash with those of the other test suites.

// MARK: - Models

/// A person with observable names, age and address, plus a plain and a computed property.
///
/// `@unchecked Sendable`: callbacks are `@Sendable` and receive or capture models. The tests
/// never set a property on one thread while another thread reads or sets that property, which
/// is the synchronization the library asks of its users for property values; the library's
/// own bookkeeping is thread-safe.
final class CorePerson: ObservableModel, @unchecked Sendable {
    @Observed var firstName = ""
    @Observed var lastName = ""
    @Observed var age = 0
    @Observed var address: CoreAddress? = nil

    /// A plain stored property: not observable.
    var nickname = ""

    /// Changes `age` through its storage, without telling observers (`storedValue`).
    func setAgeSilently(_ age: Int) {
        _age.storedValue = age
    }

    /// A computed property over two observed properties: not observable by itself.
    var fullName: String { "\(firstName) \(lastName)" }
}

/// An address; also used as an observed object that another object holds.
///
/// `@unchecked Sendable`: see ``CorePerson``.
final class CoreAddress: ObservableModel, @unchecked Sendable {
    @Observed var street = ""
    @Observed var zip = ""
}

/// A model that counts its deinitializations.
///
/// `@unchecked Sendable`: see ``CorePerson``.
final class CoreCountedModel: ObservableModel, @unchecked Sendable {
    @Observed var value = 0
    let deinits: CoreCounter

    init(deinits: CoreCounter) {
        self.deinits = deinits
    }

    deinit {
        deinits.increment()
    }
}

/// A model that records every `observationStateDidChange` call as `"name+"` (first observer
/// arrived) or `"name-"` (last observer left), plus what introspection said at that moment.
///
/// `@unchecked Sendable`: see ``CorePerson``.
class CoreHookedModel: ObservableModel, ObservationStateObserving, @unchecked Sendable {
    @Observed var first = 0
    @Observed var second = 0
    @Observed var third = 0

    /// `"first+"`, `"first-"`, … in call order.
    let transitions = CoreRecorder<String>()
    /// `observerCount(ofProperty:)` read inside the hook, which takes the registry's lock.
    let countsSeenInHook = CoreRecorder<Int>()

    func observationStateDidChange(forProperty property: String, isObserved: Bool) {
        transitions.append("\(property)\(isObserved ? "+" : "-")")
        countsSeenInHook.append(observerCount(ofProperty: property))
    }
}

/// A subclass of ``CoreHookedModel``: it inherits the conformance.
final class CoreHookedSubclass: CoreHookedModel, @unchecked Sendable {}

// MARK: - Values for the equality rule

/// A class whose `==` always says "different": sets of the same instance must still fire
/// nothing, because class references are compared with `===`.
final class CoreNeverEqual: Equatable, Sendable {
    static func == (lhs: CoreNeverEqual, rhs: CoreNeverEqual) -> Bool { false }
}

/// A class whose `==` always says "equal": a distinct instance must still fire, because class
/// references are compared with `===`.
final class CoreAlwaysEqual: Equatable, Sendable {
    static func == (lhs: CoreAlwaysEqual, rhs: CoreAlwaysEqual) -> Bool { true }
}

/// A value type that is not `Equatable`: every set counts as a change.
struct CorePoint: Sendable {
    var x: Int
    var y: Int
}

/// An `Equatable` value whose `==` looks only at `id`, to prove `==` (not bitwise equality)
/// decides for `Equatable` values.
struct CoreTagged: Equatable, Sendable {
    var id: Int
    var note: String

    static func == (lhs: CoreTagged, rhs: CoreTagged) -> Bool { lhs.id == rhs.id }
}

/// One observable property of each kind the equality rule distinguishes.
///
/// `@unchecked Sendable`: see ``CorePerson``.
final class CoreValues: ObservableModel, @unchecked Sendable {
    @Observed var count = 0
    @Observed var name = ""
    @Observed var optionalCount: Int? = nil
    @Observed var neverEqual = CoreNeverEqual()
    @Observed var alwaysEqual = CoreAlwaysEqual()
    @Observed var optionalNeverEqual: CoreNeverEqual? = nil
    @Observed var optionalAlwaysEqual: CoreAlwaysEqual? = nil
    @Observed var point = CorePoint(x: 0, y: 0)
    @Observed var tagged = CoreTagged(id: 0, note: "")
    @Observed var address: CoreAddress? = nil
}

/// Pauses one chosen thread inside user code that the library calls, so a test can act on
/// another thread at a known point of a delivery.
final class CoreGate: Sendable {
    private let armedThread = RelLock<UInt?>(nil)
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    init() {}

    /// Makes the next ``pass()`` on the calling thread block until ``release()``.
    func arm() {
        armedThread.withLock { $0 = coreThreadID() }
    }

    /// Called from user code; blocks once on the armed thread.
    func pass() {
        let mustBlock = armedThread.withLock { armed -> Bool in
            guard armed == coreThreadID() else { return false }
            armed = nil
            return true
        }
        guard mustBlock else { return }
        entered.signal()
        released.wait()
    }

    /// Ends the armed thread's turn; wakes ``waitUntilEntered()`` even if it never blocked.
    func disarm() {
        let wasArmed = armedThread.withLock { armed -> Bool in
            defer { armed = nil }
            return armed != nil
        }
        if wasArmed { entered.signal() }
    }

    func waitUntilEntered() {
        entered.wait()
    }

    func release() {
        released.signal()
    }
}

/// An `Equatable` value whose `==` passes through a gate: the library compares values with
/// `==`, so a test can pause a thread inside a delivery.
struct CoreGatedValue: Equatable, Sendable {
    var id: Int
    let gate: CoreGate

    static func == (lhs: CoreGatedValue, rhs: CoreGatedValue) -> Bool {
        lhs.gate.pass()
        return lhs.id == rhs.id
    }
}

/// A model with one gated value.
///
/// `@unchecked Sendable`: see ``CorePerson``.
final class CoreGatedModel: ObservableModel, @unchecked Sendable {
    @Observed var value: CoreGatedValue

    init(gate: CoreGate) {
        _value = Observed(wrappedValue: CoreGatedValue(id: 0, gate: gate))
    }
}

// MARK: - Recording

/// A thread-safe, append-only log for callbacks.
final class CoreRecorder<Element: Sendable>: Sendable {
    private let storage = RelLock<[Element]>([])

    init() {}

    func append(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    var entries: [Element] {
        storage.withLock { $0 }
    }

    var count: Int {
        storage.withLock { $0.count }
    }

    var last: Element? {
        storage.withLock { $0.last }
    }
}

/// A thread-safe counter.
final class CoreCounter: Sendable {
    private let storage = Atomic<Int>(0)

    init() {}

    func increment() {
        storage.add(1, ordering: .relaxed)
    }

    var value: Int {
        storage.load(ordering: .relaxed)
    }
}

/// A flag that can be raised once, for resuming a continuation exactly once.
final class CoreOnce: Sendable {
    private let raised = Atomic<Bool>(false)

    init() {}

    /// Returns `true` for the first caller only.
    func claim() -> Bool {
        !raised.exchange(true, ordering: .acquiringAndReleasing)
    }
}

/// A thread-safe mutable slot, for tokens and objects that callbacks reach and replace.
final class CoreBox<Value: Sendable>: Sendable {
    fileprivate let storage: RelLock<Value>

    init(_ value: Value) {
        storage = RelLock(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Replaces the value and returns the old one, so it is released outside the lock.
    func take(replacingWith replacement: Value) -> Value {
        storage.withLock { value in
            let old = value
            value = replacement
            return old
        }
    }
}

extension CoreBox {
    /// Removes and returns the last element, releasing nothing under the lock.
    func popLast<Element>() -> Element? where Value == [Element] {
        storage.withLock { $0.popLast() }
    }
}

/// A weak reference to a token, for checking that tokens were freed.
struct CoreWeakToken: Sendable {
    weak var token: ObservationToken?

    init(_ token: ObservationToken) {
        self.token = token
    }
}

/// An object for a callback to capture: a `weak` reference to it turns nil exactly when the
/// library releases the callback closure.
final class CoreProbe: Sendable {
    init() {}

    /// Lets a closure use its capture, so the capture can't be optimized away.
    func touch() {}
}

// MARK: - Observers

/// A plain observer; callbacks receive it as their first argument.
final class CoreObserver: Sendable {
    let calls = CoreRecorder<String>()

    init() {}
}

/// An observer that adopts the dealloc protocol and records each notice.
final class CoreDeinitListener: ObservedObjectDeinitObserver, Sendable {
    let notices = CoreRecorder<ObservedObjectDeinitNotice>()

    init() {}

    func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice) {
        notices.append(notice)
    }
}

/// An owner that keeps its tokens in a `Set`, as an app's view or controller would.
final class CoreTokenOwner {
    var tokens = Set<ObservationToken>()
    let calls = CoreCounter()

    init() {}

    func watch(_ person: CorePerson, queue: CoalescingQueue) {
        person.observe(\.firstName, observer: self, queue: queue) { owner, _ in
            owner.calls.increment()
        }
        .store(in: &tokens)
    }
}

// MARK: - Threads

/// A number that identifies the calling thread while it runs.
func coreThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}

/// Runs `body(index)` for `0..<count`, each on its own dedicated thread; the threads start
/// together once all of them are ready, and the call returns when all have finished.
///
/// Dedicated threads (not a dispatch pool) so that blocking in `body` can't starve anything.
func coreRunOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        let thread = Thread {
            ready.signal()
            start.wait()
            body(index)
            finished.leave()
        }
        thread.start()
    }
    let starter = Thread {
        for _ in 0..<count { ready.wait() }
        for _ in 0..<count { start.signal() }
    }
    starter.start()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        finished.notify(queue: .global()) { continuation.resume() }
    }
}

/// Runs `body` on a dedicated thread and waits for it.
func coreOnAnotherThread(_ body: @escaping @Sendable () -> Void) async {
    await coreRunOnThreads(1) { _ in body() }
}

/// Returns after the main queue has run everything enqueued on it before this call.
func coreMainQueueTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async { continuation.resume() }
    }
}

/// A weak reference for leak checks: the test holds it while the object should go away.
final class WeakObserverBox: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
