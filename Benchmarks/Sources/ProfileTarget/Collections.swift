import ObservationTokens

// Our side of the collection workloads W12 to W14, at PeerBench's full sizes.

/// W12: 10,000 appends to an array of `size` counters with 1,000 object-following tokens.
func w12(size: Int) {
    let items = ObservedArray((0..<size).map { _ in Counter() })
    let tokens = (0..<1_000).map { index in
        items.observe(.object(at: index % size), queue: queue) { _, _ in tally.count &+= 1 }
    }
    let extra = (0..<10_000).map { _ in Counter() }
    w12measured(items, extra)
    precondition(queue.drain() == 0)
    withExtendedLifetime(tokens) {}
}

@inline(never)
func w12measured(_ items: ObservedArray<Counter>, _ extra: [Counter]) {
    for item in extra { items.append(item) }
}

/// W13: 200 inserts at 0 of an array of 100,000 with 1,000 index-following tokens, delivered.
func w13() {
    let numbers = ObservedArray(0..<100_000)
    let tokens = (0..<1_000).map { index in numbers.observe(.element(at: index), queue: queue) { _ in tally.count &+= 1 } }
    w13measured(numbers)
    withExtendedLifetime(tokens) {}
}

@inline(never)
func w13measured(_ numbers: ObservedArray<Int>) {
    for value in 0..<opaque(200) {
        numbers.insert(value, at: 0)
        precondition(queue.drain() == 1_000)
    }
}

/// W14: 50 ticks of 1,000 appends to an array of 1,000 with one change-list token.
func w14() {
    let items = ObservedArray(0..<1_000)
    let token = items.observe(.mutations, queue: queue) { _, changes in tally.count &+= changes.inserted.count }
    for _ in 0..<opaque(50) {
        w14measured(items)
        items.removeLast(1_000)
        _ = queue.drain()
    }
    withExtendedLifetime(token) {}
}

@inline(never)
func w14measured(_ items: ObservedArray<Int>) {
    for value in 0..<opaque(1_000) { items.append(value) }
    precondition(queue.drain() == 1)
}
