import Synchronization

/// One `@Observed` property of one object that bindings which write models read or write: the
/// change it holds now (see ``BindingWave``).
///
/// Found by the property's storage serial, which no other property of any object ever has.
/// Kept in a process-wide table while a binding uses it; the bindings hold it, and the last one
/// to end takes it out.
final class BindingMember: @unchecked Sendable {  // `users` is guarded by the table's lock
    let serial: UInt64
    /// The object, for names in messages.
    let object: WeakReference
    /// The change the property holds: the number of the last change a binding timed or wrote.
    let origin = Atomic<UInt64>(0)
    /// The change the property's last set carried, as the first binding to hear of that set
    /// timed it: the `.immediate` bindings that read the property and hear of the same set
    /// after it take the same number (see `LinkSubscription.timeSet()`).
    let setOrigin = Atomic<UInt64>(0)
    /// How many bindings hold this record, guarded by the table's lock.
    fileprivate var users = 0

    fileprivate init(serial: UInt64, object: ObservableModelBase) {
        self.serial = serial
        self.object = WeakReference(object)
    }

    /// `Type.property` (or `Type.#serial` once the object is gone), for messages.
    var name: String {
        guard let model = object.load(as: ObservableModelBase.self) else { return "(gone).#\(serial)" }
        let property = PropertyTable(model).name(ofSerial: serial, in: model) ?? "#\(serial)"
        return "\(type(of: model)).\(property)"
    }

    /// Notes a set of the property: made outside any push (a new change), or by the push
    /// writing now on this thread (its change). Returns the change's number.
    @discardableResult
    func timeChange() -> UInt64 {
        let pushing = BindingWave.currentOrigin
        let origin = pushing != 0 ? pushing : BindingClock.next()
        noteSet(origin)
        return origin
    }

    /// Notes that the property's last set carried `origin`, and holds it.
    @inline(__always)
    func noteSet(_ origin: UInt64) {
        setOrigin.store(origin, ordering: .relaxed)
        self.origin.store(origin, ordering: .relaxed)
    }

    // MARK: The table

    private static let table = Locked<[UInt64: BindingMember]>(state: [:])

    /// The record of the property with storage `serial` on `object`, created if needed, with one
    /// more user. Pair with ``release()``.
    static func acquire(serial: UInt64, on object: ObservableModelBase) -> BindingMember {
        table.withLock { table in
            let member = table[serial] ?? BindingMember(serial: serial, object: object)
            if member.users == 0 { table[serial] = member }
            member.users += 1
            return member
        }
    }

    /// One user fewer; the last takes the record out of the table.
    func release() {
        Self.table.withLock { table in
            users -= 1
            if users == 0 { table[serial] = nil }
        }
    }

    /// The record of `serial`, if a binding uses it now.
    static func existing(serial: UInt64) -> BindingMember? {
        table.withLock { $0[serial] }
    }

    /// The bindings that write models and read this property now (found in its object's
    /// registry).
    var readers: [BindingLink] {
        guard let model = object.load(as: ObservableModelBase.self) else { return [] }
        var links: [BindingLink] = []
        for subscription in model.bindingSubscriptions(onSerial: serial) {
            guard let subscription = subscription as? LinkSubscription, subscription.member === self,
                let link = subscription.link, !links.contains(where: { $0 === link })
            else { continue }
            switch subscription.role {
            case .main, .source: links.append(link)
            case .destination, .refresh: break
            }
        }
        return links
    }
}
