extension ObservableModelBase {
    /// The names of the properties that have at least one observer right now, in declaration
    /// order; `"*"` stands for observations of every property.
    ///
    /// ```swift
    /// print(address.observedProperties)   // ["zipCode"]
    /// ```
    ///
    /// Reads no property values: names come from the class, cached after the first use.
    ///
    /// - Complexity: O(*p* + *o*) in the observable properties and the observed ones.
    public final var observedProperties: [String] {
        guard let registry = existingRegistry else { return [] }
        let serials = Set(registry.observedSerials)
        let table = PropertyTable(self)
        var names = table.observableNames.filter { name in
            table.serial(ofProperty: name, in: self).map(serials.contains) ?? false
        }
        if serials.contains(PathStep.wildcardSerial) { names.append("*") }
        return names
    }

    /// The number of observations that watch the named property, including those that watch
    /// `*` and paths that run through the property. Unknown names count 0.
    public final func observerCount(ofProperty name: String) -> Int {
        guard let registry = existingRegistry else { return 0 }
        if name == "*" { return registry.observerCount(ofSerial: PathStep.wildcardSerial) }
        guard let serial = PropertyTable(self).serial(ofProperty: name, in: self) else { return 0 }
        return registry.observerCount(ofSerial: serial)
    }

    /// Notifies the observers of the named property as if it had been set, for storage that
    /// changed without going through the setter. Unknown names do nothing. For a synthetic
    /// property this invalidates it, as `invalidate(_:)` does.
    ///
    /// Change tokens report `old == new`, since the old value is not known.
    public final func propertyDidChange(named name: String) {
        let table = PropertyTable(self)
        if let synthetic = table.syntheticEntry(named: name) {
            synthetic.state(in: self).invalidate(owner: self, inDeinit: false)
            return
        }
        guard hasEdges, let entry = table.entry(named: name) else {
            return
        }
        let current = entry.value(in: self)
        _propertyDidChange(serial: entry.serial(in: self)) { current }
    }
}

extension ModelObserving where Self: ObservableModelBase {
    /// The number of observations that watch `keyPath`, including `*` and paths through it.
    ///
    /// ```swift
    /// address.observerCount(of: \.zipCode)   // 2
    /// ```
    public func observerCount(of keyPath: PartialKeyPath<Self>) -> Int {
        guard let registry = existingRegistry,
            let serial = PathStep.key(TypedKey(partial: keyPath)).resolveSerial(on: self)
        else { return 0 }
        return registry.observerCount(ofSerial: serial)
    }

    /// Notifies the observers of `keyPath` as if it had been set: the manual trigger for
    /// storage changed without the setter. Paths through the property are retargeted.
    ///
    /// Change tokens report `old == new`, since the old value is not known.
    public func propertyDidChange(_ keyPath: PartialKeyPath<Self>) {
        guard hasEdges,
            let (serial, current) = PathStep.key(TypedKey(partial: keyPath)).resolve(on: self)
        else { return }
        _propertyDidChange(serial: serial) { current }
    }

    /// Notifies the observers of `keyPath` as if it had been set from `oldValue`: the manual
    /// trigger, for storage changed without the setter, with the value it had before, so change
    /// tokens report a real `old`.
    ///
    /// ```swift
    /// let old = _zipCode.storedValue
    /// _zipCode.storedValue = "97210"
    /// propertyDidChange(\.zipCode, from: old)   // change tokens get old → "97210"
    /// ```
    ///
    /// Like the setter, it tells no one when `oldValue` is the same as the current value (`==`,
    /// or `===` for class references), and a change token pending in this tick keeps the old value
    /// of the tick's first change.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the receiver.
    ///   - oldValue: The value the property had before the storage changed.
    public func propertyDidChange<Value>(_ keyPath: KeyPath<Self, Value>, from oldValue: Value) {
        guard hasEdges,
            let (serial, current) = PathStep.key(TypedKey(partial: keyPath)).resolve(on: self),
            let current = current as? Value
        else { return }
        if _valuesAreIdentical(oldValue, current) { return }
        _propertyDidChange(serial: serial) { oldValue }
    }
}
