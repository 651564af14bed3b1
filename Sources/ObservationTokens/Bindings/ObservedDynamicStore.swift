/// Writing an `@Observed` property found by name: the end of a binding's string-path
/// destination, where no typed key path exists.
protocol ObservedDynamicStore {
    /// Whether values of type `T` can be written to the property: as they are, or wrapped in
    /// an `Optional` (a `String` to a `String?` property).
    static func accepts<T>(_ type: T.Type) -> Bool

    /// Sets the property whose storage starts `offset` bytes into `object` to `value` (wrapped
    /// in an `Optional` for an optional property), with everything its setter does. False,
    /// with nothing written, if `value` has another type.
    static func store(_ value: Any, in object: ObservableModelBase, at offset: Int) -> Bool
}

extension Observed: ObservedDynamicStore {
    static func accepts<T>(_ type: T.Type) -> Bool {
        T.self is Value.Type || T?.self is Value.Type
    }

    static func store(_ value: Any, in object: ObservableModelBase, at offset: Int) -> Bool {
        guard let newValue = value as? Value else { return false }
        let storage = (UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()) + offset)
            .assumingMemoryBound(to: Self.self)
        // The same steps as the setter (`Observed`'s static subscript; keep the two in step,
        // `StringDestinationTests` pins each rule): the old value outlives the store, a store on
        // an object that paths read (or that has will-change observers) tells those and takes
        // the store bit, an identical value tells no one.
        let oldValue = storage.pointee.value
        let edges = object._edgeCount.load(ordering: .relaxed) & ~ObservableModelBase._storeBit
        if edges == 0 {
            storage.pointee.value = newValue
            return true
        }
        if edges < ObservableModelBase._readByPaths {
            storage.pointee.value = newValue
        } else {
            object._beginExclusiveStore()
            storage.pointee.value = newValue
            // Nobody observes it now: the count after the store, not `edges` (a walk may have
            // attached meanwhile; see `_endStoreCounted`).
            if object._endStoreCounted() & (ObservableModelBase._readByPaths - 1) == 0 { return true }
        }
        if _valuesAreIdentical(oldValue, newValue) { return true }
        object._propertyDidChange(serial: storage.pointee.serial) { oldValue }
        return true
    }
}
