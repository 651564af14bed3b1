/// What changed in an ``ObservedSet`` since a token's last delivery: the members added and
/// the members removed. A member added and removed again in one tick appears in neither.
///
/// ```swift
/// let token = tags.observe(.mutations) { tags, changes in
///     print("added", changes.inserted, "removed", changes.removed)
/// }
/// ```
public struct SetChanges<Element: Hashable>: Hashable {
    /// Members now that were not members at the last delivery.
    public var inserted: Set<Element> = []
    /// Members at the last delivery that are not members now.
    public var removed: Set<Element> = []

    /// Creates a change list; the library makes these, tests may too.
    public init(inserted: Set<Element> = [], removed: Set<Element> = []) {
        self.inserted = inserted
        self.removed = removed
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty }
}

extension SetChanges: Sendable where Element: Sendable {}
