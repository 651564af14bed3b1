/// The typed key paths resolved on one object, and the storage serial each reads (a registry's
/// key path cache, under its lock).
///
/// Key paths are compared by identity (a key path literal is one object for the whole
/// process). A lookup scans the entries in place, comparing identities, and touches no
/// reference count; the key path objects are kept only to hold the identities valid while
/// cached. The first entry is kept apart: an object that resolves one key path (the first
/// token on a fresh object, an object with one token) allocates nothing for it.
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

    /// The first entry's identity (a trivial value: checking it touches no reference count);
    /// 0 while nothing is cached.
    private var firstID: UInt = 0
    private var firstSerial: UInt64 = 0
    /// Nil for a call site, and while nothing is cached.
    private var firstKeyPath: AnyKeyPath?
    /// The entries after the first, oldest first.
    private var entries: [Entry] = []

    /// Key path objects remembered per property. Call sites are not counted (nor pushed out):
    /// there are only as many as the program has places that make key paths.
    static let limitPerProperty = 16

    /// Key path objects cached (for tests).
    var count: Int { (firstKeyPath == nil ? 0 : 1) + entries.count { $0.keyPath != nil } }

    /// Call sites cached (for tests).
    var siteCount: Int { (firstID != 0 && firstKeyPath == nil ? 1 : 0) + entries.count { $0.keyPath == nil } }

    /// The serial `keyPath` resolved to, if it is cached. The first entry is checked inline (a
    /// call for a fresh object's first token, or for an object with one key path, cost more).
    @inline(__always)
    func serial(for keyPath: AnyKeyPath) -> UInt64? {
        serial(forID: UInt(bitPattern: ObjectIdentifier(keyPath)))
    }

    /// The serial the key path made at `site` (non-zero) resolved to, if it is cached.
    @inline(__always)
    func serial(forSite site: UInt) -> UInt64? {
        serial(forID: site)
    }

    @inline(__always)
    private func serial(forID id: UInt) -> UInt64? {
        if firstID == id { return firstSerial }
        return entries.isEmpty ? nil : serial(inEntries: id)
    }

    private func serial(inEntries id: UInt) -> UInt64? {
        entries.withUnsafeBufferPointer { entries in
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
        let entry = Entry(id: id, serial: serial, keyPath: keyPath)
        if keyPath != nil {
            let firstIsSame = firstKeyPath != nil && firstSerial == serial
            var sameProperty = firstIsSame ? 1 : 0
            var oldest = -1
            for index in entries.indices where entries[index].keyPath != nil && entries[index].serial == serial {
                sameProperty += 1
                if oldest < 0 { oldest = index }
            }
            if sameProperty >= Self.limitPerProperty {
                if firstIsSame {
                    // The first entry is this property's oldest: it goes, and the next entry (of
                    // any property, or a call site) takes its place.
                    let next = entries.removeFirst()
                    firstID = next.id
                    firstSerial = next.serial
                    firstKeyPath = next.keyPath
                } else {
                    entries.remove(at: oldest)
                }
            }
        }
        entries.append(entry)
    }
}
