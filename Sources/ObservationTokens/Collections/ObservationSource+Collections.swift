// Sources on observed collections: any mutation with a change list, an index, an object as it
// moves, one property of every element, a dictionary key, a set member. Rules and costs:
// `docs/Collections.md`.

/// An observed collection whose mutations come as a change list: ``ObservedArray``
/// (``ArrayChanges``), ``ObservedDictionary`` (``DictionaryChanges``) and ``ObservedSet``
/// (``SetChanges``). Only they conform.
public protocol _MutationsObserving: ObservableModel {
    /// The change list a `.mutations` token receives.
    associatedtype _Changes
}

/// How each collection starts a `.mutations` token (its delivery passed type-erased: it is
/// `_ObservationDelivery<Self, Self._Changes>`).
protocol MutationsStarting: ObservableModelBase {
    func startMutations(_ delivery: Any) -> ObservationToken
}

extension ObservationSource where Root: _MutationsObserving, Payload == Root._Changes {
    /// Any mutation of the collection (`*`), with what changed since the last delivery.
    ///
    /// ```swift
    /// let token = list.items.observe(.mutations) { items, changes in
    ///     // changes.removed: old indexes; changes.inserted: new indexes;
    ///     // changes.replaced: old indexes of elements replaced in place
    /// }
    /// ```
    ///
    /// All changes made between two deliveries fold into one change list: a thousand appends in
    /// one tick make one callback with a thousand inserted indexes. `.initial` and
    /// ``ObservationToken/fire()`` deliver the changes so far (none, right after creation).
    ///
    /// - Complexity: O(1) to create; each mutation adds O(*r*) in the runs of changes not yet
    ///   delivered (two for a stream of appends).
    public static var mutations: Self {
        Self { root, delivery in
            // Every conforming collection starts them (see `MutationsStarting`).
            unsafeDowncast(root, to: ObservableModelBase.self)._startMutations(delivery)
        }
    }
}

extension ObservedArray: _MutationsObserving, MutationsStarting {
    public typealias _Changes = ArrayChanges

    func startMutations(_ delivery: Any) -> ObservationToken {
        let delivery = delivery as! _ObservationDelivery<ObservedArray, ArrayChanges>
        return _observeSynthetic(
            .synthetic(\ObservedArray.snapshot, serial: contentsSerial, valueType: [Element].self),
            subscription: ChangeListSubscription(
                root: self, observer: delivery.observer, log: observation.addLog(), holder: observation,
                options: delivery.options.subtracting(.endpointChanges), queue: delivery.queue,
                site: delivery.site(.mutations), callback: delivery.callback))
    }
}

extension ObservedDictionary: _MutationsObserving, MutationsStarting {
    public typealias _Changes = DictionaryChanges<Key>

    func startMutations(_ delivery: Any) -> ObservationToken {
        let delivery = delivery as! _ObservationDelivery<ObservedDictionary, DictionaryChanges<Key>>
        return _observeSynthetic(
            .synthetic(\ObservedDictionary.snapshot, serial: observation.contentsSerial, valueType: [Key: Value].self),
            subscription: ChangeListSubscription(
                root: self, observer: delivery.observer, log: observation.addLog(), holder: observation,
                options: delivery.options.subtracting(.endpointChanges), queue: delivery.queue,
                site: delivery.site(.mutations), callback: delivery.callback))
    }
}

extension ObservedSet: _MutationsObserving, MutationsStarting {
    public typealias _Changes = SetChanges<Element>

    func startMutations(_ delivery: Any) -> ObservationToken {
        let delivery = delivery as! _ObservationDelivery<ObservedSet, SetChanges<Element>>
        return _observeSynthetic(
            .synthetic(\ObservedSet.snapshot, serial: observation.contentsSerial, valueType: Set<Element>.self),
            subscription: ChangeListSubscription(
                root: self, observer: delivery.observer, log: observation.addLog(), holder: observation,
                options: delivery.options.subtracting(.endpointChanges), queue: delivery.queue,
                site: delivery.site(.mutations), callback: delivery.callback))
    }
}

extension ObservationSource where Payload == Void {
    /// The element at an index of an array (index-following, `items.#4`): delivered when the
    /// element there changes — an insertion or removal before or at it, a replacement at it, the
    /// array growing to it or shrinking past it.
    ///
    /// ```swift
    /// let token = list.items.observe(.element(at: 0)) { items in print("first:", items.first?.title ?? "-") }
    /// ```
    ///
    /// The token's leaf is on a cell of its own: nothing reads the array to make it, so it can be
    /// made on any thread while another thread mutates the array.
    ///
    /// - Parameter index: An index ≥ 0 (it need not exist yet).
    /// - Complexity: O(1).
    public static func element<Element>(at index: Int) -> Self where Root == ObservedArray<Element> {
        Self { array, delivery in
            if index < 0 { _reportMisuse("observe(.element(at: \(index))): use an index ≥ 0") }
            let cell = array.indexCell(Swift.max(index, 0))
            return array._observeSynthetic(
                ErasedSubscription(
                    root: array, observer: delivery.observer,
                    target: .paths([
                        ObservedPath(
                            steps: cell.steps(
                                indexersSerial: array.observation.indexersSerial,
                                reading: delivery.options.contains(.endpointChanges)))
                    ]),
                    options: delivery.options, queue: delivery.queue, wantsOldValue: false,
                    site: delivery.site(.element), callback: delivery.general))
        }
    }

    /// A property of every element of an array (`items.*.isDone`), re-attached as elements come
    /// and go (which also delivers).
    ///
    /// - Parameter keyPath: An `@Observed` property of the element type.
    public static func each<Element: ObservableModelBase, Value>(_ keyPath: KeyPath<Element, Value>) -> Self
    where Root == ObservedArray<Element> {
        .each(step: TypedKey(keyPath))
    }

    /// A property of every value of a dictionary (`settings.*.isOn`).
    ///
    /// - Parameter keyPath: An `@Observed` property of the value type.
    public static func each<Key: Hashable, Value: ObservableModelBase, Property>(
        _ keyPath: KeyPath<Value, Property>
    ) -> Self where Root == ObservedDictionary<Key, Value> {
        .each(step: TypedKey(keyPath))
    }

    /// A property of every member of a set (`tags.*.isPinned`).
    ///
    /// - Parameter keyPath: An `@Observed` property of the member type.
    public static func each<Element: ObservableModelBase, Property>(_ keyPath: KeyPath<Element, Property>) -> Self
    where Root == ObservedSet<Element> {
        .each(step: TypedKey(keyPath))
    }

    private static func each(step key: TypedKey) -> Self {
        Self { collection, delivery in
            collection._observeSynthetic(
                ErasedSubscription(
                    root: collection, observer: delivery.observer,
                    target: .paths([ObservedPath(steps: [.wildcard, .key(key)])]),
                    options: delivery.options.subtracting(.endpointChanges), queue: delivery.queue,
                    wantsOldValue: false, site: delivery.site(.each), callback: delivery.general))
        }
    }

    /// One key of a dictionary, present or not: delivered when a value is added, changed
    /// (`==` / `===`; other types on every assignment) or removed.
    ///
    /// - Parameter key: The key.
    public static func key<Key: Hashable, Value>(_ key: Key) -> Self where Root == ObservedDictionary<Key, Value> {
        Self { dictionary, delivery in
            // The token's leaf is on a cell of its own (see `KeyCell`); unless `.endpointChanges`
            // asks for values, nothing reads the dictionary.
            let cell = dictionary.keyCell(for: key)
            let steps = cell.steps(
                keyersSerial: dictionary.observation.keyersSerial, reading: delivery.options.contains(.endpointChanges))
            return dictionary._observeSynthetic(
                ErasedSubscription(
                    root: dictionary, observer: delivery.observer, target: .paths([ObservedPath(steps: steps)]),
                    options: delivery.options, queue: delivery.queue, wantsOldValue: false,
                    site: delivery.site(.key), callback: delivery.general))
        }
    }

    /// One member of a set, in it or not: delivered when it is inserted or removed.
    ///
    /// - Parameter member: The member.
    public static func member<Element: Hashable>(_ member: Element) -> Self where Root == ObservedSet<Element> {
        Self { set, delivery in
            let cell = set.keyCell(for: member)
            let steps = cell.steps(
                keyersSerial: set.observation.keyersSerial, reading: delivery.options.contains(.endpointChanges))
            return set._observeSynthetic(
                ErasedSubscription(
                    root: set, observer: delivery.observer, target: .paths([ObservedPath(steps: steps)]),
                    options: delivery.options, queue: delivery.queue, wantsOldValue: false,
                    site: delivery.site(.member), callback: delivery.general))
        }
    }
}

extension ObservationSource {
    /// The object at an index of an array, wherever it moves (object-following, `items.4`): the
    /// callback receives it; when it leaves, one last delivery receives it too (`nil` if it has
    /// been freed since, as the token holds it weakly), and the token ends. No object there when
    /// the token starts: one delivery with `nil`, at the end of the tick, and the token ends.
    ///
    /// ```swift
    /// let token = list.items.observe(.object(at: 2)) { items, row in print(row?.title ?? "gone") }
    /// ```
    ///
    /// - Parameter index: The object's index when the token starts.
    public static func object<Element: AnyObject>(at index: Int) -> ObservationSource<Root, Element?>
    where Root == ObservedArray<Element> {
        ObservationSource<Root, Element?> { array, delivery in
            let arrayID = ObjectIdentifier(array)
            let element = array.storage.indices.contains(index) ? array.storage[index] : nil
            // Nothing there: a cell whose object has left already; the token's one delivery
            // receives nil and ends it.
            let cell =
                if let element {
                    array.observation.withLock { $0.cell(following: element, arrayID: arrayID) }
                } else {
                    FollowCell.departed(arrayID: arrayID)
                }
            let token = array._observeSynthetic(
                FollowingSubscription(
                    root: array, observer: delivery.observer, cell: cell,
                    options: delivery.options.subtracting(.endpointChanges), queue: delivery.queue,
                    site: delivery.site(.object), callback: delivery.callback))
            if element == nil { token.subscription.schedule() }
            return token
        }
    }
}

extension ObservableModelBase {
    /// `.mutations`' start on a collection (all conforming ones start them).
    final func _startMutations(_ delivery: Any) -> ObservationToken {
        (self as! any MutationsStarting).startMutations(delivery)
    }
}
