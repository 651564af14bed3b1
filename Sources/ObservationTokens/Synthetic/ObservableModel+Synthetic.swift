extension ModelObserving where Self: ObservableModel {
    /// Marks a synthetic (`@Computed`) property invalid, and the computed properties that read it.
    ///
    /// The next read recomputes it; if tokens observe it, it is recomputed at the end of the
    /// tick and they hear of it only if the value changed. Invalidating a property that is not
    /// synthetic (an `@Observed` or plain one) does nothing: there is no cache to drop.
    ///
    /// ```swift
    /// person.invalidate(\.fullName)
    /// ```
    ///
    /// - Parameter keyPath: The property, read once to find which storage it names (a
    ///   computed property with a cached value returns it without computing).
    /// - Complexity: O(*f*) in the object's stored properties, plus O(1) per invalidated property.
    public func invalidate<Value>(_ keyPath: KeyPath<Self, Value>) {
        invalidate([keyPath])
    }

    /// Marks several synthetic properties invalid, as `invalidate(_:)` does for one.
    ///
    /// - Parameter keyPaths: The properties; those that are not synthetic are skipped.
    /// - Complexity: O(*f* · *k*) for *k* key paths.
    public func invalidate(_ keyPaths: [PartialKeyPath<Self>]) {
        let fields = SyntheticFields.fields(of: self)
        guard !fields.isEmpty else { return }
        for keyPath in keyPaths {
            let recording = SyntheticFrame.probe { AccessCapture.capture { _ = self[keyPath: keyPath] }.recording }
            guard let access = recording.first, access.object == ObjectIdentifier(self) else { continue }
            fields.first { $0.state.serial == access.serial }?.state.invalidate()
        }
    }

    /// Marks every synthetic property of the object invalid.
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public func invalidateSyntheticProperties() {
        for field in SyntheticFields.fields(of: self) { field.state.invalidate() }
    }

    /// Marks every synthetic property that has a cached value valid again, without computing.
    ///
    /// For code that knows the inputs did not really change. A property never computed stays
    /// invalid: there is no value to keep.
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public func forceSyntheticPropertiesValid() {
        for field in SyntheticFields.fields(of: self) { field.state.forceValid() }
    }

    /// The names of the synthetic properties whose cached values are valid.
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public var validSyntheticPropertyNames: Set<String> {
        Set(SyntheticFields.fields(of: self).filter { $0.state.isValid }.map(\.name))
    }

    /// The names of the synthetic properties that the next read recomputes.
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public var invalidSyntheticPropertyNames: Set<String> {
        Set(SyntheticFields.fields(of: self).filter { !$0.state.isValid }.map(\.name))
    }

    /// Whether any synthetic property of the object has a valid cached value.
    public var hasValidSyntheticProperties: Bool {
        SyntheticFields.fields(of: self).contains { $0.state.isValid }
    }
}
