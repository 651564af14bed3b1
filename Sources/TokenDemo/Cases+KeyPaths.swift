import ObservationTokens

// Observing along a path of objects: `cache.currentUser.address.zipCode`. A `KeyPathChain` is
// built one segment at a time, so the compiler checks every name; string paths are checked at
// run time and report a `KeyPathError`.

extension DemoCase {
    static let keyPathCases: [DemoCase] = [
        retargetMiddleObject, nilAtStart, oldObjectVersusPath, badStringPath,
    ]

    /// `cache.currentUser.address.zipCode`, checked by the compiler; the endpoint is `String?`
    /// because `currentUser` and `address` are optional.
    static let zipCodeOfCurrentUser = KeyPathChain(\UserCache.currentUser).then(\.address).then(\.zipCode)

    static let retargetMiddleObject = DemoCase(
        "retarget-middle-object",
        group: .keyPaths,
        summary: "A path token moves to the new object when a middle object is replaced.",
        shows: """
            a path token watches every link of its path. When a middle object is replaced, it stops \
            watching the old object's rest of the path and starts watching the new one's, and it \
            fires, because the endpoint it reaches may have changed.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let home = Address("home", zipCode: "10115")
        let work = Address("work", zipCode: "97210")
        let ada = User(name: "Ada", address: home)
        let cache = UserCache()
        cache.currentUser = ada
        let seen = Recorder<String>()

        let token = cache.observe(.chain(zipCodeOfCurrentUser), queue: queue) { cache, zipCode in
            seen.append(quoted(zipCode))
            timeline.callback("callback: currentUser.address.zipCode is \(quoted(zipCode))")
        }
        timeline.step("cache.currentUser = ada, ada.address = home (zip \"10115\")")
        timeline.step("let path = KeyPathChain(\\UserCache.currentUser).then(\\.address).then(\\.zipCode)")
        timeline.step("let token = cache.observe(path) { cache, zipCode in … }")
        timeline.note(zipCodeWatchers(home, work))

        ada.address = work
        timeline.step("ada.address = work  — a middle object is replaced: the token moves from home to work")
        timeline.note(zipCodeWatchers(home, work))
        let afterRetarget = [home.observerCount(of: \.zipCode), work.observerCount(of: \.zipCode)]
        timeline.endTick(draining: queue)

        home.zipCode = "10117"
        timeline.step("home.zipCode = \"10117\"  — home is no longer on the path: no callback")
        timeline.endTick(draining: queue)

        work.zipCode = "97211"
        timeline.step("work.zipCode = \"97211\"  — the endpoint now lives in work")
        timeline.endTick(draining: queue)

        let office = Address("office", zipCode: "20095")
        cache.currentUser = User(name: "Grace", address: office)
        timeline.step("cache.currentUser = grace (address: office, zip \"20095\")  — an earlier link is replaced")
        timeline.endTick(draining: queue)
        timeline.note(
            "watchers of office.zipCode: \(office.observerCount(of: \.zipCode)), work.zipCode: "
                + "\(work.observerCount(of: \.zipCode))")

        timeline.expect(
            "the token followed the path: work, then work's new zip, then the office",
            seen.values, equals: [quoted("97210"), quoted("97211"), quoted("20095")])
        timeline.expect("after the replacement home had 0 watchers and work 1", afterRetarget, equals: [0, 1])
        timeline.expect(
            "after the user changed, only the office's zipCode is watched",
            [office.observerCount(of: \.zipCode), work.observerCount(of: \.zipCode)], equals: [1, 0])
        withExtendedLifetime(token) {}
    }

    static let nilAtStart = DemoCase(
        "nil-at-start",
        group: .keyPaths,
        summary: "A path that starts out nil attaches when its objects appear.",
        shows: """
            a path may be unreachable when observation starts (here `cache.currentUser` is nil). \
            The token waits at the first nil link and attaches further as objects appear. By default \
            every change along the path fires, even nil → nil; `.endpointChanges` fires only when \
            the endpoint's value changed.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let cache = UserCache()
        let everyChange = Recorder<String>()
        let endpointChanges = Recorder<String>()

        let token = cache.observe(.chain(zipCodeOfCurrentUser), queue: queue) { _, zipCode in
            everyChange.append(quoted(zipCode))
            timeline.callback("token:  zipCode is \(quoted(zipCode))")
        }
        let strict = cache.observe(.chain(zipCodeOfCurrentUser), options: .endpointChanges, queue: queue) {
            _, zipCode in
            endpointChanges.append(quoted(zipCode))
            timeline.callback("strict: zipCode is \(quoted(zipCode))")
        }
        timeline.step("cache.currentUser is nil; path = currentUser.address.zipCode as a KeyPathChain")
        timeline.step("let token  = cache.observe(path) { … }  — waits at currentUser")
        timeline.step("let strict = cache.observe(path, options: .endpointChanges) { … }")
        timeline.note("token.isValid = \(token.isValid): waiting is not ending")

        let ada = User(name: "Ada")
        cache.currentUser = ada
        timeline.step("cache.currentUser = ada  — ada.address is nil: the tokens attach to ada and wait there")
        timeline.endTick(draining: queue)
        timeline.note("(strict stayed silent: the endpoint was unreachable before and still is)")

        let home = Address("home", zipCode: "10115")
        ada.address = home
        timeline.step("ada.address = home (zip \"10115\")  — the path is complete: the endpoint appears")
        timeline.endTick(draining: queue)

        home.zipCode = "10117"
        timeline.step("home.zipCode = \"10117\"  — the tokens now watch the endpoint itself")
        timeline.endTick(draining: queue)

        timeline.expect(
            "the default token fired on every change along the path", everyChange.values,
            equals: ["nil", quoted("10115"), quoted("10117")])
        timeline.expect(
            "the .endpointChanges token fired only when the zip code changed", endpointChanges.values,
            equals: [quoted("10115"), quoted("10117")])
        timeline.expect("both tokens watch home.zipCode now", home.observerCount(of: \.zipCode), equals: 2)
        withExtendedLifetime((token, strict)) {}
    }

    static let oldObjectVersusPath = DemoCase(
        "old-object-vs-path",
        group: .keyPaths,
        summary: "Rooted at the address: follow that object; rooted at the user: follow the path.",
        shows: """
            choose the root deliberately. `home.observe(\\.zipCode)` follows that Address object \
            wherever it goes; `ada.observe(.chain(KeyPathChain(\\User.address).then(\\.zipCode)))` follows \
            whatever address ada has. Replacing the address and changing the new one's zip code in \
            one tick is one callback for the path token (EBNObservable's homeAddress/workAddress).
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let home = Address("home", zipCode: "10115")
        let work = Address("work", zipCode: "94103")
        let ada = User(name: "Ada", address: home)
        let pathSeen = Recorder<String>()
        let objectSeen = Recorder<String>()

        let pathToken = ada.observe(.chain(KeyPathChain(\User.address).then(\.zipCode)), queue: queue) { ada, zipCode in
            pathSeen.append(quoted(zipCode))
            timeline.callback(
                "path token:   ada's address has zip \(quoted(zipCode)) (\(ada.address?.label ?? "none"))")
        }
        let objectToken = home.observe(\.zipCode, queue: queue) { home in
            objectSeen.append(quoted(home.zipCode))
            timeline.callback("object token: the home address has zip \(quoted(home.zipCode))")
        }
        timeline.step("ada.address = home (zip \"10115\"); work has zip \"94103\"")
        timeline.step(#"let pathToken   = ada.observe(.chain(KeyPathChain(\User.address).then(\.zipCode))) { … }"#)
        timeline.step(#"let objectToken = home.observe(\.zipCode) { … }"#)

        ada.address = work
        timeline.step("ada.address = work")
        ada.address?.zipCode = "97210"
        timeline.step("ada.address?.zipCode = \"97210\"  — two changes to ada's path in one tick")
        timeline.endTick(draining: queue)
        timeline.note("(the object token stayed silent: home did not change)")

        home.zipCode = "10117"
        timeline.step("home.zipCode = \"10117\"  — the old address changes")
        timeline.endTick(draining: queue)
        timeline.note("(the path token stayed silent: home is no longer on ada's path)")

        timeline.expect(
            "the path token fired once for both changes, then ignored home", pathSeen.values,
            equals: [quoted("97210")])
        timeline.expect(
            "the object token ignored the replacement and saw home's change", objectSeen.values,
            equals: [quoted("10117")])
        withExtendedLifetime((pathToken, objectToken)) {}
    }

    static let badStringPath = DemoCase(
        "bad-string-path",
        group: .keyPaths,
        summary: "A bad string key path throws a KeyPathError naming the bad component.",
        shows: """
            string key paths (`try cache.observe(.path("currentUser.address.zipCode"))`) are checked against \
            the declared types when `.path` makes the source: a bad one throws a `KeyPathError` that \
            names the component, its position and the type it was looked up on. (The same typo in a KeyPathChain does not even compile.)
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let cache = UserCache()
        cache.currentUser = User(name: "Ada", address: Address("home", zipCode: "10115"))
        var tokens: [ObservationToken] = []

        func attempt(_ path: String) -> KeyPathError? {
            do throws(KeyPathError) {
                let token = try cache.observe(.path(path), queue: queue) { _ in }
                tokens.append(token)
                timeline.step("try cache.observe(.path(\(quoted(path))))  — fine: token.isValid = \(token.isValid)")
                return nil
            } catch {
                timeline.step("try cache.observe(.path(\(quoted(path))))  — throws:")
                timeline.note("KeyPathError.\(caseName(of: error)): \(error)")
                return error
            }
        }

        let good = attempt("currentUser.address.zipCode")
        let typo = attempt("currentUser.adress.zipCode")
        let empty = attempt("currentUser..zipCode")
        let notModel = attempt("currentUser.name.count")
        let nothing = attempt("")
        let reserved = attempt("currentUser.address.zip-code")

        timeline.expect("the correct path is accepted", good == nil, got: good.map { "KeyPathError: \($0)" } ?? "")
        timeline.expect(
            "a typo is .unknownProperty naming 'adress' on User, component 2", typo,
            equals: .unknownProperty("adress", type: "User", path: "currentUser.adress.zipCode", position: 2))
        timeline.expect(
            "\"a..b\" is .emptyComponent at position 2", empty,
            equals: .emptyComponent(path: "currentUser..zipCode", position: 2))
        timeline.expect(
            "a step into a String is .notObservable naming 'count' on String, component 3", notModel,
            equals: .notObservable("count", type: "String", path: "currentUser.name.count", position: 3))
        timeline.expect("\"\" is .emptyPath", nothing, equals: .emptyPath)
        timeline.expect(
            "a name no Swift property can have is .unsupportedComponent", reserved,
            equals: .unsupportedComponent("zip-code", path: "currentUser.address.zip-code", position: 3))
        withExtendedLifetime(tokens) {}
    }
}

/// "home.zipCode: 1 watcher, work.zipCode: 0 watchers"
private func zipCodeWatchers(_ addresses: Address...) -> String {
    "watchers of "
        + addresses.map { "\($0.label).zipCode: \($0.observerCount(of: \.zipCode))" }
        .joined(separator: ", ")
}

/// The case name of a `KeyPathError`, such as `unknownProperty`.
private func caseName(of error: KeyPathError) -> String {
    switch error {
    case .emptyPath: "emptyPath"
    case .emptyComponent: "emptyComponent"
    case .unknownProperty: "unknownProperty"
    case .notObservable: "notObservable"
    case .unsupportedComponent: "unsupportedComponent"
    case .noObservedProperty: "noObservedProperty"
    case .emptyPathList: "emptyPathList"
    case .indexOutOfRange: "indexOutOfRange"
    case .invalidKey: "invalidKey"
    case .unknownMemberKey: "unknownMemberKey"
    case .wrongValueType: "wrongValueType"
    }
}

extension Timeline {
    /// Checks the error a string path threw (nil: it threw none).
    func expect(_ expectation: String, _ actual: KeyPathError?, equals expected: KeyPathError) {
        expect(expectation, actual == expected, got: actual.map { "KeyPathError: \($0)" } ?? "no error")
    }
}
