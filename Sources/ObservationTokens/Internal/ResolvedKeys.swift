/// The typed key paths resolved on one object, and the storage serial each reads (a registry's
/// key path cache, under its lock).
///
/// Key paths are compared by identity (a key path literal is one object for the whole
/// process). A lookup scans the entries in place, comparing identities, and touches no
/// reference count; the key path objects are kept only to hold the identities valid while
/// cached. The first entry is kept apart: an object that resolves one key path (the first
/// token on a fresh object, an object with one token) allocates nothing for it, and a lookup
/// on a fresh object reads one word. The next two are kept inline too, behind one optional
/// (`more`): an object that resolves up to three (a view-model's tokens on its model) allocates
/// and frees nothing for them, and an object with one entry destroys nothing but that one.
struct ResolvedKeys {
    private struct Entry {
        let serial: UInt64
        let keyPath: AnyKeyPath

        /// The key path's identity, read off the reference in place (no reference count
        /// touched). Not stored: the registry zeroes every byte of `more` when it is made.
        var id: ObjectIdentifier { ObjectIdentifier(keyPath) }
    }

    /// The entries after the first: the second and third inline, the others in an array.
    private struct More {
        var second: Entry
        var third: Entry?
        /// The entries after the third, oldest first (empty while `third` is nil).
        var entries: [Entry] = []
    }

    /// The first entry's identity (a trivial value: checking it touches no reference count);
    /// nil while nothing is cached.
    private var firstID: ObjectIdentifier?
    private var firstSerial: UInt64 = 0
    private var firstKeyPath: AnyKeyPath?
    /// Nil while at most one entry is cached.
    private var more: More?

    /// Key path objects remembered per property.
    static let limitPerProperty = 16

    /// Key path objects cached (for tests).
    var count: Int {
        guard let more else { return firstID == nil ? 0 : 1 }
        return 2 + (more.third == nil ? 0 : 1) + more.entries.count
    }

    /// The serial `keyPath` resolved to, if it is cached. The first entry is checked inline (a
    /// call for a fresh object's first token, or for an object with one key path, cost more).
    ///
    /// Mutating only so that `self` is passed in place: a copy of the whole cache (its inline
    /// entries) was made for each lookup.
    @inline(__always)
    mutating func serial(for keyPath: AnyKeyPath) -> UInt64? {
        // Nothing cached (a fresh object's first token): one word read. (`more` is nil then.)
        guard let first = firstID else { return nil }
        let id = ObjectIdentifier(keyPath)
        if first == id { return firstSerial }
        if case .none = more { return nil }
        return serial(inMore: id)
    }

    /// The entries after the first (`more` is not nil). Their identities and serials are read
    /// in place (trivial values: no reference count touched).
    private mutating func serial(inMore id: ObjectIdentifier) -> UInt64? {
        if more.unsafelyUnwrapped.second.id == id { return more.unsafelyUnwrapped.second.serial }
        if more.unsafelyUnwrapped.third?.id == id { return more.unsafelyUnwrapped.third?.serial }
        return more.unsafelyUnwrapped.entries.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].id == id { return entries[index].serial }
            return nil
        }
    }

    /// Remembers a resolution. Bounded per property, not per object: key paths built at run
    /// time (not literals) are new objects each time and must not make the cache grow, but
    /// they only ever push out key paths to the same property. Observing many properties of
    /// an object never makes a literal key path resolve (read its property) again.
    /// The first entry is stored inline (a fresh object's first token: a call cost more).
    @inline(__always)
    mutating func remember(_ keyPath: AnyKeyPath, serial: UInt64) {
        // Matched on the key path, not on `firstID`: in this branch the compiler knows there is
        // no old key path to release.
        guard case .some = firstKeyPath else {
            firstID = ObjectIdentifier(keyPath)
            firstSerial = serial
            firstKeyPath = keyPath
            return
        }
        remember(afterFirst: keyPath, serial: serial)
    }

    private mutating func remember(afterFirst keyPath: AnyKeyPath, serial: UInt64) {
        guard self.serial(for: keyPath) == nil else { return }
        let entry = Entry(serial: serial, keyPath: keyPath)
        guard case .some = more else {
            more = More(second: entry, third: nil)
            return
        }
        guard case .some = more!.third else {
            more!.third = entry
            return
        }
        // Positions: 0 the first entry, 1 the second, 2 the third, 3… `entries`.
        var sameProperty = firstSerial == serial ? 1 : 0
        var oldest = firstSerial == serial ? 0 : -1
        if more!.second.serial == serial {
            sameProperty += 1
            if oldest < 0 { oldest = 1 }
        }
        if more!.third!.serial == serial {
            sameProperty += 1
            if oldest < 0 { oldest = 2 }
        }
        for index in more!.entries.indices where more!.entries[index].serial == serial {
            sameProperty += 1
            if oldest < 0 { oldest = index + 3 }
        }
        if sameProperty >= Self.limitPerProperty {
            // This property's oldest entry goes; the entries after it move up one position.
            // (At the limit, `entries` holds several.)
            if oldest <= 0 {
                firstID = more!.second.id
                firstSerial = more!.second.serial
                firstKeyPath = more!.second.keyPath
            }
            if oldest <= 1 { more!.second = more!.third! }
            if oldest <= 2 {
                more!.third = more!.entries.removeFirst()
            } else {
                more!.entries.remove(at: oldest - 3)
            }
        }
        more!.entries.append(entry)
    }
}
