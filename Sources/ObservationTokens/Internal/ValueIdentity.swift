import Synchronization

/// Decides whether a set changed a value: `===` for class references (also inside an
/// `Optional`), `==` for `Equatable` values, and "always changed" for everything else.
///
/// Class references are compared by identity even when the class is `Equatable`: replacing a
/// model with a distinct but equal one must still retarget key paths that run through it.
///
/// How to compare is worked out once per type (dynamic casts cost hundreds of instructions)
/// and kept in `ValueComparator`'s cache; after that a comparison is a cache probe and one
/// indirect call.
@inlinable
func _valuesAreIdentical<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
    // The most common property types compare inline: once specialized, these metatype tests
    // are constants and all but one branch disappears.
    if Value.self == Int.self { return unsafeBitCast(lhs, to: Int.self) == unsafeBitCast(rhs, to: Int.self) }
    if Value.self == Bool.self { return unsafeBitCast(lhs, to: Bool.self) == unsafeBitCast(rhs, to: Bool.self) }
    if Value.self == Double.self { return unsafeBitCast(lhs, to: Double.self) == unsafeBitCast(rhs, to: Double.self) }
    if Value.self == String.self { return unsafeBitCast(lhs, to: String.self) == unsafeBitCast(rhs, to: String.self) }
    // An optional reference to a class (`var owner: Item?`): its one word is the object's address
    // or 0, compared inline (the cast is decided when the function is specialized).
    if Value.self is any _OptionalObjectReference.Type, MemoryLayout<Value>.size == MemoryLayout<UInt>.size {
        return unsafeBitCast(lhs, to: UInt.self) == unsafeBitCast(rhs, to: UInt.self)
    }
    return withUnsafePointer(to: lhs) { left in
        withUnsafePointer(to: rhs) { right in
            _compareValues(left, right, of: Value.self)
        }
    }
}

@usableFromInline
func _compareValues(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, of type: Any.Type) -> Bool {
    ValueComparator.for(type)._withUnsafeGuaranteedRef { $0.areIdentical(lhs, rhs) }
}

/// `_valuesAreIdentical` for values already erased to `Any` (path endpoints).
func anyValuesAreIdentical(_ lhs: Any, _ rhs: Any) -> Bool {
    func open<T>(_ left: T) -> Bool {
        guard let right = rhs as? T else { return false }
        return _valuesAreIdentical(left, right)
    }
    return _openExistential(lhs, do: open)
}

/// How two values of one type are compared, found once per type and never freed.
class ValueComparator: @unchecked Sendable {  // immutable after init
    func areIdentical(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool { false }

    /// Eight lock-free slots in front of a locked table: a hit is one atomic load. Each slot
    /// holds the bits of an `Unmanaged<ValueComparator>` (they are never freed), or 0.
    private static let slot0 = Atomic<UInt>(0)
    private static let slot1 = Atomic<UInt>(0)
    private static let slot2 = Atomic<UInt>(0)
    private static let slot3 = Atomic<UInt>(0)
    private static let slot4 = Atomic<UInt>(0)
    private static let slot5 = Atomic<UInt>(0)
    private static let slot6 = Atomic<UInt>(0)
    private static let slot7 = Atomic<UInt>(0)
    private static let table = Locked<[ObjectIdentifier: ValueComparator]>(state: [:])

    @inline(__always)
    private static func withSlot<R>(for id: ObjectIdentifier, _ body: (borrowing Atomic<UInt>) -> R) -> R {
        switch (UInt(bitPattern: id) >> 4) & 7 {
        case 0: body(slot0)
        case 1: body(slot1)
        case 2: body(slot2)
        case 3: body(slot3)
        case 4: body(slot4)
        case 5: body(slot5)
        case 6: body(slot6)
        default: body(slot7)
        }
    }

    /// The comparator for `type`, unretained: comparators live forever.
    static func `for`(_ type: Any.Type) -> Unmanaged<ValueComparator> {
        let id = ObjectIdentifier(type)
        let bits = withSlot(for: id) { $0.load(ordering: .acquiring) }
        if bits != 0 {
            let cached = Unmanaged<ValueComparator>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
            if cached._withUnsafeGuaranteedRef({ $0.type == id }) { return cached }
        }
        let comparator = table.withLock { table in
            if let existing = table[id] { return existing }
            let made = make(for: type)
            table[id] = made  // kept forever, so the slots' pointers stay valid
            return made
        }
        let unmanaged = Unmanaged.passUnretained(comparator)
        let newBits = UInt(bitPattern: unmanaged.toOpaque())
        withSlot(for: id) { $0.store(newBits, ordering: .releasing) }
        return unmanaged
    }

    let type: ObjectIdentifier

    init(type: Any.Type) {
        self.type = ObjectIdentifier(type)
    }

    private static func make(for type: Any.Type) -> ValueComparator {
        if type is AnyObject.Type { return ReferenceComparator(type: type) }
        if let optional = type as? any _OptionalReference.Type, optional._wrapsClass {
            func open<T: _OptionalReference>(_: T.Type) -> ValueComparator {
                OptionalReferenceComparator<T>(type: type)
            }
            return open(optional)
        }
        if let equatable = type as? any Equatable.Type {
            func open<T: Equatable>(_: T.Type) -> ValueComparator { EquatableComparator<T>(type: type) }
            return open(equatable)
        }
        return ValueComparator(type: type)
    }
}

private final class ReferenceComparator: ValueComparator, @unchecked Sendable {
    override func areIdentical(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        lhs.load(as: UnsafeRawPointer.self) == rhs.load(as: UnsafeRawPointer.self)
    }
}

private final class EquatableComparator<T: Equatable>: ValueComparator, @unchecked Sendable {
    override func areIdentical(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        lhs.assumingMemoryBound(to: T.self).pointee == rhs.assumingMemoryBound(to: T.self).pointee
    }
}

/// An optional class reference (or class-bound existential) keeps the object's address in its
/// first word, and nil as 0 there: identity is a compare of that word, with no cast through
/// `AnyObject` (which goes through the dynamic-cast runtime, thousands of instructions).
private final class OptionalReferenceComparator<T: _OptionalReference>: ValueComparator, @unchecked Sendable {
    override func areIdentical(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer) -> Bool {
        lhs.load(as: UInt.self) == rhs.load(as: UInt.self)
    }
}

/// Lets the identity check see through `Optional` to a class reference.
@usableFromInline
protocol _OptionalReference {
    static var _wrapsClass: Bool { get }
    var _reference: AnyObject? { get }
}

extension Optional: _OptionalReference {
    @usableFromInline
    static var _wrapsClass: Bool { Wrapped.self is AnyObject.Type }

    @usableFromInline
    var _reference: AnyObject? {
        guard case .some(let wrapped) = self, Wrapped.self is AnyObject.Type else { return nil }
        return wrapped as AnyObject
    }
}

/// Optionals of class references, which `_valuesAreIdentical` compares by address inline. (An
/// optional class-bound existential is wider than a word: the size test leaves it to
/// `ValueComparator`.)
@usableFromInline
protocol _OptionalObjectReference {}

extension Optional: _OptionalObjectReference where Wrapped: AnyObject {}
