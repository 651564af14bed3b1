import Testing

@testable import ObservationTokens

/// The two ways to observe `currentUser.address.zipCode` from the cache.
enum PathStyle: String, CaseIterable, Sendable {
    case typed
    case string

    func observeZipCode(
        of cache: PathUserCache, options: ObservationOptions = [], queue: CoalescingQueue,
        _ callback: @escaping @Sendable (String?) -> Void
    ) throws -> ObservationToken {
        switch self {
        case .typed:
            let chain = KeyPathChain(\PathUserCache.currentUser).then(\.address).then(\.zipCode)
            return cache.observe(.chain(chain), options: options, queue: queue) { _, zipCode in callback(zipCode) }
        case .string:
            return try cache.observe(.path("currentUser.address.zipCode"), options: options, queue: queue) { cache in
                callback(cache.currentUser?.address?.zipCode)
            }
        }
    }
}

@Suite("String key paths")
struct StringKeyPathTests {
    // MARK: Same semantics as typed chains

    @Test(arguments: PathStyle.allCases)
    func firesOnEveryElementAndRetargetsLikeATypedChain(style: PathStyle) throws {
        // Given the path observed while its first intermediate is nil
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        let seen = PathRecorder<String?>()
        let token = try style.observeZipCode(of: cache, queue: queue) { seen.record($0) }

        // When a user without an address arrives (nil → nil)
        let user = PathUser()
        cache.currentUser = user
        #expect(queue.drain() == 1)

        // When home, then work, then the zip code are set in one tick
        let home = PathAddress(zipCode: "10001")
        let work = PathAddress(zipCode: "94103")
        user.address = home
        user.address = work
        work.zipCode = "97210"
        #expect(queue.drain() == 1)

        // Then only the address now on the path is watched
        home.zipCode = "home"
        #expect(queue.drain() == 0)
        work.zipCode = "work"
        #expect(queue.drain() == 1)
        #expect(home.observerCount(of: \.zipCode) == 0)
        #expect(work.observerCount(of: \.zipCode) == 1)

        // When the address becomes nil, then comes back
        user.address = nil
        #expect(queue.drain() == 1)
        work.zipCode = "detached"
        #expect(queue.drain() == 0)
        user.address = work
        #expect(queue.drain() == 1)
        #expect(seen.values == [nil, "97210", "work", nil, "detached"])

        // When the token ends, nothing stays attached
        token.invalidate()
        #expect([cache.pathEdgeCount, user.pathEdgeCount, work.pathEdgeCount] == [0, 0, 0])
    }

    @Test(arguments: PathStyle.allCases)
    func endpointChangesModeMatchesTypedChains(style: PathStyle) throws {
        // Given the path in endpoint-changes mode, unreachable at first
        let queue = CoalescingQueue(target: .manual)
        let cache = PathUserCache()
        let seen = PathRecorder<String?>()
        let token = try style.observeZipCode(of: cache, options: .endpointChanges, queue: queue) { seen.record($0) }

        // When a user without an address arrives (unreachable → unreachable)
        let user = PathUser()
        cache.currentUser = user
        #expect(queue.drain() == 0)

        // When an address arrives, then is replaced by one with the same zip code
        user.address = PathAddress(zipCode: "10001")
        #expect(queue.drain() == 1)
        user.address = PathAddress(zipCode: "10001")
        #expect(queue.drain() == 0)

        // When the endpoint becomes unreachable again
        cache.currentUser = nil
        #expect(queue.drain() == 1)
        #expect(seen.values == ["10001", nil])
        withExtendedLifetime(token) {}
    }

    @Test
    func stringPathRetainsNoIntermediateObject() throws {
        // Given a string path through an address that only the user holds
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache(currentUser: user)
        weak var weakAddress: PathAddress?
        do {
            let address = PathAddress(zipCode: "10001")
            user.address = address
            weakAddress = address
        }
        let token = try cache.observe(.path("currentUser.address.zipCode"), queue: queue) { _ in }
        #expect(weakAddress != nil)

        // When the user lets go of the address
        user.address = nil

        // Then it is gone, although the token lives on
        #expect(weakAddress == nil)
        #expect(token.isValid)
        #expect(queue.drain() == 1)
    }

    // MARK: `*`

    @Test
    func wildcardFiresOnEveryObservedPropertyOfTheObject() throws {
        // Given `*` observed on an address
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress()
        let seen = PathRecorder<String>()
        let token = try address.observe(.path("*"), queue: queue) { address in
            seen.record("\(address.zipCode)|\(address.city)|\(address.label ?? "nil")")
        }

        // When each property changes in its own tick
        address.zipCode = "97210"
        #expect(queue.drain() == 1)
        address.city = "Portland"
        #expect(queue.drain() == 1)
        address.label = "home"
        #expect(queue.drain() == 1)

        // When all of them change in one tick
        address.zipCode = "10001"
        address.city = "New York"
        address.label = nil
        #expect(queue.drain() == 1)

        // Then one callback per tick
        #expect(seen.values == ["97210||nil", "97210|Portland|nil", "97210|Portland|home", "10001|New York|nil"])
        withExtendedLifetime(token) {}
    }

    @Test
    func wildcardObservesOneLevelOnly() throws {
        // Given `*` observed on a user
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress(zipCode: "10001")
        let user = PathUser(address: address)
        let token = try user.observe(.path("*"), queue: queue) { _ in }

        // When properties of objects one level down change
        address.zipCode = "97210"
        user.primaryAddress.city = "Portland"
        // Then nothing fires
        #expect(queue.drain() == 0)

        // When the user's own properties change
        user.name = "Ada"
        #expect(queue.drain() == 1)
        user.address = PathAddress()
        #expect(queue.drain() == 1)
        user.array = [1]
        #expect(queue.drain() == 1)
        #expect(address.observedProperties == [])
        withExtendedLifetime(token) {}
    }

    @Test
    func wildcardIsReportedAsStarAndCountsTowardEveryProperty() throws {
        // Given `*` observed on an address
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress()
        let star = try address.observe(.path("*"), queue: queue) { _ in }

        // Then it is one observed key, `*`, that counts for every property
        #expect(address.observedProperties == ["*"])
        #expect(address.observablePropertyNames == ["zipCode", "city", "label"])
        for name in address.observablePropertyNames {
            #expect(address.observerCount(ofProperty: name) == 1, "\(name)")
        }
        #expect(address.observerCount(of: \.zipCode) == 1)
        #expect(address.observerCount(of: \.label) == 1)
        #expect(address.observerCount(ofProperty: "*") == 1)

        // When one property is also observed by itself
        let zip = address.observe(\.zipCode, queue: queue) { _ in }
        #expect(address.observerCount(of: \.zipCode) == 2)
        #expect(address.observerCount(of: \.city) == 1)
        #expect(address.observedProperties == ["zipCode", "*"])

        // When the `*` token ends
        star.invalidate()
        #expect(address.observerCount(of: \.zipCode) == 1)
        #expect(address.observerCount(of: \.city) == 0)
        #expect(address.observedProperties == ["zipCode"])
        withExtendedLifetime(zip) {}
    }

    @Test
    func nonFinalWildcardFiresOnAChangeOfAnyPropertyAtThatLevel() throws {
        // Given "b.*.s4"
        let queue = CoalescingQueue(target: .manual)
        let root = PathHubRoot()
        let hub = root.b
        let token = try root.observe(.path("b.*.s4"), queue: queue) { _ in }

        // When any property of b changes, whether or not it leads to an s4
        hub.count = 1
        #expect(queue.drain() == 1)
        hub.plain = PathNoS4()
        #expect(queue.drain() == 1)
        hub.first = nil
        #expect(queue.drain() == 1)
        hub.second = PathS4Holder()
        #expect(queue.drain() == 1)

        // Then each one fires; b itself reports `*`
        #expect(hub.observedProperties == ["*"])
        withExtendedLifetime(token) {}
    }

    @Test
    func nonFinalWildcardFollowsIntoPropertiesThatHaveTheRestOfThePath() throws {
        // Given "b.*.s4", where two properties of b hold objects with s4 and one doesn't
        let queue = CoalescingQueue(target: .manual)
        let root = PathHubRoot()
        let hub = root.b
        let first = hub.first!
        let second = hub.second
        let plain = hub.plain
        let token = try root.observe(.path("b.*.s4"), queue: queue) { _ in }
        #expect(first.observedProperties == ["s4"])
        #expect(second.observedProperties == ["s4"])
        #expect(plain.observedProperties == [])

        // When s4 changes on either holder
        first.s4 = 1
        #expect(queue.drain() == 1)
        second.s4 = 1
        #expect(queue.drain() == 1)

        // When properties off the path change
        first.other = 1
        plain.unrelated = 1
        #expect(queue.drain() == 0)

        // When a holder is replaced
        let newFirst = PathS4Holder()
        hub.first = newFirst
        #expect(queue.drain() == 1)
        // Then the path follows into the new holder and leaves the old one
        first.s4 = 2
        #expect(queue.drain() == 0)
        newFirst.s4 = 2
        #expect(queue.drain() == 1)
        #expect(first.observedProperties == [])
        #expect(newFirst.observedProperties == ["s4"])

        // When b itself is replaced
        let newHub = PathHub()
        root.b = newHub
        #expect(queue.drain() == 1)
        // Then the old level is left entirely
        hub.count = 2
        newFirst.s4 = 3
        #expect(queue.drain() == 0)
        newHub.count = 1
        #expect(queue.drain() == 1)
        newHub.second.s4 = 1
        #expect(queue.drain() == 1)
        #expect([hub.pathEdgeCount, newFirst.pathEdgeCount, second.pathEdgeCount] == [0, 0, 0])
        withExtendedLifetime(token) {}
    }

    // MARK: Several paths

    @Test
    func oneTokenForSeveralPathsFiresOncePerTick() throws {
        // Given one token for two paths
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress(zipCode: "10001")
        let user = PathUser(name: "Ada", address: address)
        let cache = PathUserCache(currentUser: user)
        let seen = PathRecorder<String>()
        let paths = ["currentUser.address.zipCode", "currentUser.name"]
        let token = try cache.observe(.paths(paths), queue: queue) { cache in
            seen.record("\(cache.currentUser?.name ?? "nil") \(cache.currentUser?.address?.zipCode ?? "nil")")
        }

        // When either path changes alone
        address.zipCode = "97210"
        #expect(queue.drain() == 1)
        user.name = "Grace"
        #expect(queue.drain() == 1)

        // When both change, and the shared intermediate too, in one tick
        user.name = "Alan"
        address.zipCode = "94103"
        user.address = PathAddress(zipCode: "10002")
        #expect(queue.drain() == 1)

        // Then one callback per tick
        #expect(seen.values == ["Ada 97210", "Grace 97210", "Alan 10002"])
        withExtendedLifetime(token) {}
    }

    @Test
    func severalPathsInEndpointChangesModeFireWhenAnyPathsEndpointChanges() throws {
        // Given one token for two paths, in endpoint-changes mode
        let queue = CoalescingQueue(target: .manual)
        let address = PathAddress(zipCode: "10001")
        let user = PathUser(name: "Ada", address: address)
        let cache = PathUserCache(currentUser: user)
        let token = try cache.observe(
            .paths(["currentUser.address.zipCode", "currentUser.name"]), options: .endpointChanges, queue: queue
        ) { _ in }

        // When the endpoint of the first path changes
        address.zipCode = "97210"
        // Then it fires
        #expect(queue.drain() == 1)

        // When the endpoint of the second path changes
        user.name = "Grace"
        // Then it fires too
        #expect(queue.drain() == 1)
        withExtendedLifetime(token) {}
    }

    @Test
    func oneBadPathAmongSeveralThrowsAndAttachesNothing() throws {
        // Given a cache with a user
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let cache = PathUserCache(currentUser: user)

        // When one of several paths is bad
        #expect(throws: KeyPathError.unknownProperty("nope", type: "PathUser", path: "currentUser.nope", position: 2)) {
            _ = try cache.observe(.paths(["currentUser.name", "currentUser.nope"]), queue: queue) { _ in }
        }

        // Then nothing was attached
        #expect(cache.pathEdgeCount == 0)
        #expect(user.pathEdgeCount == 0)
        user.name = "Ada"
        #expect(queue.drain() == 0)
    }

    @Test
    func observerVariantFollowsThePathAndEndsWhenTheObserverIsGone() throws {
        // Given a string path observed on behalf of an observer
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser(address: PathAddress(zipCode: "10001"))
        let seen = PathRecorder<String>()
        var observer: PathPlainObject? = PathPlainObject()
        let token = try user.observe(.path("address.zipCode"), observer: observer!, queue: queue) { observer, user in
            seen.record("\(observer.zipCode) \(user.address?.zipCode ?? "nil")")
        }

        // When the address is replaced
        user.address = PathAddress(zipCode: "94103")
        #expect(queue.drain() == 1)

        // When the observer is gone and the endpoint changes
        observer = nil
        user.address!.zipCode = "97210"
        #expect(queue.drain() == 0)
        #expect(seen.values == ["plain 94103"])
        #expect(!token.isValid)
    }

    // MARK: Values that are not observable at run time

    @Test
    func anyObjectPropertyHoldingAPlainObjectEndsThePathLikeNil() throws {
        // Given "anything.zipCode", where `anything` is typed `AnyObject?`
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let everyChange = try user.observe(.path("anything.zipCode"), queue: queue) { _ in }
        let seen = PathRecorder<String>()
        let endpointOnly = try user.observe(.path("anything.zipCode"), options: .endpointChanges, queue: queue) {
            user in
            seen.record((user.anything as? PathAddress)?.zipCode ?? "unreachable")
        }

        // When it holds an object that is not a model (it has a `zipCode`, but not an observable one)
        user.anything = PathPlainObject()
        // Then the element change fires in default mode, but the endpoint stays unreachable, as with nil
        #expect(queue.drain() == 1)
        #expect(seen.values == [])

        // When it holds a model with a zip code
        let address = PathAddress(zipCode: "10001")
        user.anything = address
        #expect(queue.drain() == 2)
        // Then the path follows into it
        address.zipCode = "97210"
        #expect(queue.drain() == 2)

        // When a plain object replaces the model again
        user.anything = PathPlainObject()
        #expect(queue.drain() == 2)
        address.zipCode = "stale"
        #expect(queue.drain() == 0)
        #expect(seen.values == ["10001", "97210", "unreachable"])
        #expect(address.observerCount(of: \.zipCode) == 0)
        withExtendedLifetime((everyChange, endpointOnly)) {}
    }

    @Test
    func protocolPropertyHoldingAPlainObjectEndsThePathLikeNil() throws {
        // Given "contact.zipCode", where `contact` is typed `(any PathContact)?`
        let queue = CoalescingQueue(target: .manual)
        let user = PathUser()
        let seen = PathRecorder<String>()
        let token = try user.observe(.path("contact.zipCode"), options: .endpointChanges, queue: queue) { user in
            seen.record((user.contact as? PathModelContact)?.zipCode ?? "unreachable")
        }

        // When it holds a conforming object that is not a model
        user.contact = PathPlainContact()
        // Then the endpoint stays unreachable: no endpoint change
        #expect(queue.drain() == 0)

        // When it holds a conforming model
        let contact = PathModelContact(zipCode: "10001")
        user.contact = contact
        #expect(queue.drain() == 1)
        contact.zipCode = "97210"
        #expect(queue.drain() == 1)

        // When the plain object comes back
        user.contact = PathPlainContact()
        #expect(queue.drain() == 1)
        #expect(seen.values == ["10001", "97210", "unreachable"])
        #expect(contact.observerCount(of: \.zipCode) == 0)
        withExtendedLifetime(token) {}
    }

    // MARK: Errors

    /// A cache whose user and address are present, so every type on the path is knowable.
    private static func populatedCache() -> PathUserCache {
        PathUserCache(currentUser: PathUser(address: PathAddress()))
    }

    static let badPaths: [(String, KeyPathError)] = [
        ("", .emptyPath),
        (".currentUser", .emptyComponent(path: ".currentUser", position: 1)),
        ("currentUser.", .emptyComponent(path: "currentUser.", position: 2)),
        ("currentUser..zipCode", .emptyComponent(path: "currentUser..zipCode", position: 2)),
        ("currentUser.address.zipCode.", .emptyComponent(path: "currentUser.address.zipCode.", position: 4)),
        (".", .emptyComponent(path: ".", position: 1)),
        ("nope", .unknownProperty("nope", type: "PathUserCache", path: "nope", position: 1)),
        (
            "currentUser.adress.zipCode",
            .unknownProperty("adress", type: "PathUser", path: "currentUser.adress.zipCode", position: 2)
        ),
        (
            "currentUser.address.zip",
            .unknownProperty("zip", type: "PathAddress", path: "currentUser.address.zip", position: 3)
        ),
        (
            "currentUser.name.zipCode",
            .notObservable("zipCode", type: "String", path: "currentUser.name.zipCode", position: 3)
        ),
        (
            "currentUser.address.zipCode.count",
            .notObservable("count", type: "String", path: "currentUser.address.zipCode.count", position: 4)
        ),
        ("currentUser.array.4", .unsupportedComponent("4", path: "currentUser.array.4", position: 3)),
        ("currentUser.array.#4", .unsupportedComponent("#4", path: "currentUser.array.#4", position: 3)),
        ("#4", .unsupportedComponent("#4", path: "#4", position: 1)),
        ("&key", .unsupportedComponent("&key", path: "&key", position: 1)),
        ("currentUser.&key", .unsupportedComponent("&key", path: "currentUser.&key", position: 2)),
        (" currentUser", .unsupportedComponent(" currentUser", path: " currentUser", position: 1)),
        ("currentUser .name", .unsupportedComponent("currentUser ", path: "currentUser .name", position: 1)),
        ("current User", .unsupportedComponent("current User", path: "current User", position: 1)),
        ("currentUser.na\tme", .unsupportedComponent("na\tme", path: "currentUser.na\tme", position: 2)),
        ("a-b", .unsupportedComponent("a-b", path: "a-b", position: 1)),
        ("currentUser.first-name", .unsupportedComponent("first-name", path: "currentUser.first-name", position: 2)),
    ]

    @Test(arguments: badPaths)
    func badPathThrowsATypedErrorNamingTheComponent(path: String, expected: KeyPathError) {
        // Given a cache whose whole path is present
        let queue = CoalescingQueue(target: .manual)
        let cache = Self.populatedCache()

        // When observing a bad path
        // Then it throws the error that names the component (and type) at its 1-based position
        #expect(throws: expected) {
            _ = try cache.observe(.path(path), queue: queue) { _ in }
        }
        // And nothing was attached
        #expect(cache.pathEdgeCount == 0)
        #expect(cache.currentUser!.pathEdgeCount == 0)
    }

    @Test
    func unknownPropertyBehindANilLinkIsReportedOnceTheClassIsKnown() throws {
        // Given PathUser and PathAddress are known (an instance of each has been used with a string path)
        let queue = CoalescingQueue(target: .manual)
        _ = try PathUser().observe(.path("name"), queue: queue) { _ in }
        _ = try PathAddress().observe(.path("zipCode"), queue: queue) { _ in }
        let emptyCache = PathUserCache()
        let userWithoutAddress = PathUserCache(currentUser: PathUser())

        // When a path with a typo runs through a nil link
        // Then the error names the component and the declared type behind the link
        #expect(
            throws: KeyPathError.unknownProperty(
                "adress", type: "PathUser", path: "currentUser.adress.zipCode", position: 2)
        ) {
            _ = try emptyCache.observe(.path("currentUser.adress.zipCode"), queue: queue) { _ in }
        }
        #expect(
            throws: KeyPathError.unknownProperty(
                "zip", type: "PathAddress", path: "currentUser.address.zip", position: 3)
        ) {
            _ = try userWithoutAddress.observe(.path("currentUser.address.zip"), queue: queue) { _ in }
        }
        #expect(
            throws: KeyPathError.notObservable(
                "zipCode", type: "String", path: "currentUser.name.zipCode", position: 3)
        ) {
            _ = try emptyCache.observe(.path("currentUser.name.zipCode"), queue: queue) { _ in }
        }
    }

    @Test
    func errorDescriptionsNameTheComponentAndTheType() {
        // Given one error of each kind
        let unknown = KeyPathError.unknownProperty(
            "adress", type: "PathUser", path: "currentUser.adress.zipCode", position: 2)
        let notObservable = KeyPathError.notObservable(
            "zipCode", type: "String", path: "currentUser.name.zipCode", position: 3)
        let unsupported = KeyPathError.unsupportedComponent("a-b", path: "user.a-b", position: 2)
        let empty = KeyPathError.emptyComponent(path: "user..zip", position: 2)

        // Then each description is a readable sentence naming what went wrong, and where
        #expect(KeyPathError.emptyPath.description == "empty key path")
        for (error, parts) in [
            (unknown, ["'adress'", "PathUser", "component 2", "\"currentUser.adress.zipCode\""]),
            (notObservable, ["'zipCode'", "String", "not an ObservableModel", "component 3"]),
            (unsupported, ["'a-b'", "component 2", "\"user.a-b\""]),
            (empty, ["empty component 2", "\"user..zip\""]),
        ] {
            for part in parts {
                #expect(error.description.contains(part), "\(error.description) should mention \(part)")
            }
        }
        #expect(
            unknown.description
                == "unknown property 'adress' on PathUser (component 2 of \"currentUser.adress.zipCode\")"
        )
    }

    @Test
    func thrownErrorDescribesItselfWhenPrinted() {
        // Given a path with a typo on a user that is present
        let queue = CoalescingQueue(target: .manual)
        let cache = Self.populatedCache()

        // When it is observed and the error is printed as any Error would be
        var message = ""
        do {
            _ = try cache.observe(.path("currentUser.adress.zipCode"), queue: queue) { _ in }
        } catch {
            message = "\(error)"
        }

        // Then the message names the component and the type it was looked up on
        #expect(message.contains("adress"))
        #expect(message.contains("PathUser"))
    }
}
