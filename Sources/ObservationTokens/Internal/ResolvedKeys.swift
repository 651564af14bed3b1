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
///
/// An entry may also stand for a key path's call site (`_KeySource.site`: the address of the
/// code that makes the key path, which never changes and is never reused), with no key path
/// object to keep: a token made at a known site is attached without asking the runtime for the
/// key path at all.
struct ResolvedKeys {
    private struct Entry {
        /// The key path object's address, or a call site's.
        let id: UInt
        let serial: UInt64
        /// Nil for a call site.
        let keyPath: AnyKeyPath?
    }

    /// The entries after the first: the second and third inline, the others in an array.
    private struct More {
        var second: Entry
        var third: Entry?
        /// The entries after the third, oldest first (empty while `third` is nil).
        var entries: [Entry] = []
    }

    /// The first entry's identity (a trivial value: checking it touches no reference count);
    /// 0 while nothing is cached.
    private var firstID: UInt = 0
    private var firstSerial: UInt64 = 0
    /// Nil for a call site, and while nothing is cached.
    private var firstKeyPath: AnyKeyPath?
    /// Nil while at most one entry is cached.
    private var more: More?

    /// Key path objects remembered per property. Call sites are not counted (nor pushed out):
    /// there are only as many as the program has places that make key paths.
    static let limitPerProperty = 16

    /// The number of entries, the first included.
    private var entryCount: Int {
        guard firstID != 0 else { return 0 }
        guard let more else { return 1 }
        return 2 + (more.third == nil ? 0 : 1) + more.entries.count
    }

    /// The entry at `position` (< `entryCount`): 0 the first, 1 the second, 2 the third,
    /// 3… `entries`.
    private func entry(at position: Int) -> Entry {
        switch position {
        case 0: Entry(id: firstID, serial: firstSerial, keyPath: firstKeyPath)
        case 1: more!.second
        case 2: more!.third!
        default: more!.entries[position - 3]
        }
    }

    /// Key path objects cached (for tests).
    var count: Int { (0..<entryCount).count { entry(at: $0).keyPath != nil } }

    /// Call sites cached (for tests).
    var siteCount: Int { (0..<entryCount).count { entry(at: $0).keyPath == nil } }

    /// Whether the first entry, checked inline, is a call site (for tests).
    var firstIsSite: Bool { firstID != 0 && firstKeyPath == nil }

    /// The serial `keyPath` resolved to, if it is cached. The first entry is checked inline (a
    /// call for a fresh object's first token, or for an object with one key path, cost more).
    ///
    /// Mutating only so that `self` is passed in place: a copy of the whole cache (its inline
    /// entries) was made for each lookup.
    @inline(__always)
    mutating func serial(for keyPath: AnyKeyPath) -> UInt64? {
        serial(forID: UInt(bitPattern: ObjectIdentifier(keyPath)))
    }

    /// The serial the key path made at `site` (non-zero) resolved to, if it is cached.
    @inline(__always)
    mutating func serial(forSite site: UInt) -> UInt64? {
        serial(forID: site)
    }

    @inline(__always)
    private mutating func serial(forID id: UInt) -> UInt64? {
        // Nothing cached (a fresh object's first token): one word read. (`more` is nil then.)
        guard firstID != 0 else { return nil }
        if firstID == id { return firstSerial }
        if case .none = more { return nil }
        return serial(inMore: id)
    }

    /// The entries after the first (`more` is not nil). Their identities and serials are read
    /// in place (trivial values: no reference count touched).
    private mutating func serial(inMore id: UInt) -> UInt64? {
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
        let id = UInt(bitPattern: ObjectIdentifier(keyPath))
        // Matched on the key path, not on `firstID`: in this branch the compiler knows there is
        // no old key path to release.
        guard case .some = firstKeyPath else {
            // Empty, or a call site first (which stays first).
            guard firstID == 0 else {
                remember(afterFirst: id, keyPath: keyPath, serial: serial)
                return
            }
            firstID = id
            firstSerial = serial
            firstKeyPath = keyPath
            return
        }
        remember(afterFirst: id, keyPath: keyPath, serial: serial)
    }

    /// Remembers the serial that the key path made at `site` (non-zero) resolved to.
    @inline(__always)
    mutating func remember(site: UInt, serial: UInt64) {
        // `firstKeyPath` is nil while `firstID` is 0.
        guard firstID != 0 else {
            firstID = site
            firstSerial = serial
            return
        }
        remember(afterFirst: site, keyPath: nil, serial: serial)
    }

    private mutating func remember(afterFirst id: UInt, keyPath: AnyKeyPath?, serial: UInt64) {
        guard self.serial(forID: id) == nil else { return }
        let added = Entry(id: id, serial: serial, keyPath: keyPath)
        guard case .some = more else {
            // A site after one key path object (the object whose token resolved it before its
            // site was known: a class's first object): the site goes first and the key path
            // second, so the site's tokens, made many times, are found in the first entry,
            // checked inline (a call and a scan of the others less per token, W3).
            if keyPath == nil, case .some = firstKeyPath {
                more = More(second: Entry(id: firstID, serial: firstSerial, keyPath: firstKeyPath), third: nil)
                firstID = id
                firstSerial = serial
                firstKeyPath = nil
                return
            }
            more = More(second: added, third: nil)
            return
        }
        guard case .some = more!.third else {
            more!.third = added
            return
        }
        if keyPath != nil {
            // Positions: 0 the first entry, 1 the second, 2 the third, 3… `entries`. Only key
            // path objects of this property count, and only they are pushed out.
            var sameProperty = 0
            var oldest = -1
            for position in 0..<entryCount {
                let other = entry(at: position)
                guard other.keyPath != nil, other.serial == serial else { continue }
                sameProperty += 1
                if oldest < 0 { oldest = position }
            }
            if sameProperty >= Self.limitPerProperty { remove(at: oldest) }
        }
        more!.entries.append(added)
    }

    /// Removes the entry at `position` (see `remember(afterFirst:keyPath:serial:)`); the entries
    /// after it move up one position. Only at the limit, when `entries` holds several.
    private mutating func remove(at position: Int) {
        if position <= 0 {
            firstID = more!.second.id
            firstSerial = more!.second.serial
            firstKeyPath = more!.second.keyPath
        }
        if position <= 1 { more!.second = more!.third! }
        if position <= 2 {
            more!.third = more!.entries.removeFirst()
        } else {
            more!.entries.remove(at: position - 3)
        }
    }
}
