import ObservationTokens

// Tracking: a token on any key path, or on a closure, watches every `@Observed` property that it
// read, on any object, and follows what it reads after each change.

extension DemoCase {
    static let trackingCases: [DemoCase] = [trackComputedProperty, trackBranchSwitch, trackComposedKeyPath]

    static let trackComputedProperty = DemoCase(
        "track-computed-property",
        group: .tracking,
        summary: "A token on a computed property fires once per tick when anything it reads changes.",
        shows: """
            `observe(\\.fullName)`, where `fullName` is computed from two `@Observed` properties, \
            watches both: the key path is applied when the token is created and again at each \
            delivery, and every `@Observed` property it read is a dependency. Setting both names in \
            one tick runs the callback once.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = NamedPerson()
        let seen = Recorder<String>()
        let token = person.observe(\.fullName, queue: queue) { person in
            seen.append(person.fullName)
            timeline.callback("callback: fullName is \(quoted(person.fullName))")
        }
        timeline.step("var fullName: String { firstName + \" \" + lastName }  — computed, not @Observed")
        timeline.step("let token = person.observe(\\.fullName) { person in … }")
        timeline.note(
            "watchers: firstName \(person.observerCount(of: \.firstName)), lastName \(person.observerCount(of: \.lastName))"
        )

        person.firstName = "Ada"
        person.lastName = "Lovelace"
        timeline.step("person.firstName = \"Ada\"; person.lastName = \"Lovelace\"  — both in one tick")
        let first = timeline.endTick(draining: queue)

        person.nickname = "Countess"
        timeline.step("person.nickname = \"Countess\"  — a plain property: fullName doesn't read it")
        let second = timeline.endTick(draining: queue)

        timeline.expect("one callback for the tick with both changes", first, equals: 1)
        timeline.expect("no callback for a property fullName doesn't read", second, equals: 0)
        timeline.expect("the callback saw the full name", seen.values, equals: ["Ada Lovelace"])
        withExtendedLifetime(token) {}
    }

    static let trackBranchSwitch = DemoCase(
        "track-branch-switch",
        group: .tracking,
        summary: "A tracking closure stops watching a property once it no longer reads it.",
        shows: """
            a tracking closure's dependencies are those of its latest run. This one reads \
            `lastName` only while `showsLastName` is set; after the switch, `lastName` has no watcher \
            and changing it runs nothing.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = NamedPerson()
        person.firstName = "Ada"
        person.lastName = "Lovelace"
        let seen = Recorder<String>()
        let token = person.observe(queue: queue) { person in
            let label = person.showsLastName ? person.firstName + " " + person.lastName : person.firstName
            seen.append(label)
            timeline.callback("closure ran: label is \(quoted(label))")
        }
        timeline.step("let token = person.observe { person in label = showsLastName ? first + last : first }")
        timeline.note("the closure ran once at creation (each property it read got its watcher before the read)")
        timeline.note("watchers of lastName: \(person.observerCount(of: \.lastName))")

        person.showsLastName = false
        timeline.step("person.showsLastName = false  — the closure now reads firstName only")
        timeline.endTick(draining: queue)
        let lastNameWatchers = person.observerCount(of: \.lastName)
        timeline.note("watchers of lastName: \(lastNameWatchers)")

        person.lastName = "Byron"
        timeline.step("person.lastName = \"Byron\"  — no longer read: nothing runs")
        let afterLastName = timeline.endTick(draining: queue)

        person.firstName = "Augusta"
        timeline.step("person.firstName = \"Augusta\"")
        timeline.endTick(draining: queue)

        timeline.expect("lastName lost its watcher after the switch", lastNameWatchers, equals: 0)
        timeline.expect("changing lastName ran nothing", afterLastName, equals: 0)
        timeline.expect(
            "runs: once at creation, once per change after", seen.values,
            equals: ["Ada Lovelace", "Ada", "Augusta"])
        withExtendedLifetime(token) {}
    }

    static let trackComposedKeyPath = DemoCase(
        "track-composed-key-path",
        group: .tracking,
        summary: "`observe(\\.currentUser?.address?.zipCode)` follows a replaced middle object.",
        shows: """
            a composed optional key path needs no `KeyPathChain`: the token watches every \
            `@Observed` property the key path read on the way, and when a middle object is replaced \
            it re-evaluates at delivery and moves its watchers to the new objects.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let home = Address("home", zipCode: "10115")
        let work = Address("work", zipCode: "97210")
        let ada = User(name: "Ada", address: home)
        let cache = UserCache()
        cache.currentUser = ada
        let seen = Recorder<String>()
        let token = cache.observe(\.currentUser?.address?.zipCode, queue: queue) { cache in
            let zipCode = cache.currentUser?.address?.zipCode
            seen.append(quoted(zipCode))
            timeline.callback("callback: zip code is \(quoted(zipCode))")
        }
        timeline.step("let token = cache.observe(\\.currentUser?.address?.zipCode) { cache in … }")
        timeline.note(trackedZipCodeWatchers(home, work))

        ada.address = work
        timeline.step("ada.address = work  — a middle object is replaced")
        timeline.endTick(draining: queue)
        let afterMove = [home.observerCount(of: \.zipCode), work.observerCount(of: \.zipCode)]
        timeline.note(trackedZipCodeWatchers(home, work))

        home.zipCode = "10117"
        timeline.step("home.zipCode = \"10117\"  — no longer on the path")
        let homeChange = timeline.endTick(draining: queue)

        work.zipCode = "97211"
        timeline.step("work.zipCode = \"97211\"")
        timeline.endTick(draining: queue)

        cache.currentUser = nil
        timeline.step("cache.currentUser = nil  — the path ends early")
        timeline.endTick(draining: queue)

        timeline.expect("the watcher moved from home to work", afterMove, equals: [0, 1])
        timeline.expect("home's change ran nothing", homeChange, equals: 0)
        timeline.expect("callbacks saw each value", seen.values, equals: ["\"97210\"", "\"97211\"", "nil"])
        withExtendedLifetime(token) {}
    }
}

/// A person whose full name is computed; `nickname` is a plain property.
final class NamedPerson: ObservableModel {
    @Observed var firstName = ""
    @Observed var lastName = ""
    @Observed var showsLastName = true
    var nickname = ""

    var fullName: String { firstName + " " + lastName }
}

/// How many tokens watch each address's zip code, for the timeline.
private func trackedZipCodeWatchers(_ addresses: Address...) -> String {
    "watchers of "
        + addresses.map { "\($0.label).zipCode: \($0.observerCount(of: \.zipCode))" }.joined(separator: ", ")
}
