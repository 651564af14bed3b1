// swift-format-ignore-file
// The code blocks of docs/KeyPaths.md, verbatim (scripts/check-doc-snippets.py checks that each
// block appears here or in another test; keep the layout of the article).

import ObservationTokens
import Synchronization
import Testing

enum KeyPathsDoc {
    final class UserCache: ObservableModel { @Observed var currentUser: User? }
    final class User: ObservableModel      { @Observed var address: Address? }
    final class Address: ObservableModel   { @Observed var zipCode = "" }
}

@Suite struct KeyPathsDocSnippetTests {
    typealias UserCache = KeyPathsDoc.UserCache

    @Test func typedChain() {
        let cache = UserCache()
        let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)
        // KeyPathChain<UserCache, String?> — optional because the intermediates are

        let token = cache.observe(zipCode) { cache, zipCode in
            print(zipCode ?? "unreachable")   // the endpoint at delivery; nil when unreachable
        }
        let typed: KeyPathChain<UserCache, String?> = zipCode
        _ = typed
        #expect(token.isValid)
    }

    @Test func chainEndpoint() {
        let cache = UserCache()
        let zipCode = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)

        let token = cache.observe(endpointOf: zipCode) { cache, endpoint in
            switch endpoint {
            case .unreachable: print("no user or no address")
            case .value(let zipCode): print(zipCode ?? "a nil zip code")
            }
        }
        #expect(token.isValid)
    }

    @Test func severalChains() throws {
        let cache = UserCache()
        let token = cache.observe([
            AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)),
            AnyKeyPathChain(KeyPathChain(\UserCache.currentUser).then(\.address)),
        ]) { cache in _ = cache }
        #expect(token.isValid)
    }

    @Test func stringPath() throws {
        let cache = UserCache()
        let token = try cache.observe(path: "currentUser.address.zipCode") { cache in _ = cache }
        #expect(token.isValid)
    }

    @Test func coalescingStillHolds() {
        let cache = UserCache()
        let currentUser = KeyPathsDoc.User()
        cache.currentUser = currentUser
        let homeAddress = KeyPathsDoc.Address()
        let workAddress = KeyPathsDoc.Address()
        let queue = CoalescingQueue(target: .manual)
        let calls = RelLock(0)
        let token = cache.observe(KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode), queue: queue) { _, _ in
            calls.withLock { $0 += 1 }
        }
          currentUser.address = homeAddress    // fires (path element changed)
          currentUser.address = workAddress    // now workAddress is watched, homeAddress isn't
          currentUser.address?.zipCode = "97210"
          // one callback at the end of the tick
        #expect(queue.drain() == 1)
        #expect(calls.withLock { $0 } == 1)
        homeAddress.zipCode = "00000"
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }
}
