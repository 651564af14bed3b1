import Synchronization

// Shared machinery of the observed collections: synthetic serials, change logs, and the
// subscriptions that deliver change lists or follow an element.

/// A fresh storage serial for a collection's count, contents, index, key or member: numbered
/// like `@Observed` storages, so registries, tokens and coalescing treat them alike.
@inline(__always)
func makeCollectionSerial() -> UInt64 {
    _observedSerials.wrappingAdd(1, ordering: .relaxed).oldValue
}

/// What every change log does: hand over the changes since the last delivery.
protocol CollectionChangeLog {
    associatedtype Changes
    init()
    mutating func take() -> Changes
}

extension ArrayChangeLog: CollectionChangeLog {}

/// A public change list, made from what its log hands over.
protocol ChangeList {
    associatedtype Log: CollectionChangeLog
    init(log changes: Log.Changes)
}

extension ArrayChanges: ChangeList {
    typealias Log = ArrayChangeLog
    init(log changes: ArrayChanges) { self = changes }
}

extension DictionaryChanges: ChangeList {
    typealias Log = KeyedChangeLog<Key>
    init(log records: KeyedChangeRecords<Key>) { self = records.coalesced() }
}

extension SetChanges: ChangeList {
    typealias Log = KeyedChangeLog<Element>
    init(log records: KeyedChangeRecords<Element>) {
        let changes = records.coalesced()
        self.init(inserted: changes.inserted, removed: changes.removed)
    }
}

/// One token's change log, shared by its subscription (which owns it) and the collection
/// (which holds it weakly and writes every change into it).
final class ChangeLogBox<Log: CollectionChangeLog>: Locked<Log>, @unchecked Sendable {  // see Locked
    init() { super.init(state: Log()) }
}

/// Where a collection keeps its change-list tokens' logs: strongly, so that writing one costs no
/// weak-reference traffic; each token's subscription takes its log out when it ends.
protocol ChangeLogHolder: AnyObject, Sendable {
    func removeLog(_ log: AnyObject)
}

/// A subscription whose callback receives the collection and its changes since the last
/// delivery (`*` with a change list).
final class ChangeListSubscription<Model: ObservableModelBase, Changes: ChangeList>: Subscription,
    @unchecked Sendable
{  // see Subscription
    @exclusivity(unchecked) private var callback: (@Sendable (AnyObject?, Model, Changes) -> Void)?
    let log: ChangeLogBox<Changes.Log>
    let holder: any ChangeLogHolder
    private let observer: WeakReference?

    init(
        root: __shared Model, observer: AnyObject?, log: ChangeLogBox<Changes.Log>, holder: any ChangeLogHolder,
        options: ObservationOptions, queue: CoalescingQueue, site: CreationSite,
        callback: @escaping @Sendable (AnyObject?, Model, Changes) -> Void
    ) {
        self.callback = callback
        self.log = log
        self.holder = holder
        self.observer = observer.map(WeakReference.init)
        super.init(
            rootRegistry: root.registry, hasObserver: observer != nil, target: .property, options: options,
            queue: queue, wantsOldValue: false, site: site)
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        let changes = Changes(log: log.withLock { $0.take() })
        callback?(observer, unsafeDowncast(root, to: Model.self), changes)
    }

    /// Runs once, when the token has ended: the collection stops writing this log.
    override func releaseCallback() {
        callback = nil
        holder.removeLog(log)
    }
}

/// A subscription that follows one element of an array as it moves, fires once when the
/// element leaves, and then ends.
final class FollowingSubscription<Element: AnyObject>: Subscription, @unchecked Sendable {  // see Subscription
    @exclusivity(unchecked) private var callback: (@Sendable (AnyObject?, ObservedArray<Element>, Element?) -> Void)?
    /// Keeps the cell (and so its registry, where this token's leaf edge is) alive.
    let cell: FollowCell
    private let observer: WeakReference?

    init(
        root: __shared ObservedArray<Element>, observer: AnyObject?, cell: FollowCell, options: ObservationOptions,
        queue: CoalescingQueue, site: CreationSite,
        callback: @escaping @Sendable (AnyObject?, ObservedArray<Element>, Element?) -> Void
    ) {
        self.callback = callback
        self.cell = cell
        self.observer = observer.map(WeakReference.init)
        super.init(
            rootRegistry: root.registry, hasObserver: observer != nil,
            target: .paths([ObservedPath(steps: cell.steps(followersSerial: root.followersSerial))]),
            options: options, queue: queue, wantsOldValue: false, site: site)
    }

    override func loadObserver() -> AnyObject? { observer?.load() }

    override func invoke(observer: AnyObject?, root: ObservableModelBase) {
        let left = cell.left.load(ordering: .acquiring)
        callback?(observer, unsafeDowncast(root, to: ObservedArray<Element>.self), cell.followedObject as? Element)
        // The element has left: this was the last delivery.
        if left { end() }
    }

    override func releaseCallback() {
        callback = nil
    }
}

/// What string key paths and `*` fan-outs need from a collection.
protocol ObservedCollectionPaths: ObservableModelBase {
    /// The serial and current value a `.name` step names on this collection (`count`, `#4`, a
    /// dictionary key, a set member's key), recording nothing; nil if it names none. For
    /// components met at run time: parsing turns the components it can into cell steps.
    func resolve(component: String) -> (serial: UInt64, value: Any)?
    /// The model objects among the elements (values, for dictionaries), each once, for `*.x`.
    var elementModels: [ObservableModelBase] { get }
    /// Parses one component of a string path on a collection of this type (`collection`, if
    /// one is there now): the steps it becomes, and what the path reaches after it, so the
    /// rest of the path is checked against the element type. `parse` says how components that
    /// depend on the collection there are treated.
    static func pathComponent(
        _ component: String, on collection: Self?, path: String, position: Int, parse: PathParse
    ) throws(KeyPathError) -> (steps: [PathStep], next: PathLevel)
}

extension Substring {
    /// One or more ASCII digits, nothing else.
    var isASCIIDigits: Bool { !isEmpty && allSatisfy { $0.isASCII && $0.isNumber } }
}

extension String {
    /// One or more ASCII digits, nothing else.
    var isASCIIDigits: Bool { Substring(self).isASCIIDigits }
}

extension ObservableModelBase {
    /// Reports a read of a collection's synthetic storage to a capture (key path resolution,
    /// tracking) running on this thread. Callers check `_accessCaptureCount` first.
    @inline(never)
    final func recordCollectionAccess(serial: UInt64, valueType: Any.Type) {
        _recordObservedAccess(self, serial: serial, valueType: valueType)
    }

    /// Tells the tokens on a synthetic serial of this collection that it changed.
    @inline(__always)
    final func collectionDidChange(serial: UInt64, oldValue: () -> Any) {
        _propertyDidChange(serial: serial, oldValue: oldValue)
    }
}

extension TypedKey {
    /// A key for a collection's synthetic storage whose reader reports the access without
    /// reading the collection: tokens made through it can be created on any thread while
    /// another thread mutates the collection. (`keyPath` still names the storage: its value
    /// type must be `valueType`.)
    static func synthetic(_ keyPath: AnyKeyPath, serial: UInt64, valueType: Any.Type) -> TypedKey {
        TypedKey(keyPath: keyPath) { object, _ in
            object.recordCollectionAccess(serial: serial, valueType: valueType)
            return ()
        }
    }
}

/// Whether some thread is capturing key path accesses (one relaxed load).
@inline(__always)
var isCapturingAccesses: Bool { _accessCaptureCount.load(ordering: .relaxed) != 0 }
