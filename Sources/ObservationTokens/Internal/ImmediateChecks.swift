/// Holds back the `.immediate` tokens on computed values that a set invalidated until the set
/// has told everyone else: every computed value the set reaches is invalidated first, then the
/// `.immediate` tokens on the property itself run, then those on the computed values compare
/// and run — so each callback reads final values, and a token watching both the property and a
/// computed value of it runs once for the set (the second look finds nothing new).
///
/// A setter's slow path opens a collection (`begin`) around its `.immediate` work; an
/// invalidation inside it adds its tokens (`holdBack`); the setter runs them at its end
/// (`end`). Nested sets (a callback setting another property) open collections of their own.
/// An invalidation outside any set (by hand, a `@Hybrid` set) runs its tokens at once.
enum ImmediateChecks {

    /// The tokens held back by the innermost open collection of this thread.
    struct Collection {
        fileprivate var held: [Subscription] = []
        fileprivate let previous: UnsafeMutableRawPointer?
    }

    /// Runs `body` (a setter's `.immediate` work) with a collection open, then the tokens held
    /// back in it.
    static func collecting(_ body: () -> Void) {
        var collection = Collection(previous: ThreadSlot.immediateChecks.get())
        withUnsafeMutablePointer(to: &collection) { pointer in
            ThreadSlot.immediateChecks.set(pointer)
            body()
            ThreadSlot.immediateChecks.set(pointer.pointee.previous)
        }
        for subscription in collection.held { subscription.deliverComputedChangeNow() }
    }

    /// Holds `subscription` back until the open collection ends; false when none is open (the
    /// caller runs it now).
    static func holdBack(_ subscription: Subscription) -> Bool {
        guard let raw = ThreadSlot.immediateChecks.get() else { return false }
        let collection = raw.assumingMemoryBound(to: Collection.self)
        if !collection.pointee.held.contains(where: { $0 === subscription }) {
            collection.pointee.held.append(subscription)
        }
        return true
    }
}
