/// The typed key paths resolved on one object, and the storage serial each reads (a registry's
/// key path cache, under its lock).
///
/// Key paths are compared by identity (a key path literal is one object for the whole
/// process). A lookup scans the entries in place, comparing identities, and touches no
/// reference count; the key path objects are kept only to hold the identities valid while
/// cached. The first entry is kept apart: an object that resolves one key path (the first
/// token on a fresh object, an object with one token) allocates nothing for it.
struct ResolvedKeys {
    private struct Entry {
        let id: ObjectIdentifier
        let serial: UInt64
        let keyPath: AnyKeyPath
    }

    /// The first entry's identity (a trivial value: checking it touches no reference count);
    /// nil while nothing is cached.
    private var firstID: ObjectIdentifier?
    private var firstSerial: UInt64 = 0
    private var firstKeyPath: AnyKeyPath?
    /// The entries after the first, oldest first.
    private var entries: [Entry] = []

    /// Key path objects remembered per property.
    static let limitPerProperty = 16

    /// Key path objects cached (for tests).
    var count: Int { (firstID == nil ? 0 : 1) + entries.count }

    /// The serial `keyPath` resolved to, if it is cached. The first entry is checked inline (a
    /// call for a fresh object's first token, or for an object with one key path, cost more).
    @inline(__always)
    func serial(for keyPath: AnyKeyPath) -> UInt64? {
        let id = ObjectIdentifier(keyPath)
        if firstID == id { return firstSerial }
        return entries.isEmpty ? nil : serial(inEntries: id)
    }

    private func serial(inEntries id: ObjectIdentifier) -> UInt64? {
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
        var sameProperty = firstSerial == serial ? 1 : 0
        var oldest = -1
        for index in entries.indices where entries[index].serial == serial {
            sameProperty += 1
            if oldest < 0 { oldest = index }
        }
        let entry = Entry(id: ObjectIdentifier(keyPath), serial: serial, keyPath: keyPath)
        if sameProperty >= Self.limitPerProperty {
            if firstSerial == serial {
                // The first entry is this property's oldest: it goes, and the next entry (of
                // any property) takes its place.
                let next = entries.removeFirst()
                firstID = next.id
                firstSerial = next.serial
                firstKeyPath = next.keyPath
            } else {
                entries.remove(at: oldest)
            }
        }
        entries.append(entry)
    }
}
