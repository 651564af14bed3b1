// Fixtures for the key path, string key path and change value tests (issue 3).
// Every type is prefixed with `Path` so other test files can't clash with them.

import Synchronization

@testable import ObservationTokens

// MARK: - User cache (EBNObservable's example)

final class PathAddress: ObservableModel {
    @Observed var zipCode = ""
    @Observed var city = ""
    @Observed var label: String?

    init(zipCode: String = "", label: String? = nil) {
        super.init()
        self.zipCode = zipCode
        self.label = label
    }
}

/// A protocol that both model and plain objects adopt, so a property typed with it can hold
/// something that is not observable at run time.
protocol PathContact: AnyObject {}

/// Not an `ObservableModel`: a path that meets it ends there, as if it had met nil.
final class PathPlainContact: PathContact {
    var zipCode = "plain"
}

final class PathModelContact: ObservableModel, PathContact {
    @Observed var zipCode = ""

    init(zipCode: String = "") {
        super.init()
        self.zipCode = zipCode
    }
}

/// Not an `ObservableModel`, stored in an `AnyObject?` property.
final class PathPlainObject {
    var zipCode = "plain"
}

final class PathUser: ObservableModel {
    @Observed var name = ""
    @Observed var address: PathAddress?
    /// A non-optional intermediate.
    @Observed var primaryAddress = PathAddress()
    /// May hold a model or any other object; only run time can tell.
    @Observed var anything: AnyObject?
    /// A protocol-typed property that may hold a model or a plain object.
    @Observed var contact: (any PathContact)?
    /// For the reserved element syntax (`array.4`).
    @Observed var array: [Int] = []

    init(name: String = "", address: PathAddress? = nil) {
        super.init()
        self.name = name
        self.address = address
    }

    /// Lets go of the address without the setter, as storage changed behind the library's
    /// back does (`propertyDidChange(_:)` exists for that case). If nothing else holds the
    /// address, it deinitializes while paths are still attached to it.
    func dropAddressBehindTheSettersBack() {
        let old = _address.value
        withExtendedLifetime(old) {
            _address.value = nil
        }
        // `old` is released here, after the access to the storage has ended.
    }
}

final class PathUserCache: ObservableModel {
    @Observed var currentUser: PathUser?

    init(currentUser: PathUser? = nil) {
        super.init()
        self.currentUser = currentUser
    }
}

// MARK: - Six levels, optional and non-optional intermediates

// PathLevel1.next? → PathLevel2.next → PathLevel3.next? → PathLevel4.next → PathLevel5.next? → PathLevel6.value
// Each initializer builds the rest of the tree, with `leaf` as the value at the end.

final class PathLevel6: ObservableModel {
    @Observed var value = 0

    init(value: Int = 0) {
        super.init()
        self.value = value
    }
}

final class PathLevel5: ObservableModel {
    @Observed var next: PathLevel6?
    @Observed var note = ""

    init(leaf: Int = 0) {
        super.init()
        next = PathLevel6(value: leaf)
    }
}

final class PathLevel4: ObservableModel {
    @Observed var next: PathLevel5

    init(leaf: Int = 0) {
        _next = Observed(wrappedValue: PathLevel5(leaf: leaf))
        super.init()
    }
}

final class PathLevel3: ObservableModel {
    @Observed var next: PathLevel4?

    init(leaf: Int = 0) {
        super.init()
        next = PathLevel4(leaf: leaf)
    }
}

final class PathLevel2: ObservableModel {
    @Observed var next: PathLevel3

    init(leaf: Int = 0) {
        _next = Observed(wrappedValue: PathLevel3(leaf: leaf))
        super.init()
    }
}

final class PathLevel1: ObservableModel {
    @Observed var next: PathLevel2?

    init(leaf: Int = 0) {
        super.init()
        next = PathLevel2(leaf: leaf)
    }
}

/// A six-level tree and the chains of depth 2 … 6 that end at its leaf value.
///
/// A chain of depth `d` is rooted at level `7 - d`, so every depth runs through the same
/// objects at its end.
final class PathTree {
    let level1: PathLevel1

    init(leaf: Int) {
        level1 = PathLevel1(leaf: leaf)
    }

    // The objects the path runs through now (read from the root each time).
    var level2: PathLevel2? { level1.next }
    var level3: PathLevel3? { level2?.next }
    var level4: PathLevel4? { level3?.next }
    var level5: PathLevel5? { level4?.next }
    var level6: PathLevel6? { level5?.next }

    /// The object at `level` (1 … 6), if the path reaches it.
    func object(atLevel level: Int) -> ObservableModel? {
        switch level {
        case 1: level1
        case 2: level2
        case 3: level3
        case 4: level4
        case 5: level5
        case 6: level6
        default: nil
        }
    }

    /// Observes the chain of `depth` segments that ends at the leaf value.
    func observeChain(
        depth: Int, options: ObservationOptions = [], queue: CoalescingQueue,
        _ callback: @escaping @Sendable (Int?) -> Void
    ) -> (token: ObservationToken, segments: Int) {
        switch depth {
        case 2:
            let chain = KeyPathChain(\PathLevel5.next).then(\.value)
            let token = level5!.observe(.chain(chain), options: options, queue: queue) { _, value in callback(value) }
            return (token, chain.count)
        case 3:
            let chain = KeyPathChain(\PathLevel4.next).then(\.next).then(\.value)
            let token = level4!.observe(.chain(chain), options: options, queue: queue) { _, value in callback(value) }
            return (token, chain.count)
        case 4:
            let chain = KeyPathChain(\PathLevel3.next).then(\.next).then(\.next).then(\.value)
            let token = level3!.observe(.chain(chain), options: options, queue: queue) { _, value in callback(value) }
            return (token, chain.count)
        case 5:
            let chain = KeyPathChain(\PathLevel2.next).then(\.next).then(\.next).then(\.next).then(\.value)
            let token = level2!.observe(.chain(chain), options: options, queue: queue) { _, value in callback(value) }
            return (token, chain.count)
        case 6:
            let chain = KeyPathChain(\PathLevel1.next).then(\.next).then(\.next).then(\.next).then(\.next)
                .then(\.value)
            let token = level1.observe(.chain(chain), options: options, queue: queue) { _, value in callback(value) }
            return (token, chain.count)
        default:
            preconditionFailure("no chain of depth \(depth)")
        }
    }

    /// Changes the path element held by the object at `level`: for levels 1 … 5 the `next`
    /// object is replaced by a fresh subtree ending in `leaf`; for level 6 the value is set.
    func replaceElement(atLevel level: Int, leaf: Int) {
        switch level {
        case 1: level1.next = PathLevel2(leaf: leaf)
        case 2: level2!.next = PathLevel3(leaf: leaf)
        case 3: level3!.next = PathLevel4(leaf: leaf)
        case 4: level4!.next = PathLevel5(leaf: leaf)
        case 5: level5!.next = PathLevel6(value: leaf)
        case 6: level6!.value = leaf
        default: preconditionFailure("no level \(level)")
        }
    }
}

// MARK: - Self-referencing node (paths that loop back through their root)

final class PathNode: ObservableModel {
    @Observed var next: PathNode?
    @Observed var value = 0

    init(value: Int = 0) {
        super.init()
        self.value = value
    }
}

// MARK: - Fan-out through a non-final `*` ("b.*.s4")

final class PathS4Holder: ObservableModel {
    @Observed var s4 = 0
    @Observed var other = 0
}

final class PathNoS4: ObservableModel {
    @Observed var unrelated = 0
}

final class PathHub: ObservableModel {
    @Observed var first: PathS4Holder? = PathS4Holder()
    @Observed var second = PathS4Holder()
    @Observed var plain = PathNoS4()
    @Observed var count = 0
}

final class PathHubRoot: ObservableModel {
    @Observed var b = PathHub()
}

// MARK: - Change values

final class PathAccount: ObservableModel {
    @Observed var balance = 0
    @Observed var nickname: String?
    @Observed var owner = PathPerson(name: "first")
    @Observed var coOwner: PathPerson?

    /// Changes the balance behind the setter's back, then tells the observers with the old value.
    func depositBehindTheSetter(_ amount: Int) {
        let old = _balance.storedValue
        _balance.storedValue = old + amount
        propertyDidChange(\.balance, from: old)
    }
}

/// A plain class value (not a model), compared by identity.
final class PathPerson: Sendable {
    let name: String

    init(name: String) {
        self.name = name
    }
}

// MARK: - Recording callbacks

/// Records what callbacks saw, in order. Callbacks may run on any thread, so it locks.
final class PathRecorder<Element: Sendable>: Sendable {
    private let storage = RelLock<[Element]>([])

    func record(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    var values: [Element] {
        storage.withLock { $0 }
    }

    var count: Int {
        storage.withLock { $0.count }
    }
}

extension ObservableModelBase {
    /// Properties of this object with live observation edges; 0 when none (test hook).
    var pathEdgeCount: Int {
        observedPropertyCount
    }
}
