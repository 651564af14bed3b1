/// An NSHashTable-like set that never retains its elements, with O(1) insert and remove.
///
/// Each insert returns a slot index; the element keeps it and hands it back to `remove(at:)`.
/// Freed slots are reused through a free list, so the table never hashes anything and never
/// compares elements with `==` (bookkeeping is by identity only). Each element carries one
/// flag bit (for registries: whether the edge is a path's leaf).
///
/// The set holds its elements unretained. Its contract replaces zeroing weak references:
/// an element removes itself (under the owner's lock) before it can be deinitialized.
/// `Subscription` keeps that contract: its `end()` detaches every edge, and it is always ended
/// before its last owner (token, registry or queue) lets go of it.
struct WeakSet<Element: AnyObject> {
    // One word per slot, so a property with 10,000 tokens costs 80 KB here. An occupied slot
    // holds the element's address (objects are at least 8-byte aligned) with the flag in bit 0;
    // a free slot has bit 1 set and the next free slot's index + 1 in the bits above.
    //
    // Slot 0 is kept inline: most properties have one observer, and a set that tells it reads
    // no table (a separate allocation, a cache miss of its own on every set of a cold object).
    // Slots 1… are `slots[0…]`.
    private var first: UInt = Self.freeBit
    private var slots: [UInt] = []
    /// The first free slot: slot 0 while the set is empty, -1 when no slot is free.
    private var firstFree = 0
    private(set) var count = 0

    private static var freeBit: UInt { 2 }
    /// Slots (8 bytes each) an empty set may keep.
    private static var keptCapacity: Int { 1024 }

    var isEmpty: Bool { count == 0 }

    /// Inserts `element` and returns the slot index that identifies it. O(1) amortized.
    /// Inlined into the registry's attach (its one caller), which a token's creation inlines.
    @inline(__always)
    mutating func insert(_ element: Element, flag: Bool) -> Int {
        count += 1
        let address = UInt(bitPattern: Unmanaged.passUnretained(element).toOpaque())
        let bits = address | (flag ? 1 : 0)
        if firstFree == 0 {
            firstFree = Int(first >> 2) - 1
            first = bits
            return 0
        }
        if firstFree > 0 {
            let index = firstFree
            firstFree = Int(slots[index - 1] >> 2) - 1
            slots[index - 1] = bits
            return index
        }
        // The first overflow slot comes with room for three more: a property that gains a
        // second observer usually gains a few (path tokens moving onto it), and growing one
        // slot at a time reallocated the list twice more on the way to four.
        if slots.capacity == 0 { slots.reserveCapacity(4) }
        slots.append(bits)
        return slots.count
    }

    /// Removes the element at `index`. Removing an empty slot is a no-op. O(1).
    mutating func remove(at index: Int) {
        let free = UInt(firstFree + 1) << 2 | Self.freeBit
        if index == 0 {
            guard first & Self.freeBit == 0 else { return }
            first = free
        } else {
            guard index > 0, index <= slots.count, slots[index - 1] & Self.freeBit == 0 else { return }
            slots[index - 1] = free
        }
        firstFree = index
        count -= 1
        if count == 0 {
            // A small table is kept for the next observers (views come and go in batches, and
            // regrowing it each time costs more than the tokens); a large one is dropped, so a
            // burst of tokens leaves little behind.
            if !slots.isEmpty { slots.removeAll(keepingCapacity: slots.capacity <= Self.keptCapacity) }
            reset()
        }
    }

    /// Every slot free, slot 0 first.
    private mutating func reset() {
        first = Self.freeBit
        firstFree = 0
    }

    /// Calls `body` for each element, in slot order, without retaining it. Must be called under
    /// the owner's lock, which guarantees every element is alive (see the type's contract).
    @inline(__always)
    func forEachUnretained(_ body: (Unmanaged<Element>, _ flag: Bool) throws -> Void) rethrows {
        if first & Self.freeBit == 0 { try body(Self.element(first), first & 1 != 0) }
        guard !slots.isEmpty else { return }
        try slots.withUnsafeBufferPointer { slots in
            for bits in slots where bits & Self.freeBit == 0 {
                try body(Self.element(bits), bits & 1 != 0)
            }
        }
    }

    /// `forEachUnretained` for the setter's hot path: a mutating access reaches the slots in
    /// place, where a read-only one would retain and release their storage.
    @inline(__always)
    mutating func forEachInPlace(_ body: (Unmanaged<Element>, _ flag: Bool) throws -> Void) rethrows {
        if first & Self.freeBit == 0 { try body(Self.element(first), first & 1 != 0) }
        guard !slots.isEmpty else { return }
        try slots.withUnsafeMutableBufferPointer { slots in
            for bits in slots where bits & Self.freeBit == 0 {
                try body(Self.element(bits), bits & 1 != 0)
            }
        }
    }

    /// The element in the lowest occupied slot, unretained (under the owner's lock), with its
    /// flag.
    var firstElement: (element: Unmanaged<Element>, flag: Bool)? {
        let bits = first & Self.freeBit == 0 ? first : slots.first { $0 & Self.freeBit == 0 }
        guard let bits else { return nil }
        return (Self.element(bits), bits & 1 != 0)
    }

    @inline(__always)
    private static func element(_ bits: UInt) -> Unmanaged<Element> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits & ~3)!)
    }

    /// Removes every element and returns them, retained, for processing outside the lock.
    mutating func removeAll() -> [Element] {
        var result: [Element] = []
        removeAll(into: &result)
        return result
    }

    /// Empties the set, appending its elements (retained) to `result`.
    mutating func removeAll(into result: inout [Element]) {
        result.reserveCapacity(result.count + count)
        forEachUnretained { element, _ in result.append(element.takeUnretainedValue()) }
        slots.removeAll()
        reset()
        count = 0
    }
}
