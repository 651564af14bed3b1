/// What changed in an ``ObservedDictionary`` since a token's last delivery.
///
/// Changes between two deliveries are folded per key: a key added and removed again in one
/// tick appears nowhere; one removed and added again is ``updated``.
///
/// ```swift
/// let token = settings.observe(.mutations) { settings, changes in
///     for key in changes.inserted.union(changes.updated) { apply(key, settings[key]) }
///     for key in changes.removed { reset(key) }
/// }
/// ```
public struct DictionaryChanges<Key: Hashable>: Hashable {
    /// Keys that have a value now and had none at the last delivery.
    public var inserted: Set<Key> = []
    /// Keys that had a value at the last delivery and have none now.
    public var removed: Set<Key> = []
    /// Keys whose value was changed (and that have one now and had one then).
    public var updated: Set<Key> = []

    /// Creates a change list; the library makes these, tests may too.
    public init(inserted: Set<Key> = [], removed: Set<Key> = [], updated: Set<Key> = []) {
        self.inserted = inserted
        self.removed = removed
        self.updated = updated
    }

    /// Whether nothing changed (an `.initial` delivery, `fire()`, or changes that cancelled out).
    public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && updated.isEmpty }
}

extension DictionaryChanges: Sendable where Key: Sendable {}
