import Synchronization

/// A yes-or-no question about classes (a protocol conformance) whose answer for the last class
/// asked about is kept in one atomic word: the class's metadata pointer, 8-aligned, with the
/// answer in its low bit.
///
/// A conformance check costs hundreds of instructions; the questions asked per object (does
/// this model report observation state, does this observer take deinit notices) usually come
/// for many objects of one class in a row. Racing threads may overwrite each other's answer;
/// each answer stored is right for the class stored with it.
struct LastClassAnswer: ~Copyable, Sendable {
    private let word = Atomic<UInt>(0)

    init() {}

    /// The answer for `type`: kept, or computed by `compute` and kept.
    func answer(for type: AnyObject.Type, _ compute: (AnyObject.Type) -> Bool) -> Bool {
        let id = UInt(bitPattern: ObjectIdentifier(type))
        let last = word.load(ordering: .relaxed)
        if last & ~1 == id { return last & 1 != 0 }
        let answer = compute(type)
        word.store(id | (answer ? 1 : 0), ordering: .relaxed)
        return answer
    }
}
