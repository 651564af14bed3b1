extension ModelObserving where Self: ObservableModelBase {
    /// Marks a synthetic (`@Computed`) property invalid, and the computed properties that read it.
    ///
    /// Computes nothing: the next read recomputes it, and its tokens compare what they saw with
    /// the new value when they are delivered. Invalidating a property that is not synthetic (an
    /// `@Observed` or plain one), or one never read, does nothing: there is no cache to drop.
    ///
    /// ```swift
    /// person.invalidate(\.fullName)
    /// ```
    ///
    /// - Parameter keyPath: The property. It is found by reading it in a mode where computed
    ///   properties return their cached value without computing, and one never computed returns
    ///   an empty value of its type (`nil`, `0`, `""`, `[]`, …) — a type with no such value is
    ///   computed once, the only case where this call computes anything.
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
            _syntheticState(for: keyPath, among: fields)?.invalidate(owner: self, inDeinit: false)
        }
    }

    /// Whether the synthetic property at `keyPath` has a valid cached value (a read returns it
    /// without computing). False for a property never read, and for a key path that names no
    /// synthetic property.
    ///
    /// ```swift
    /// person.invalidate(\.fullName)
    /// person.isValid(\.fullName)   // false
    /// _ = person.fullName
    /// person.isValid(\.fullName)   // true
    /// ```
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public func isValid<Value>(_ keyPath: KeyPath<Self, Value>) -> Bool {
        let fields = SyntheticFields.fields(of: self)
        return _syntheticState(for: keyPath, among: fields)?.isValid ?? false
    }

    /// Which synthetic state `keyPath` names, found by a probing read: computed getters return
    /// their cached value, valid or not, without computing; one never computed returns its
    /// type's empty value instead (`EmptyValue`) — or, for a type with none, computes once. An
    /// object none of whose synthetic properties ever computed has nothing to find: nothing is
    /// read at all.
    private func _syntheticState(
        for keyPath: AnyKeyPath, among fields: [SyntheticFields.Field]
    ) -> (any SyntheticStateProtocol)? {
        guard fields.contains(where: { $0.state.hasValue }), let partial = keyPath as? PartialKeyPath<Self> else {
            return nil
        }
        let recording = SyntheticFrame.probe { AccessCapture.capture { _ = self[keyPath: partial] }.recording }
        guard let access = recording.first, access.object == ObjectIdentifier(self) else { return nil }
        return fields.first { $0.state.serial == access.serial }?.state
    }

    /// Marks every synthetic property of the object invalid.
    ///
    /// - Complexity: O(*f*) in the object's stored properties.
    public func invalidateSyntheticProperties() {
        for field in SyntheticFields.fields(of: self) { field.state.invalidate(owner: self, inDeinit: false) }
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
