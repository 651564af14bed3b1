import ObservationTokens

// Models for the tracking tests. `@unchecked Sendable`: each test touches its models on its own
// thread, or (the stress test) under a lock of its own; never from two threads unsynchronized.

final class TrackPerson: ObservableModel, @unchecked Sendable {
    @Observed var firstName = ""
    @Observed var lastName = ""
    @Observed var showsLastName = true
    @Observed var address: TrackAddress? = nil
    @Observed var items: [String] = []
    /// A plain stored property: not observable.
    var nickname = ""
    /// A constant: not observable.
    let id = 7

    /// Computed over two `@Observed` properties.
    var fullName: String { firstName + " " + lastName }
    /// Computed over a computed property and a branch.
    var label: String { showsLastName ? fullName : firstName }
    /// Computed through another object.
    var city: String { address?.city ?? "-" }
    /// Computed over plain properties only.
    var plainLabel: String { nickname + "!" }
}

final class TrackAddress: ObservableModel, @unchecked Sendable {
    @Observed var city = ""
    @Observed var zip = ""
    let country = "NZ"
}

/// A linked node, for composed optional key paths such as `\.next?.next?.value`.
final class TrackNode: ObservableModel, @unchecked Sendable {
    @Observed var next: TrackNode? = nil
    @Observed var value = 0
    let constant: TrackNode? = nil

    /// Replaces `next` through its storage, telling no one.
    func replaceNextSilently(_ node: TrackNode?) {
        _next.storedValue = node
    }

    /// A chain of `count` nodes after this one; returns the last.
    @discardableResult
    func link(_ count: Int) -> TrackNode {
        var node = self
        for _ in 0..<count {
            let next = TrackNode()
            node.next = next
            node = next
        }
        return node
    }
}

/// Settings a tracking closure reads next to a person (two roots).
final class TrackSettings: ObservableModel, @unchecked Sendable {
    @Observed var showsFullName = false
}

/// A reference-typed value, for the `===` rule of value tokens.
final class TrackBox: Sendable {
    let text: String
    init(_ text: String) { self.text = text }
}

final class TrackHolder: ObservableModel, @unchecked Sendable {
    @Observed var box = TrackBox("a")
}
