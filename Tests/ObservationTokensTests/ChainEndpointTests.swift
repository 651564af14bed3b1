import Testing

@testable import ObservationTokens

/// Issue 17: a typed chain's callback can tell "unreachable" from "nil at the endpoint".
@Suite("Chain endpoints: unreachable or nil")
struct ChainEndpointTests {
    @Test func theCallbackTellsUnreachableFromNilFromAValue() {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser())
        let seen = PathRecorder<String>()
        let chain = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.label)
        let token = cache.observe(.endpoint(of: chain), options: .initial, queue: queue) { _, endpoint in
            switch endpoint {
            case .unreachable: seen.record("unreachable")
            case .value(nil): seen.record("nil")
            case .value(let label?): seen.record(label)
            }
        }
        // No address: unreachable, where the plain chain callback would say nil
        #expect(seen.values == ["unreachable"])

        let address = PathAddress()
        cache.currentUser?.address = address
        queue.drain()
        address.label = "home"
        queue.drain()
        cache.currentUser = nil
        queue.drain()
        #expect(seen.values == ["unreachable", "nil", "home", "unreachable"])
        withExtendedLifetime(token) {}
    }

    @Test func withEndpointChangesOnlyRealChangesArriveAndUnreachableIsOne() {
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache(currentUser: PathUser(address: PathAddress(zipCode: "1")))
        let seen = PathRecorder<ChainEndpoint<String?>>()
        let token = cache.observe(
            .endpoint(of: KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)),
            options: .endpointChanges, queue: queue
        ) { _, endpoint in seen.record(endpoint) }

        cache.currentUser?.address = PathAddress(zipCode: "1")  // same endpoint value
        queue.drain()
        cache.currentUser?.address = nil
        queue.drain()
        cache.currentUser = PathUser()  // still unreachable: no change
        queue.drain()
        cache.currentUser?.address = PathAddress(zipCode: "2")
        queue.drain()
        #expect(seen.values == [.unreachable, .value("2")])
        #expect(seen.values.last?.value == "2")
        withExtendedLifetime(token) {}
    }
}
