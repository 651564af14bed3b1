/// The typed key paths resolved on one object, and the storage serial each reads (a registry's
/// key path cache, under its lock).
///
/// Key paths are compared by identity (a key path literal is one object for the whole
/// process). The identities and serials are kept apart from the key path objects, so a lookup
/// scans plain words and touches no reference count; the objects are kept only to hold the
/// identities valid while cached.
struct ResolvedKeys {
    private var ids: [ObjectIdentifier] = []
    private var serials: [UInt64] = []
    private var keyPaths: [AnyKeyPath] = []

    /// Key path objects remembered per property.
    static let limitPerProperty = 16

    /// Key path objects cached (for tests).
    var count: Int { ids.count }

    /// The serial `keyPath` resolved to, if it is cached.
    func serial(for keyPath: AnyKeyPath) -> UInt64? {
        let id = ObjectIdentifier(keyPath)
        return ids.withUnsafeBufferPointer { ids in
            for index in ids.indices where ids[index] == id { return serials[index] }
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
        for index in serials.indices where serials[index] == serial {
            sameProperty += 1
            if oldest < 0 { oldest = index }
        }
        if sameProperty >= Self.limitPerProperty {
            ids.remove(at: oldest)
            serials.remove(at: oldest)
            keyPaths.remove(at: oldest)
        }
        ids.append(ObjectIdentifier(keyPath))
        serials.append(serial)
        keyPaths.append(keyPath)
    }
}
