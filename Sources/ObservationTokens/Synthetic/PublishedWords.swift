import Synchronization

/// A copy of a synthetic property's valid cached value that readers load without a lock: a
/// sequence lock over up to four atomic words, for values that are plain bits (no reference
/// counts, no resources) and at most 32 bytes — `Int`, `Double`, `Bool`, small enums and
/// optionals of them, points, sizes, rectangles.
///
/// Values with reference counts (strings, arrays, objects) are not copied here: a reader that
/// loaded such a value's bits while a writer replaced it could retain memory that was just
/// freed. They stay behind the state's lock.
///
/// `sequence` is odd while the words hold the current valid value, even otherwise; every
/// change adds at least one. Writers hold the state's lock, so they never race each other. A
/// reader that loads an odd sequence, the words, and the same sequence again got a value that
/// was valid at that moment; anything else sends it to the locked path.
@usableFromInline
struct PublishedWords: ~Copyable, Sendable {
    @usableFromInline let sequence = Atomic<UInt64>(0)
    @usableFromInline let word0 = Atomic<UInt64>(0)
    @usableFromInline let word1 = Atomic<UInt64>(0)
    @usableFromInline let word2 = Atomic<UInt64>(0)
    @usableFromInline let word3 = Atomic<UInt64>(0)

    init() {}

    /// The four words, in memory order, as a value's bytes are laid out in them.
    @usableFromInline typealias Bytes = (UInt64, UInt64, UInt64, UInt64)

    /// Whether values of `Value` are published here (constant once specialized).
    @inlinable @inline(__always)
    static func covers<Value>(_: Value.Type) -> Bool {
        _isPOD(Value.self) && MemoryLayout<Value>.size <= MemoryLayout<Bytes>.size
    }

    /// The published value if it is valid and no writer changed it while it was read; nil
    /// sends the caller to the locked path. Only for types that ``covers(_:)``.
    @inlinable @inline(__always)
    func valid<Value>(as _: Value.Type) -> Value? {
        let before = sequence.load(ordering: .acquiring)
        guard before & 1 == 1 else { return nil }
        let size = MemoryLayout<Value>.size
        if size <= 8 {
            // One word can't tear, so the sequence needs no second look: the word holds the
            // value published with `before` (the acquiring load sees its store) or one
            // published since, which is newer and was valid when stored (only `publish`
            // writes the words, and only values valid at that moment).
            let word = word0.load(ordering: .relaxed)
            return withUnsafeBytes(of: word) { $0.loadUnaligned(as: Value.self) }
        }
        var bytes: Bytes = (0, 0, 0, 0)
        bytes.0 = word0.load(ordering: .relaxed)
        if size > 8 { bytes.1 = word1.load(ordering: .relaxed) }
        if size > 16 { bytes.2 = word2.load(ordering: .relaxed) }
        if size > 24 { bytes.3 = word3.load(ordering: .relaxed) }
        // Keeps the word loads before the second sequence load: a reader that saw a writer's
        // words also sees that writer's change of the sequence.
        atomicMemoryFence(ordering: .acquiring)
        guard sequence.load(ordering: .relaxed) == before else { return nil }
        return withUnsafeBytes(of: bytes) { $0.loadUnaligned(as: Value.self) }
    }

    /// Publishes `value` as the valid value. Callers hold the state's lock and have checked
    /// ``covers(_:)``.
    func publish<Value>(_ value: Value) {
        let current = sequence.load(ordering: .relaxed)
        let hidden = (current | 1) &+ 1  // even: not valid while the words change
        sequence.store(hidden, ordering: .relaxed)
        // Readers that see any of the new words also see the sequence leave `current`.
        atomicMemoryFence(ordering: .releasing)
        var bytes: Bytes = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.storeBytes(of: value, as: Value.self) }
        word0.store(bytes.0, ordering: .relaxed)
        word1.store(bytes.1, ordering: .relaxed)
        word2.store(bytes.2, ordering: .relaxed)
        word3.store(bytes.3, ordering: .relaxed)
        sequence.store(hidden &+ 1, ordering: .releasing)
    }

    /// `publish` for a value of one word, given as its bits (see `WordKind`): no call through
    /// the value's metadata.
    func publish(bits: UInt64) {
        let current = sequence.load(ordering: .relaxed)
        let hidden = (current | 1) &+ 1  // even: not valid while the words change
        sequence.store(hidden, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        word0.store(bits, ordering: .relaxed)
        sequence.store(hidden &+ 1, ordering: .releasing)
    }

    /// Withdraws the published value: readers take the locked path until the next publish.
    /// Callers hold the state's lock.
    func withdraw() {
        let current = sequence.load(ordering: .relaxed)
        if current & 1 == 1 { sequence.store(current &+ 1, ordering: .releasing) }
    }
}
