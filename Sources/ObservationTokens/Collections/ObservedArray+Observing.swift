extension ObservedArray {
    /// Observes any mutation (`*`) and reports what changed since the last delivery.
    ///
    /// ```swift
    /// let token = list.items.observeMutations { items, changes in
    ///     // changes.removed: old indexes; changes.inserted: new indexes;
    ///     // changes.replaced: old indexes of elements replaced in place
    /// }
    /// ```
    ///
    /// All changes made between two deliveries are folded into one ``ArrayChanges``: a
    /// thousand appends in one tick make one callback with a thousand inserted indexes.
    /// `.initial` and ``ObservationToken/fire()`` deliver the changes so far (none, right after
    /// creation).
    ///
    /// - Parameters:
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the array and the changes since the previous delivery.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1) to create; each mutation adds O(*r*) in the runs of changes not yet
    ///   delivered (two for a stream of appends).
    public func observeMutations(
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedArray, ArrayChanges) -> Void
    ) -> ObservationToken {
        let log = observation.addLog()
        return _observeSynthetic(
            .synthetic(\ObservedArray.snapshot, serial: contentsSerial, valueType: [Element].self),
            subscription: ChangeListSubscription(
                root: self, log: log, holder: observation, options: options.subtracting(.endpointChanges), queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .mutations, options: options), callback: callback))
    }

    /// Observes whatever element is at `index` (index-following, `#4` in string paths).
    ///
    /// ```swift
    /// let token = items.observeElement(at: 2) { items in
    ///     print("third is now", items[ifPresent: 2] as Any)
    /// }
    /// items.insert(x, at: 0)   // fires: the element at 2 moved along
    /// items.append(y)          // doesn't fire (unless that makes the array reach index 2)
    /// ```
    ///
    /// Fires when the element at `index` changes: an insertion or removal at or before it, a
    /// replacement at it (by a different element), the array growing to reach it or shrinking
    /// past it. Changes only after it don't fire. The index may be beyond the end.
    ///
    /// - Parameters:
    ///   - index: Any index ≥ 0, also beyond the end.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the array.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(1) to create; each insertion or removal before `index` costs O(1) for
    ///   this token.
    public func observeElement(
        at index: Int,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedArray) -> Void
    ) -> ObservationToken {
        #if DEBUG
            if index < 0 { assertionFailure("observeElement(at: \(index)): use an index ≥ 0") }
        #endif
        // The token's leaf is on a cell of its own (see `IndexCell`); nothing reads the array,
        // so it can be made on any thread while another thread mutates the array.
        let cell = indexCell(index)
        return _observeSynthetic(
            _ModelSubscription(
                root: self,
                target: .paths([
                    ObservedPath(
                        steps: cell.steps(
                            indexersSerial: observation.indexersSerial, reading: options.contains(.endpointChanges)))
                ]),
                options: options, queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .element, options: options), callback: callback))
    }
}

extension ObservedArray where Element: AnyObject {
    /// Observes the object at `index` now, wherever it moves (object-following, `4` in string
    /// paths); fires once when it leaves the array, and then the token ends.
    ///
    /// ```swift
    /// let token = try items.observeObject(at: 1) { items, item in
    ///     print(item?.title ?? "?", "was removed")
    /// }
    /// items.insert(x, at: 0)   // doesn't fire: the object moved to index 2
    /// items.remove(at: 2)      // fires once; token.isValid is false after the callback
    /// ```
    ///
    /// Moving the object (inserting or removing before it, ``move(from:to:)``, `swapAt`,
    /// `sort()`) doesn't fire. The object leaves when no occurrence of it remains: removing
    /// one of two occurrences doesn't fire.
    ///
    /// - Parameters:
    ///   - index: An index of the array now.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the array and the object that left (nil if it has been
    ///     deinitialized since; the token holds it weakly).
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Throws: ``KeyPathError/indexOutOfRange(_:count:path:position:)`` when `index` is not
    ///   an index of the array.
    /// - Complexity: O(1) to create.
    public func observeObject(
        at index: Int,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedArray, Element?) -> Void
    ) throws(KeyPathError) -> ObservationToken {
        guard storage.indices.contains(index) else {
            throw .indexOutOfRange(index, count: storage.count, path: String(index), position: 1)
        }
        let arrayID = ObjectIdentifier(self)
        let cell = observation.withLock { $0.cell(following: storage[index], arrayID: arrayID) }
        return _observeSynthetic(
            FollowingSubscription(
                root: self, cell: cell, options: options.subtracting(.endpointChanges),
                queue: queue, site: CreationSite(fileID: fileID, line: line, kind: .object, options: options),
                callback: callback))
    }
}

extension ObservedArray where Element: ObservableModelBase {
    /// Observes a property of every element (`*.x`), including elements added later.
    ///
    /// ```swift
    /// let token = list.items.observeEach(\.isDone) { items in
    ///     print(items.filter(\.isDone).count, "done")
    /// }
    /// ```
    ///
    /// Fires once per tick when any element's property changes, and when the array changes
    /// (which may add or remove elements). An element in the array twice is watched once;
    /// removing one occurrence keeps watching the other.
    ///
    /// - Parameters:
    ///   - keyPath: An `@Observed` property of the element type.
    ///   - options: `.initial`, `.immediate`; see ``ObservationOptions``.
    ///   - queue: Where callbacks are delivered; the main queue by default.
    ///   - callback: Receives the array.
    ///   - fileID: The file that creates the token (the default), named by debug-build misuse traps.
    ///   - line: The line that creates the token (the default), named by debug-build misuse traps.
    /// - Returns: The token that keeps the observation alive.
    /// - Complexity: O(*n*) to create, and again on each mutation of the array (the token
    ///   re-attaches to the elements).
    public func observeEach<Value>(
        _ keyPath: KeyPath<Element, Value>,
        options: ObservationOptions = [],
        queue: CoalescingQueue = .main,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        _ callback: @escaping @Sendable (ObservedArray) -> Void
    ) -> ObservationToken {
        _observeSynthetic(
            _ModelSubscription(
                root: self, target: .paths([ObservedPath(steps: [.wildcard, .key(TypedKey(keyPath))])]),
                options: options.subtracting(.endpointChanges), queue: queue,
                site: CreationSite(fileID: fileID, line: line, kind: .each, options: options), callback: callback))
    }
}

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
        _ component: String, on array: ObservedArray?, path: String, position: Int
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
            throw .unknownProperty(component, type: String(describing: ObservedArray.self), path: path, position: position)
        }
        // Object-following: bound to the object at the index now.
        guard let array, Element.self is AnyObject.Type else {
            throw .unsupportedComponent(component, path: path, position: position)
        }
        guard array.storage.indices.contains(index) else {
            throw .indexOutOfRange(index, count: array.storage.count, path: path, position: position)
        }
        let object = array.storage[index] as AnyObject
        let arrayID = ObjectIdentifier(array)
        let cell = array.observation.withLock { $0.cell(following: object, arrayID: arrayID) }
        return (cell.steps(followersSerial: array.followersSerial), .element(Element.self, instance: object))
    }
}
