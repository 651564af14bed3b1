extension ObservedArray: FollowCellProviding {
    /// The cell that follows `object` in this array, if the object is an element now
    /// (O(*n*) to find it; created on first use and kept while the object stays).
    func followCell(for object: AnyObject) -> FollowCell? {
        guard Element.self is AnyObject.Type, storage.contains(where: { ($0 as AnyObject) === object }) else {
            return nil
        }
        let arrayID = ObjectIdentifier(self)
        return observation.withLock { $0.cell(following: object, arrayID: arrayID) }
    }
}

extension ObservedArray: IndexCellProviding {
    var indexersSerial: UInt64 { observation.indexersSerial }

    /// The cell of index-following tokens on `index`, created on first use and kept.
    func indexCell(_ index: Int) -> IndexCell {
        let arrayID = ObjectIdentifier(self)
        return observation.withLock { state in
            if let cell = state.indexCells[index] { return cell }
            let cell = IndexCell(index: index, arrayID: arrayID) { [weak self] index in
                guard let self, self.storage.indices.contains(index) else { return nil }
                return self.storage[index]
            }
            state.indexCells[index] = cell
            return cell
        }
    }
}

extension ObservedArray: ObservedCollectionPaths {
    /// `count` or `#4` (index-following), for a `.name` step: a component met at run time, or
    /// an index component made while no array was there.
    func resolve(component: String) -> (serial: UInt64, value: Any)? {
        if component == "count" {
            observation.countWasObserved.store(true, ordering: .releasing)
            return (countSerial, storage.count)
        }
        if component.first == "#", let index = Int(component.dropFirst()), index >= 0 {
            let serial = observation.withLock { $0.serial(forIndex: index) }
            return (serial, storage.indices.contains(index) ? storage[index] as Any : Element?.none as Any)
        }
        return nil
    }

    var elementModels: [ObservableModelBase] {
        var seen = Set<ObjectIdentifier>()
        return storage.compactMap { element in
            guard let model = element as? ObservableModelBase, seen.insert(ObjectIdentifier(model)).inserted else {
                return nil
            }
            return model
        }
    }

    /// `count`, `*` (every element), `#4` (index-following) or `4` (object-following, bound
    /// here to the object at index 4 of `array`, which must be there).
    static func pathComponent(
        _ component: String, on array: ObservedArray?, path: String, position: Int, parse: PathParse
    ) throws(KeyPathError) -> (steps: [PathStep], next: PathLevel) {
        if component == "*" { return ([.wildcard], .element(Element.self)) }
        if component == "count" { return ([.name(component)], .value(Int.self)) }
        if component.first == "#", component.dropFirst().isASCIIDigits, let index = Int(component.dropFirst()) {
            // Through a cell per index (see `IndexCell.pathSteps`). Where no array is there
            // yet, the component stays a name, resolved on whatever array the walk meets (a
            // storage per index on the array: O(k²) inserts with k of them).
            let steps = array == nil ? [PathStep.name(component)] : IndexCell.pathSteps(index: index)
            return (steps, .element(Element.self))
        }
        guard component.isASCIIDigits, let index = Int(component) else {
            if component.first == "#" || component.first == "&" || component.first?.isNumber == true {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            throw .unknownProperty(
                component, type: String(describing: ObservedArray.self), path: path, position: position)
        }
        // Object-following: bound to the object at the index now.
        guard Element.self is AnyObject.Type else {
            throw .unsupportedComponent(component, path: path, position: position)
        }
        guard let array else {
            // Checked for its syntax only; bound when the path is parsed on its object.
            guard parse.mode == .declared else {
                throw .unsupportedComponent(component, path: path, position: position)
            }
            return ([.name(component)], .element(Element.self))
        }
        guard array.storage.indices.contains(index) else {
            guard parse.mode == .starting else {
                throw .indexOutOfRange(index, count: array.storage.count, path: path, position: position)
            }
            // No object to bind to: as if it had left already.
            parse.startsDeparted = true
            let cell = FollowCell.departed(arrayID: ObjectIdentifier(array))
            return (cell.steps(followersSerial: array.followersSerial), .element(Element.self))
        }
        let object = array.storage[index] as AnyObject
        let arrayID = ObjectIdentifier(array)
        let cell = array.observation.withLock { $0.cell(following: object, arrayID: arrayID) }
        return (cell.steps(followersSerial: array.followersSerial), .element(Element.self, instance: object))
    }
}
