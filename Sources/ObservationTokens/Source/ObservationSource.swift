/// What a token observes, apart from how it is delivered.
///
/// Every `observe` call names a source and a delivery. The source says what is watched and
/// what the callback receives besides the object (its *payload*); the delivery — the rest of the
/// call's arguments — says on whose behalf (`observer:`), where (`queue:`), in which isolation
/// (`isolation: MainActor.shared`) and with which options. Any source works with any delivery:
///
/// ```swift
/// let person = Person()
/// let tokens = [
///     person.observe(\.name) { person in print(person.name) },                  // a property
///     person.observe([\.name, \.age]) { person in print(person.name) },         // several
///     person.observe(.changes(\.age)) { _, change in print(change.old, "→", change.new) },
///     person.observe(.chain(\.friend).then(\.?.name)) { _, name in print(name ?? "-") },
///     try person.observe(.path("friend.name")) { person in print(person.name) },
///     person.observe(.value { $0.name.count }) { _, count in print(count) },
/// ]
/// ```
///
/// Sources, by kind (each documented where it is declared):
/// - properties: a key path (`observe(\.name)`), a list (`[\.name, \.age]`, an array literal of
///   key paths), ``changes(_:)-(KeyPath<Root,Value>)`` (with old and new values),
///   ``whichOf(_:)`` (which of them changed), ``all`` (every property), ``willChange`` (before
///   each set);
/// - paths: ``chain(_:)-(KeyPath<Root,Value>)`` (typed, with `then`), ``chains(_:)``,
///   ``endpoint(of:)``, ``path(_:)`` and ``paths(_:)`` (string key paths);
/// - reads: ``tracking(_:)`` (whatever a closure reads), ``value(_:)`` (a value computed from
///   what it reads, delivered when it changes), ``changes(of:)`` (the same with the last value);
/// - collections: `mutations`, `element(at:)`, `object(at:)`, `each(_:)`, `key(_:)`, `member(_:)`
///   on ``ObservedArray``, ``ObservedDictionary`` and ``ObservedSet``.
///
/// A source is a description: nothing is observed until an `observe` call starts it, and one
/// source value can start several tokens.
public struct ObservationSource<Root: ObservableModel, Payload> {
    /// Starts a token on `root` that delivers through `delivery`.
    @usableFromInline
    let start: (Root, _ObservationDelivery<Root, Payload>) -> ObservationToken
    /// The ``KeyPathChain`` a chain source was made of (`KeyPathChain<Root, Payload>`), which
    /// `then` extends; nil for other sources.
    @usableFromInline
    let chain: Any?

    @inlinable
    init(chain: Any? = nil, start: @escaping (Root, _ObservationDelivery<Root, Payload>) -> ObservationToken) {
        self.chain = chain
        self.start = start
    }
}

extension ObservationSource: ExpressibleByArrayLiteral where Payload == Void {
    /// Several `@Observed` properties of the object, as one token: one callback per tick,
    /// however many of them changed.
    ///
    /// ```swift
    /// let token = person.observe([\.firstName, \.lastName]) { person in
    ///     print(person.firstName, person.lastName)
    /// }
    /// ```
    ///
    /// Each key path must name one `@Observed` (or `@Computed`) property of the object: anything
    /// else traps in a debug build, naming it (an ended token in a release build). An empty list
    /// traps too.
    public init(arrayLiteral keyPaths: PartialKeyPath<Root>...) {
        self.init(keyPaths: keyPaths)
    }

    /// The list source for key paths held in an array (`observe(.properties(keyPaths))`).
    init(keyPaths: [PartialKeyPath<Root>]) {
        self.init { root, delivery in
            root._observeList(keyPaths, delivery: delivery)
        }
    }

    /// Several `@Observed` properties of the object, from an array of key paths (an array
    /// literal says the same more briefly: `observe([\.a, \.b])`).
    ///
    /// - Parameter keyPaths: `@Observed` properties of the object.
    public static func properties(_ keyPaths: [PartialKeyPath<Root>]) -> Self {
        Self(keyPaths: keyPaths)
    }
}
