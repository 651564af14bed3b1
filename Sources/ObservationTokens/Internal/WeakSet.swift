/// An NSHashTable-like set that never retains its elements, with O(1) insert and remove.
///
/// Each insert returns a slot index; the element keeps it and hands it back to `remove(at:)`.
/// Freed slots are reused through a free list, so the table never hashes anything and never
/// compares elements with `==` (bookkeeping is by identity only).
///
/// The set holds its elements unretained. Its contract replaces zeroing weak references:
/// an element removes itself (under the owner's lock) before it can be deinitialized.
/// `Subscription` keeps that contract: its `end()` detaches every edge, and it is always ended
/// before its last owner (token, registry or queue) lets go of it.
struct WeakSet<Element: AnyObject, Payload> {
    private struct Slot {
        var element: Unmanaged<Element>?
        var payload: Payload?
        var nextFree: Int
    }

    private var slots: [Slot] = []
    private var firstFree = -1
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Inserts `element` and returns the slot index that identifies it. O(1) amortized.
    mutating func insert(_ element: Element, payload: Payload) -> Int {
        count += 1
        let slot = Slot(element: .passUnretained(element), payload: payload, nextFree: -1)
        if firstFree >= 0 {
            let index = firstFree
            firstFree = slots[index].nextFree
            slots[index] = slot
            return index
        }
        slots.append(slot)
        return slots.count - 1
    }

    /// Removes the element at `index`. Removing an empty slot is a no-op. O(1).
    mutating func remove(at index: Int) {
        guard index >= 0, index < slots.count, slots[index].element != nil else { return }
        slots[index] = Slot(element: nil, payload: nil, nextFree: firstFree)
        firstFree = index
        count -= 1
        if count == 0 {
            // Drop the storage once empty so a burst of tokens leaves nothing behind.
            slots.removeAll()
            firstFree = -1
        }
    }

    /// Calls `body` for each element, in slot order. Must be called under the owner's lock,
    /// which guarantees every element is alive (see the type's contract).
    func forEach(_ body: (Element, Payload) throws -> Void) rethrows {
        for slot in slots {
            if let element = slot.element, let payload = slot.payload {
                try body(element.takeUnretainedValue(), payload)
            }
        }
    }

    /// Like `forEach`, without retaining each element: for hot paths that only look at most
    /// elements. Same contract: under the owner's lock only.
    @inline(__always)
    func forEachUnretained(_ body: (Unmanaged<Element>, Payload) throws -> Void) rethrows {
        try slots.withUnsafeBufferPointer { slots in
            for slot in slots {
                if let element = slot.element, let payload = slot.payload {
                    try body(element, payload)
                }
            }
        }
    }

    /// Removes every element and returns them, retained, for processing outside the lock.
    mutating func removeAll() -> [(Element, Payload)] {
        var result: [(Element, Payload)] = []
        result.reserveCapacity(count)
        forEach { result.append(($0, $1)) }
        slots.removeAll()
        firstFree = -1
        count = 0
        return result
    }
}
