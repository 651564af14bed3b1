/// Which synthetic properties are computing on this thread (innermost first), for cycle
/// detection and so a computed getter knows a computation is reading it; and whether the
/// thread is only probing which property a key path names.
enum SyntheticFrame {
    private struct Frame {
        let state: ObjectIdentifier
        let previous: UnsafeMutableRawPointer?
    }

    /// Marks `probe` mode: the raw value 1 (never a frame's address).
    private static var probeMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    /// Whether a synthetic computation is running on this thread.
    static var isComputing: Bool {
        guard let top = ThreadSlot.syntheticFrame.get() else { return false }
        return top != probeMarker
    }

    /// Whether the thread is resolving a key path for `invalidate(_:)`.
    static var isProbing: Bool { ThreadSlot.syntheticFrame.get() == probeMarker }

    /// Whether `state` is computing on this thread already.
    static func contains(_ state: AnyObject) -> Bool {
        let id = ObjectIdentifier(state)
        var current = ThreadSlot.syntheticFrame.get()
        while let frame = current, frame != probeMarker {
            let pointer = frame.assumingMemoryBound(to: Frame.self)
            if pointer.pointee.state == id { return true }
            current = pointer.pointee.previous
        }
        return false
    }

    /// Runs `body` (the computation of `state`) with its frame pushed.
    @inline(__always)
    static func run<T>(_ state: AnyObject, _ body: () -> T) -> T {
        let previous = ThreadSlot.syntheticFrame.get()
        var frame = Frame(state: ObjectIdentifier(state), previous: previous == probeMarker ? nil : previous)
        return withUnsafeMutablePointer(to: &frame) { pointer in
            ThreadSlot.syntheticFrame.set(pointer)
            defer { ThreadSlot.syntheticFrame.set(previous) }
            return body()
        }
    }

    /// Memory for one frame, for `push`; freed with `deallocate()`.
    static func allocateFrame() -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Frame>.size, alignment: MemoryLayout<Frame>.alignment)
    }

    /// `run` without a closure: pushes the frame of `state` into `frame` (from
    /// `allocateFrame()`, used by nothing else until `pop`); returns what `pop` restores.
    @inline(__always)
    static func push(_ state: AnyObject, into frame: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        let previous = ThreadSlot.syntheticFrame.get()
        frame.initializeMemory(
            as: Frame.self,
            to: Frame(state: ObjectIdentifier(state), previous: previous == probeMarker ? nil : previous))
        ThreadSlot.syntheticFrame.set(frame)
        return previous
    }

    /// Ends what `push` began.
    @inline(__always)
    static func pop(restoring previous: UnsafeMutableRawPointer?) {
        ThreadSlot.syntheticFrame.set(previous)
    }

    /// Runs `body` in probe mode: computed getters with a cached value return it, valid or not.
    static func probe<T>(_ body: () -> T) -> T {
        let previous = ThreadSlot.syntheticFrame.get()
        ThreadSlot.syntheticFrame.set(probeMarker)
        defer { ThreadSlot.syntheticFrame.set(previous) }
        return body()
    }
}
