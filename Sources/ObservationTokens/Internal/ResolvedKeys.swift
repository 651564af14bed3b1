/// The typed key paths resolved on one object, and the storage serial each reads (a registry's
/// key path cache, under its lock).
///
/// Key paths are compared by identity (a key path literal is one object for the whole
/// process). A lookup scans the entries in place, comparing identities, and touches no
/// reference count; the key path objects are kept only to hold the identities valid while
/// cached. One array: an object's first cached key path costs one allocation.
struct ResolvedKeys {
    private struct Entry {
        let id: ObjectIdentifier
        let serial: UInt64
        let keyPath: AnyKeyPath
    }

    private var entries: [Entry] = []

    /// Key path objects remembered per property.
    static let limitPerProperty = 16

    /// Key path objects cached (for tests).
    var count: Int { entries.count }

    /// The serial `keyPath` resolved to, if it is cached.
    func serial(for keyPath: AnyKeyPath) -> UInt64? {
        let id = ObjectIdentifier(keyPath)
        return entries.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].id == id { return entries[index].serial }
            return nil
        }
    }

    /// Remembers a resolution. Bounded per property, not per object: key paths built at run
    /// time (not literals) are new objects each time and must not make the cache grow, but
    /// they only ever push out key paths to the same property. Observing many properties of
    /// an object never makes a literal key path resolve (read its property) again.
    mutating func remember(_ keyPath: AnyKeyPath, serial: UInt64) {
        guard self.serial(for: keyPath) == nil else { return }
        var sameProperty = 0
        var oldest = -1
        for index in entries.indices where entries[index].serial == serial {
            sameProperty += 1
            if oldest < 0 { oldest = index }
        }
        if sameProperty >= Self.limitPerProperty { entries.remove(at: oldest) }
        entries.append(Entry(id: ObjectIdentifier(keyPath), serial: serial, keyPath: keyPath))
    }
}
