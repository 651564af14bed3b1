import Testing

@testable import ObservationTokens

/// A model with a property of `Any` type, so a path can lead where types are known only at
/// run time.
///
/// `@unchecked Sendable`: see ``BindPerson``.
final class BindHolder: ObservableModel, @unchecked Sendable {
    @Observed var anything: Any = 0
    @Observed var items = ObservedArray<Int>()
    @Observed var person: BindPerson? = nil
}

/// Bindings whose destination is a string path (`bind(to:path:)`, issue 13): the same rules
/// as typed destinations, with the property found by name.
@Suite("Bindings: string-path destinations")
struct StringDestinationTests {
    @Test func followsAReplacedMiddleObjectAndDropsPushesWhileNil() throws {
        let queue = CoalescingQueue(target: .manual)
        let clown = BindPerson(name: "Pennywise")
        let person = BindPerson()
        let first = BindPerson(name: "first")
        person.friend = first

        // Given friend.name ← clown.name
        let token = try clown.pipeline(of: \.name).bind(to: person, path: "friend.name", queue: queue)
        #expect(first.name == "Pennywise")  // the initial push

        // When the source changes, the friend of now gets it
        clown.name = "Bozo"
        queue.drain()
        #expect(first.name == "Bozo")

        // When the friend is replaced, the new friend is brought up to date at once
        let second = BindPerson(name: "second")
        person.friend = second
        queue.drain()
        #expect(second.name == "Bozo")

        // and the old one no longer receives pushes
        clown.name = "Krusty"
        queue.drain()
        #expect(second.name == "Krusty")
        #expect(first.name == "Bozo")

        // While the path leads nowhere, pushes are dropped; a new friend catches up
        person.friend = nil
        clown.name = "Ronald"
        queue.drain()
        let third = BindPerson(name: "third")
        person.friend = third
        queue.drain()
        #expect(third.name == "Ronald")
        withExtendedLifetime(token) {}
    }

    @Test func writesThroughTheSetterSoObserversHearRealChangesOnly() throws {
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson(name: "same")
        let target = BindPerson(name: "same")
        let heard = BindLog<String>()
        let observer = target.observe(.changes(\.name), queue: queue) { _, change in
            heard.append("\(change.old) → \(change.new)")
        }
        let token = try source.pipeline(of: \.name).bind(to: target, path: "name", queue: queue)
        queue.drain()
        #expect(heard.values.isEmpty)  // the initial push wrote an equal value: no change

        source.name = "new"
        queue.drain()  // the push
        queue.drain()  // the observer's delivery, queued by the push's write
        #expect(heard.values == ["same → new"])
        withExtendedLifetime((token, observer)) {}
    }

    @Test func aDestinationThatPathsReadTakesTheStoreBit() throws {
        let queue = CoalescingQueue(target: .manual)
        let root = BindPerson()
        let friend = BindPerson()
        root.friend = friend
        friend.friend = BindPerson()
        // A path token reads `friend.friend` on walks: from then on the setters of `friend`
        // (and this write) take the store bit and count the store.
        let pathToken = try root.observe(.path("friend.friend.name"), queue: queue) { _ in }
        #expect(friend._edgeCount.load(ordering: .relaxed) >= ObservableModelBase._readByPaths)
        let storesOf = { (object: ObservableModel) in
            object._edgeCount.load(ordering: .relaxed) / ObservableModelBase._storeCount
        }
        let before = storesOf(friend)
        let source = BindPerson(name: "x")
        let token = try source.pipeline(of: \.name).bind(to: root, path: "friend.name", queue: queue)
        #expect(friend.name == "x")
        #expect(storesOf(friend) == before + 1)  // one counted store, as the setter's
        withExtendedLifetime((token, pathToken)) {}
    }

    @Test func badPathsThrowTypedErrors() {
        let person = BindPerson()
        let pipeline = BindPerson().pipeline(of: \.name)
        #expect(throws: KeyPathError.emptyPath) { _ = try pipeline.bind(to: person, path: "") }
        #expect(throws: KeyPathError.unknownProperty("nope", type: "BindPerson", path: "friend.nope", position: 2)) {
            _ = try pipeline.bind(to: person, path: "friend.nope")
        }
        #expect(throws: KeyPathError.unsupportedComponent("*", path: "*", position: 1)) {
            _ = try pipeline.bind(to: person, path: "*")
        }
        #expect(throws: KeyPathError.unknownProperty("plain", type: "BindPerson", path: "plain", position: 1)) {
            _ = try pipeline.bind(to: person, path: "plain")
        }
        #expect(
            throws: KeyPathError.wrongValueType(
                "age", valueType: "Int", writtenType: "String", path: "friend.age", position: 2)
        ) {
            _ = try pipeline.bind(to: person, path: "friend.age")
        }
        let holder = BindHolder()
        #expect(throws: KeyPathError.unsupportedComponent("count", path: "items.count", position: 2)) {
            _ = try BindPerson().pipeline(of: \.age).bind(to: holder, path: "items.count")
        }
    }

    @Test func theErrorSaysWhatToDo() {
        let error = KeyPathError.wrongValueType(
            "age", valueType: "Int", writtenType: "String", path: "friend.age", position: 2)
        #expect(error.description.contains("holds Int"))
        #expect(error.description.contains("add a map to Int"))
    }

    @Test func aStringPathSourceBindsToAStringPathDestination() throws {
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson()
        source.friend = BindPerson(name: "Ada")
        let holder = BindHolder()
        holder.person = BindPerson()
        let token = try source.pipeline(path: "friend.name").bind(to: holder, path: "person.name", queue: queue)
        #expect(holder.person?.name == "Ada")
        source.friend?.name = "Grace"
        queue.drain()
        #expect(holder.person?.name == "Grace")
        withExtendedLifetime(token) {}
    }

    @Test func aPushOfTheWrongTypeThroughAnAnyPathStopsADebugBuild() async {
        #if DEBUG
            await #expect(processExitsWith: .failure) {
                let queue = CoalescingQueue(target: .manual)
                let source = BindPerson()
                source.friend = BindPerson(name: "Ada")
                let holder = BindHolder()
                holder.anything = BindPerson(age: 1)
                // The types past `anything` (an `Any`) are known per push only.
                let token = try? source.pipeline(path: "friend.name").bind(
                    to: holder, path: "anything.age", queue: queue)
                withExtendedLifetime(token) {}
            }
        #endif
    }

    @Test func theDestinationsDeinitEndsTheTokenAndNothingIsRetained() throws {
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson(name: "a")
        weak var weakPerson: BindPerson?
        var token: ObservationToken?
        do {
            let person = BindPerson()
            person.friend = BindPerson()
            weakPerson = person
            token = try source.pipeline(of: \.name).bind(to: person, path: "friend.name", queue: queue)
            #expect(token?.isValid == true)
        }
        #expect(weakPerson == nil)
        #expect(token?.isValid == false)
        source.name = "b"
        queue.drain()
        withExtendedLifetime(token) {}
    }
}
