/// An array that stores its first element inline, so the common one-element case (one path,
/// one step, one edge per token) allocates nothing.
struct SmallArray<Element>: RandomAccessCollection {
    // Invariant: `head == nil` implies `tail.isEmpty`.
    private var head: Element?
    private var tail: [Element] = []

    init() {}

    init(_ elements: some Sequence<Element>) {
        for element in elements { append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }
    /// `endIndex` (the collection's default counts through a call per use).
    var count: Int { endIndex }

    subscript(position: Int) -> Element {
        position == 0 ? head! : tail[position - 1]
    }

    mutating func append(_ element: Element) {
        if head == nil { head = element } else { tail.append(element) }
    }

    mutating func reserveCapacity(_ capacity: Int) {
        if capacity > 1 { tail.reserveCapacity(capacity - 1) }
    }
}

extension SmallArray: Sendable where Element: Sendable {}
