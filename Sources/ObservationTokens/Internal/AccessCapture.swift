import Synchronization

/// How many threads are resolving a key path right now. `@Observed` getters read it with one
/// relaxed load and only look further (into thread-local storage) when it is non-zero, so a
/// plain property read costs one load and a branch.
@usableFromInline
let _accessCaptureCount = Atomic<Int>(0)

/// The address of `_accessCaptureCount` (a global: it never moves), for getters that keep it in
/// an object they have loaded anyway, so that checking it needs no call to the global's accessor
/// inside their loops. (`nonisolated(unsafe)`: an immutable pointer to an atomic.)
nonisolated(unsafe) let accessCaptureCountAddress: UnsafePointer<Atomic<Int>> = withUnsafePointer(
    to: _accessCaptureCount
) { $0 }

/// Records which `@Observed` storage a key path reads, to map a typed `KeyPath` onto the
/// property it names.
///
/// A Swift `KeyPath` can't be inspected, but it can be applied. While a capture is active on
/// this thread, every `@Observed` getter reports `(object, serial)`; the resolver keeps the
/// access made on the object it asked about.
enum AccessCapture {
    struct Access {
        let object: ObjectIdentifier
        let serial: UInt64
        let valueType: Any.Type
    }

    /// What a capture saw: how many `@Observed` getters ran, and the first of them; and, when
    /// tracking, every access. Lives on the capturing thread's stack; the thread-local slot
    /// points at it.
    struct Recording {
        var count = 0
        var first: Access?
        /// Tracking (`track(into:_:)`): where every access goes, with its object's registry.
        var all: UnsafeMutablePointer<[TrackedAccess]>?
        /// Tracking: attaches each storage's edge as it is recorded, before the getter reads
        /// the value, so a set right after the read is heard. Unowned: whoever sets it keeps it
        /// alive for the whole evaluation (a weak reference would give it a side table, and
        /// every later retain and release of it the slow path).
        unowned(unsafe) var attacher: (any AccessAttaching)?
        /// The storages that already have an edge (a tracked token's, as of its last
        /// evaluation): the attacher is not called for those, so a steady evaluation takes no
        /// lock per read.
        var known: UnsafeMutablePointer<[KnownEdge]>?
        /// Confirming in place (a computation whose edges are as its last computation left
        /// them): the storages that computation read, in reading order, with their registries
        /// (retained by the list). While the reads come in that order, each only moves
        /// `confirmed` on: nothing is appended to `all`, nothing retained, and no attacher is
        /// called (each has its edge). The first read that differs appends the confirmed ones
        /// to `all` (`materialize`), and confirming ends (`expected` nil): from then on every
        /// access is recorded as without it.
        var expected: UnsafePointer<[DependencyEdge]>?
        /// How many of `expected` the reads so far confirmed, in order.
        var confirmed = 0
    }

    /// A storage with an edge: its object's registry and its serial. Serials are never reused,
    /// so the pair can't name another storage even if the registry's address is.
    struct KnownEdge {
        let registry: ObjectIdentifier
        let serial: UInt64
    }

    /// Whether `edges` are exactly the storages in `accesses`, in reading order (a repeat of a
    /// storage read earlier skipped): the steady state of a tracked evaluation or a
    /// computation, checked without allocating. `storage` names an edge's storage.
    ///
    /// - Complexity: O(*n*) when they match in order; O(*n*²) in the worst case (repeats).
    @inline(__always)
    static func edges<Edges: RandomAccessCollection<Edge>, Edge>(
        _ edges: Edges, match accesses: [TrackedAccess], storage: (Edge) -> KnownEdge
    ) -> Bool where Edges.Index == Int {
        var matched = 0
        for access in accesses {
            let registry = ObjectIdentifier(access.registry)
            if matched < edges.count {
                let next = storage(edges[matched])
                if next.serial == access.serial, next.registry == registry {
                    matched += 1
                    continue
                }
            }
            let isRepeat = edges[..<matched].contains {
                let earlier = storage($0)
                return earlier.serial == access.serial && earlier.registry == registry
            }
            if !isRepeat { return false }
        }
        return matched == edges.count
    }

    /// One `@Observed` storage read while tracking: the registry of the object it belongs to
    /// (created if needed, so the storage can be attached to later) and the storage's serial.
    struct TrackedAccess {
        let registry: Registry
        let serial: UInt64
        /// For a computed value read by a token's evaluation: the version the read returned
        /// (`noteVersion`), which the token then remembers as seen. 0 otherwise.
        var version: UInt64 = 0
    }

    /// Applies `read` with recording on, and returns its value plus what it accessed.
    static func capture<T>(_ read: () -> T) -> (value: T, recording: Recording) {
        var recording = Recording()
        let previous = ThreadSlot.accessCapture.get()
        let value = withUnsafeMutablePointer(to: &recording) { pointer in
            ThreadSlot.accessCapture.set(pointer)
            _accessCaptureCount.add(1, ordering: .relaxed)
            defer {
                _accessCaptureCount.subtract(1, ordering: .relaxed)
                ThreadSlot.accessCapture.set(previous)
            }
            return read()
        }
        return (value, recording)
    }

    /// Turns tracking on for this thread: every `@Observed` storage read from now on, on any
    /// object, is appended to `recording.all` (repeats included, in reading order), until
    /// `endTracking` restores what this returns. Not generic and taking no closure, so a caller
    /// in unspecialized generic code pays no metadata lookups or thunks.
    static func beginTracking(_ recording: UnsafeMutablePointer<Recording>) -> UnsafeMutableRawPointer? {
        let previous = ThreadSlot.accessCapture.get()
        ThreadSlot.accessCapture.set(recording)
        // Wrapping: one `lock xadd` (a trapping add is a compare-and-swap loop); one count per
        // tracking frame can't overflow.
        _accessCaptureCount.wrappingAdd(1, ordering: .relaxed)
        return previous
    }

    /// Ends what `beginTracking` started.
    static func endTracking(restoring previous: UnsafeMutableRawPointer?) {
        _accessCaptureCount.wrappingSubtract(1, ordering: .relaxed)
        ThreadSlot.accessCapture.set(previous)
    }

    /// Called by `@Observed` getters when some thread is capturing.
    static func record(object: AnyObject, serial: UInt64, valueType: Any.Type) {
        guard let raw = ThreadSlot.accessCapture.get() else { return }
        let recording = raw.assumingMemoryBound(to: Recording.self)
        if let all = recording.pointee.all {
            if let expected = recording.pointee.expected {
                // Confirming in place: the next storage the last computation read, on the
                // registry it read it on (compared by identity, borrowed: the object keeps it).
                let index = recording.pointee.confirmed
                if index < expected.pointee.count, expected.pointee[index].serial == serial,
                    unsafeDowncast(object, to: ObservableModelBase.self).withExistingRegistry({ ObjectIdentifier($0) })
                        == ObjectIdentifier(expected.pointee[index].registry)
                {
                    recording.pointee.confirmed = index + 1
                    return
                }
                materialize(recording)
            }
            // Getters only run on models, which stay alive while they are read.
            let registry = unsafeDowncast(object, to: ObservableModelBase.self).registry
            // A known storage (the steady state) never loads the attacher: loading it would
            // retain and release it.
            let id = ObjectIdentifier(registry)
            let isKnown =
                recording.pointee.known?.pointee.contains { $0.serial == serial && $0.registry == id } ?? false
            if !isKnown, let attacher = recording.pointee.attacher {
                attacher.attachNow(TrackedAccess(registry: registry, serial: serial))
            }
            // Last: the access takes the registry reference over.
            all.pointee.append(TrackedAccess(registry: registry, serial: serial))
            return
        }
        let object = ObjectIdentifier(object)
        recording.pointee.count += 1
        if recording.pointee.first == nil {
            recording.pointee.first = Access(object: object, serial: serial, valueType: valueType)
        }
    }
}

extension AccessCapture {
    /// Ends confirming in place (`Recording.expected`), if the recording still is: the reads
    /// it confirmed go to `all` as recorded accesses (their registries retained from the
    /// expected list, which keeps them alive), in front of whatever is recorded next.
    static func materialize(_ recording: UnsafeMutablePointer<Recording>) {
        guard let expected = recording.pointee.expected else { return }
        recording.pointee.expected = nil
        let confirmed = recording.pointee.confirmed
        recording.pointee.confirmed = 0
        guard let all = recording.pointee.all else { return }
        for index in 0..<confirmed {
            all.pointee.append(
                TrackedAccess(registry: expected.pointee[index].registry, serial: expected.pointee[index].serial))
        }
    }

    /// Called by a computed property's getter, after a tracked read of its value (recorded
    /// before the read): notes the version of the value it returned on that access. The
    /// computation a read may run records into a recording of its own, so the access is the
    /// last one of this serial.
    static func noteVersion(_ version: UInt64, serial: UInt64) {
        guard let raw = ThreadSlot.accessCapture.get() else { return }
        let recording = raw.assumingMemoryBound(to: Recording.self)
        guard let all = recording.pointee.all,
            let index = all.pointee.lastIndex(where: { $0.serial == serial })
        else { return }
        all.pointee[index].version = version
    }
}

/// What a tracking recording may attach each access to as it happens (a computed property's
/// dependencies), closing the window between a read and the wiring of its edge.
protocol AccessAttaching: AnyObject {
    func attachNow(_ access: AccessCapture.TrackedAccess)
}

/// Entry point for the inlinable getter; keeps `AccessCapture` itself internal.
@usableFromInline
func _recordObservedAccess(_ object: AnyObject, serial: UInt64, valueType: Any.Type) {
    AccessCapture.record(object: object, serial: serial, valueType: valueType)
}
