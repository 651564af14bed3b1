import Synchronization

@testable import ObservationTokens

// Fixtures of the binding and pipeline tests. Every name starts with `Bind`.

/// A point that is not `Equatable`: every set counts as a change, so a binding that echoed its
/// own writes would loop.
struct BindPoint: Sendable {
    var x = 0
    var y = 0
}

/// A person with a friend (for destination paths) and a struct value.
///
/// `@unchecked Sendable`: callbacks are `@Sendable` and capture models; the tests never set a
/// property on one thread while another thread reads or sets it.
final class BindPerson: ObservableModel, @unchecked Sendable {
    @Observed var name = ""
    @Observed var age = 0
    @Observed var point = BindPoint()
    @Observed var friend: BindPerson? = nil
    @Observed var nickname = ""
    /// Counts writes that reached the storage of `name` through the setter.
    let nameWrites = BindCounter()
    /// A plain stored property: not observable.
    var plain = ""

    init(name: String = "", age: Int = 0) {
        _name = Observed(wrappedValue: name)
        _age = Observed(wrappedValue: age)
        super.init()
    }

    /// Sets `name` and counts the write.
    func setName(_ name: String) {
        nameWrites.increment()
        self.name = name
    }
}

/// A plain (not observable) destination, which counts its writes.
///
/// `@unchecked Sendable`: see ``BindPerson``.
final class BindLabel: @unchecked Sendable {
    var text = "" { didSet { textWrites.increment() } }
    var subtitle: String?
    var isHidden = false
    var count = 0
    var point = BindPoint() { didSet { pointWrites.increment() } }
    let textWrites = BindCounter()
    let pointWrites = BindCounter()
}

/// A model destination for group bindings.
///
/// `@unchecked Sendable`: see ``BindPerson``.
final class BindCard: ObservableModel, @unchecked Sendable {
    @Observed var title = ""
    @Observed var years = 0
    @Observed var subtitle = "untouched"
    @Observed var caption: String? = nil
}

/// A thread-safe counter.
final class BindCounter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}

/// A thread-safe list of what happened, in order.
final class BindLog<Element: Sendable>: Sendable {
    private let storage = RelLock<[Element]>([])
    var values: [Element] { storage.withLock { $0 } }
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
}

/// An object a closure captures, so a test can see the closure released.
final class BindProbe: Sendable {
    func touch() {}
}

/// A shape that is not `Equatable`, for cycles of values that can't be compared.
struct BindShape: Sendable {
    var size = 0
}

/// Counts every write a member of a cycle takes (equal values too) and, past `limit`, ends the
/// cycle's tokens: a cycle that would loop forever stops, and the test fails instead of hanging.
///
/// `@unchecked Sendable`: the cycle tests set and drain on one thread; `count` is atomic.
final class BindBreaker: @unchecked Sendable {
    var limit: Int
    private let count = Atomic<Int>(0)
    var tokens: [ObservationToken] = []
    private(set) var tripped = false

    init(limit: Int) {
        self.limit = limit
    }

    var writes: Int { count.load(ordering: .relaxed) }

    func wrote() {
        guard count.add(1, ordering: .relaxed).newValue > limit, !tripped else { return }
        tripped = true
        for token in tokens { token.invalidate() }
    }
}

/// A member of a cycle of bindings. Bindings read and write `text` and `shape`, which are
/// computed over `@Observed` storage (so bindings watch the storage) and count every write.
///
/// `@unchecked Sendable`: see ``BindPerson``.
final class BindNode: ObservableModel, @unchecked Sendable {
    @Observed var storedText = ""
    @Observed var storedShape = BindShape()
    let breaker: BindBreaker

    init(breaker: BindBreaker) {
        self.breaker = breaker
        super.init()
    }

    var text: String {
        get { storedText }
        set {
            breaker.wrote()
            storedText = newValue
        }
    }

    var shape: BindShape {
        get { storedShape }
        set {
            breaker.wrote()
            storedShape = newValue
        }
    }
}
