// Mirrors for the synthetic property wrappers. A model's own mirror lists its stored
// properties, the wrappers among them; without these, a mirror walk (Swift Testing's, for the
// values of a failed `#expect`) went on into the cached value's bookkeeping, the registries of
// the objects the computation read and their owners, and crashed on the owner of one that had
// deinitialized.

extension ComputedState {
    /// The cached value and whether it is valid, read under the lock without computing anything.
    var reflectedChildren: KeyValuePairs<String, Any> {
        let (isValid, cached) = withLock { book in (book.isValid, book.hasValue ? storage.pointee : nil) }
        return ["isValid": isValid, "cachedValue": cached as Any]
    }
}

extension Computed: CustomReflectable {
    /// The property as a mirror shows it: whether its cached value is valid, and the cached
    /// value (`nil` before the first computation).
    ///
    /// Test frameworks and debuggers walk a value's mirror to describe it (Swift Testing does for
    /// the values of a failed `#expect`), and a model's mirror lists its `@Computed` properties'
    /// storage. The mirror reads the cache without computing anything and stops there: it does
    /// not reflect the dependencies, whose objects may have deinitialized.
    ///
    /// ```swift
    /// final class Person: ObservableModel {
    ///     @Observed var name = "Ada"
    ///     @Computed({ (person: Person) in person.name.uppercased() }) var title: String
    /// }
    /// let person = Person()
    /// _ = person.title
    /// let storage = Mirror(reflecting: person).children.first { $0.label == "_title" }!.value
    /// let labels = Mirror(reflecting: storage).children.map(\.label)
    /// // labels == ["isValid", "cachedValue"]
    /// ```
    ///
    /// - Complexity: O(1), plus a copy of the cached value.
    /// - Note: Safe from any thread; reads the cache under its lock, runs no user code.
    public var customMirror: Mirror {
        Mirror(self, children: state.reflectedChildren, displayStyle: .struct)
    }
}

extension Lazy: CustomReflectable {
    /// The property as a mirror shows it: whether its loaded value is valid, and the value
    /// (`nil` before the first load).
    ///
    /// Like ``Computed``'s mirror, it reads the cache without loading anything and stops there.
    ///
    /// ```swift
    /// final class Document: ObservableModel {
    ///     @Lazy({ (document: Document) in "thumbnail" }) var thumbnail: String
    /// }
    /// let document = Document()
    /// let storage = Mirror(reflecting: document).children.first { $0.label == "_thumbnail" }!.value
    /// let labels = Mirror(reflecting: storage).children.map(\.label)
    /// // labels == ["isValid", "cachedValue"]
    /// ```
    ///
    /// - Complexity: O(1), plus a copy of the cached value.
    /// - Note: Safe from any thread; reads the cache under its lock, runs no user code.
    public var customMirror: Mirror {
        Mirror(self, children: state.reflectedChildren, displayStyle: .struct)
    }
}

extension Hybrid: CustomReflectable {
    /// The property as a mirror shows it: whether its value (computed or set) is valid, and the
    /// value (`nil` before the first computation or set).
    ///
    /// Like ``Computed``'s mirror, it reads the cache without computing anything and stops there.
    ///
    /// ```swift
    /// final class Label: ObservableModel {
    ///     @Observed var name = "Ada"
    ///     @Hybrid({ (label: Label) in label.name.uppercased() }) var title: String
    /// }
    /// let label = Label()
    /// label.title = "Custom"
    /// let storage = Mirror(reflecting: label).children.first { $0.label == "_title" }!.value
    /// let labels = Mirror(reflecting: storage).children.map(\.label)
    /// // labels == ["isValid", "cachedValue"]
    /// ```
    ///
    /// - Complexity: O(1), plus a copy of the cached value.
    /// - Note: Safe from any thread; reads the cache under its lock, runs no user code.
    public var customMirror: Mirror {
        Mirror(self, children: state.reflectedChildren, displayStyle: .struct)
    }
}
