import Dispatch
import ObservationTokens
import Testing

// Every source, with `isolation: MainActor.shared`, with and without `observer:`, written as an
// app target writes it (this module is main actor by default): the callbacks mutate a
// main-actor view model's stored properties, with no `assumeIsolated`, no `@unchecked` and no
// `nonisolated(unsafe)`. Compiling this file is the check that every delivery of
// `Delivery/ModelObserving+Observe.swift` (with and without a payload, with and without an
// observer), the key path literal forms, the tracking closures, pipelines and value sequences
// take `isolation:`; running it checks what each delivers.
//
// Deliveries are driven by a `.manual` queue drained here, on the main actor, where main-actor
// callbacks run inside the drain; one test goes through the default `.main` queue and awaits a
// turn of it.

/// A plain model: nonisolated because it names `ObservableModel`.
final class Profile: ObservableModel {
    @Observed var name = ""
    @Observed var age = 0
    @Observed var friend: Profile?
    @Computed({ (profile: Profile) in "\(profile.name) (\(profile.age))" }) var label: String
}

/// A model holding observed collections.
final class Library: ObservableModel {
    @Observed var books: ObservedArray<Profile> = []
    @Observed var tags: ObservedSet<String> = []
    @Observed var shelves: ObservedDictionary<String, Int> = [:]
}

/// A view model: main actor by the module's default. The callbacks below mutate it.
final class Screen {
    var log: [String] = []
    var tokens = Set<ObservationToken>()

    /// Records a line; main-actor code.
    func show(_ line: String) { log.append(line) }
}

/// One view model and one `.manual` queue, drained on the main actor.
struct MainActorFixture {
    let screen = Screen()
    let queue = CoalescingQueue(target: .manual)

    /// Delivers the tick's changes (on the main actor: the callbacks run inside the drain).
    @discardableResult
    func drain() -> Int { queue.drain() }
}

@Suite struct EveryFormOnTheMainActorTests {
    // MARK: Properties

    @Test func aKeyPathLiteralDeliversOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(\.name, queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.name)")
        }.store(in: &f.screen.tokens)
        profile.observe(\.name, observer: f.screen, queue: f.queue, isolation: MainActor.shared) { screen, profile in
            screen.show("observer \(profile.name)")
        }.store(in: &f.screen.tokens)
        // a computed key path: a tracked token
        profile.observe(\.label, observer: f.screen, queue: f.queue, isolation: MainActor.shared) { screen, profile in
            screen.show("label \(profile.label)")
        }.store(in: &f.screen.tokens)
        // when
        profile.name = "a"
        profile.name = "b"
        // then
        #expect(f.drain() == 3)
        #expect(f.screen.log.sorted() == ["label b (0)", "observer b", "plain b"])
    }

    @Test func aKeyPathListDeliversOnceATickOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe([\.name, \.age], queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.name) \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe([\.name, \.age], observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("observer \(profile.name) \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe(.properties([\.age]), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("properties \(profile.age)")
        }.store(in: &f.screen.tokens)
        // when
        profile.name = "a"
        profile.age = 1
        // then
        #expect(f.drain() == 3)
        #expect(f.screen.log.sorted() == ["observer a 1", "plain a 1", "properties 1"])
    }

    @Test func changesDeliverOldAndNewOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.age = 1
        profile.observe(.changes(\.age), queue: f.queue, isolation: MainActor.shared) { _, change in
            f.screen.show("plain \(change.old)→\(change.new)")
        }.store(in: &f.screen.tokens)
        profile.observe(.changes(\.age), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, change in
            screen.show("observer \(change.old)→\(change.new)")
        }.store(in: &f.screen.tokens)
        profile.observe(
            .changes(of: { $0.age * 10 }), observer: f.screen, queue: f.queue, isolation: MainActor.shared
        ) { screen, _, change in
            screen.show("of \(change.old)→\(change.new)")
        }.store(in: &f.screen.tokens)
        // when
        profile.age = 2
        profile.age = 3
        // then
        #expect(f.drain() == 3)
        #expect(f.screen.log.sorted() == ["observer 1→3", "of 10→30", "plain 1→3"])
    }

    @Test func whichOfTellsWhichChangedOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(.whichOf([\.name, \.age]), queue: f.queue, isolation: MainActor.shared) { _, changed in
            f.screen.show("plain \(changed.count) \(changed.contains(\.age))")
        }.store(in: &f.screen.tokens)
        profile.observe(.whichOf([\.name, \.age]), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, changed in
            screen.show("observer \(changed.count) \(changed.contains(\.name))")
        }.store(in: &f.screen.tokens)
        // when
        profile.age = 4
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer 1 false", "plain 1 true"])
    }

    @Test func allDeliversAnyPropertyOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(.all, queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe(.all, observer: f.screen, queue: f.queue, isolation: MainActor.shared) { screen, profile in
            screen.show("observer \(profile.name)")
        }.store(in: &f.screen.tokens)
        // when
        profile.name = "n"
        profile.age = 5
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer n", "plain 5"])
    }

    @Test func willChangeRunsInsideTheSetterOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(.willChange, queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain before \(profile.name)")
        }.store(in: &f.screen.tokens)
        profile.observe(.willChange, observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("observer before \(profile.name)")
        }.store(in: &f.screen.tokens)
        // when: a set on the main actor
        profile.name = "x"
        // then: both ran inside the setter, with the old value; nothing waits for a drain
        #expect(f.screen.log.sorted() == ["observer before ", "plain before "])
        #expect(f.drain() == 0)
    }

    // MARK: Reads

    @Test func aValueDeliversWhenItChangesOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(.value { $0.name.count }, queue: f.queue, isolation: MainActor.shared) { _, count in
            f.screen.show("plain \(count)")
        }.store(in: &f.screen.tokens)
        profile.observe(.value { $0.name.count }, observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, count in
            screen.show("observer \(count)")
        }.store(in: &f.screen.tokens)
        // when: a change that keeps the value, then one that changes it
        profile.name = ""
        #expect(f.drain() == 0)
        profile.name = "abc"
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer 3", "plain 3"])
    }

    @Test func aTrackingSourceDeliversWhatItReadOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(.tracking { _ = $0.age }, queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe(.tracking { _ = $0.age }, observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("observer \(profile.age)")
        }.store(in: &f.screen.tokens)
        // when: a property it did not read, then one it did
        profile.name = "ignored"
        #expect(f.drain() == 0)
        profile.age = 7
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer 7", "plain 7"])
    }

    @Test func aTrackingClosureRunsOnTheMainActor() {
        // given: the closure runs once at once, to learn what it reads
        let f = MainActorFixture()
        let profile = Profile()
        profile.observe(queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe(observer: f.screen, queue: f.queue, isolation: MainActor.shared) { screen, profile in
            screen.show("observer \(profile.age)")
        }.store(in: &f.screen.tokens)
        #expect(f.screen.log.sorted() == ["observer 0", "plain 0"])
        // when
        profile.age = 8
        profile.age = 9
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer 0", "observer 9", "plain 0", "plain 9"])
    }

    // MARK: Paths

    @Test func aChainDeliversItsEndpointOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        let friend = Profile()
        profile.observe(.chain(\.friend).then(\.name), queue: f.queue, isolation: MainActor.shared) { _, name in
            f.screen.show("plain \(name ?? "-")")
        }.store(in: &f.screen.tokens)
        profile.observe(
            .chain(\.friend).then(\.name), observer: f.screen, queue: f.queue, isolation: MainActor.shared
        ) { screen, _, name in
            screen.show("observer \(name ?? "-")")
        }.store(in: &f.screen.tokens)
        // when: the friend arrives, then is renamed
        friend.name = "e"
        profile.friend = friend
        #expect(f.drain() == 2)
        friend.name = "f"
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer e", "observer f", "plain e", "plain f"])
    }

    @Test func chainsDeliverOnceATickOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        let friend = Profile()
        profile.friend = friend
        let chains = [
            AnyKeyPathChain(KeyPathChain(\Profile.friend).then(\.name)), AnyKeyPathChain(KeyPathChain(\.age)),
        ]
        profile.observe(.chains(chains), queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.friend?.name ?? "-") \(profile.age)")
        }.store(in: &f.screen.tokens)
        profile.observe(.chains(chains), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("observer \(profile.age)")
        }.store(in: &f.screen.tokens)
        // when
        friend.name = "g"
        profile.age = 2
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer 2", "plain g 2"])
    }

    @Test func anEndpointTellsUnreachableFromNilOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        let chain = KeyPathChain(\Profile.friend).then(\.name)
        profile.observe(.endpoint(of: chain), queue: f.queue, isolation: MainActor.shared) { _, endpoint in
            f.screen.show("plain \(endpoint == .unreachable ? "unreachable" : endpoint.value??.description ?? "nil")")
        }.store(in: &f.screen.tokens)
        profile.observe(.endpoint(of: chain), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, endpoint in
            screen.show("observer \(endpoint.value??.description ?? "unreachable")")
        }.store(in: &f.screen.tokens)
        // when
        let friend = Profile()
        friend.name = "h"
        profile.friend = friend
        #expect(f.drain() == 2)
        profile.friend = nil
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log == ["plain h", "observer h", "plain unreachable", "observer unreachable"])
    }

    @Test func stringPathsDeliverOnTheMainActor() throws {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        let friend = Profile()
        profile.friend = friend
        try profile.observe(.path("friend.age"), queue: f.queue, isolation: MainActor.shared) { profile in
            f.screen.show("plain \(profile.friend?.age ?? -1)")
        }.store(in: &f.screen.tokens)
        try profile.observe(.path("friend.age"), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("observer \(profile.friend?.age ?? -1)")
        }.store(in: &f.screen.tokens)
        try profile.observe(
            .paths(["name", "friend.name"]), observer: f.screen, queue: f.queue, isolation: MainActor.shared
        ) { screen, profile in
            screen.show("paths \(profile.name) \(profile.friend?.name ?? "-")")
        }.store(in: &f.screen.tokens)
        // when
        friend.age = 30
        friend.name = "i"
        profile.name = "p"
        // then
        #expect(f.drain() == 3)
        #expect(f.screen.log.sorted() == ["observer 30", "paths p i", "plain 30"])
    }

    @Test func tellingDeliversOnTheMainActorForAsLongAsTheObserverLives() throws {
        // given: observations that end with their observer, no token to keep
        let f = MainActorFixture()
        let profile = Profile()
        let friend = Profile()
        profile.friend = friend
        profile.tell(f.screen, when: \.age, queue: f.queue, isolation: MainActor.shared) { screen, profile in
            screen.show("key path \(profile.age)")
        }
        profile.tell(f.screen, whenAnyOf: [\.name, \.age], queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("any of \(profile.age)")
        }
        profile.tell(
            f.screen, when: KeyPathChain(\.friend).then(\.age), queue: f.queue, isolation: MainActor.shared
        ) { screen, profile in
            screen.show("chain \(profile.friend?.age ?? -1)")
        }
        try profile.tell(f.screen, whenPath: "friend.age", queue: f.queue, isolation: MainActor.shared) {
            screen, profile in
            screen.show("path \(profile.friend?.age ?? -1)")
        }
        // when
        profile.age = 1
        friend.age = 2
        // then
        #expect(f.drain() == 4)
        #expect(f.screen.log.sorted() == ["any of 1", "chain 2", "key path 1", "path 2"])
    }

    // MARK: Collections

    @Test func mutationsDeliverTheChangeListOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let library = Library()
        library.books.observe(.mutations, queue: f.queue, isolation: MainActor.shared) { _, changes in
            f.screen.show("books \(changes.inserted)")
        }.store(in: &f.screen.tokens)
        library.tags.observe(.mutations, observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, changes in
            screen.show("tags \(changes.inserted.sorted())")
        }.store(in: &f.screen.tokens)
        library.shelves.observe(.mutations, observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, _, changes in
            screen.show("shelves \(changes.inserted.sorted())")
        }.store(in: &f.screen.tokens)
        // when
        library.books.append(Profile())
        library.books.append(Profile())
        library.tags.insert("b")
        library.tags.insert("a")
        library.shelves["top"] = 1
        // then
        #expect(f.drain() == 3)
        #expect(f.screen.log.sorted() == ["books [0, 1]", "shelves [\"top\"]", "tags [\"a\", \"b\"]"])
    }

    @Test func anElementAndAnObjectAtAnIndexDeliverOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let first = Profile()
        first.name = "first"
        let books: ObservedArray<Profile> = [first]
        books.observe(.element(at: 0), queue: f.queue, isolation: MainActor.shared) { books in
            f.screen.show("element \(books.first?.name ?? "-")")
        }.store(in: &f.screen.tokens)
        books.observe(.element(at: 0), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, books in
            screen.show("element observer \(books.count)")
        }.store(in: &f.screen.tokens)
        let object = books.observe(.object(at: 0), queue: f.queue, isolation: MainActor.shared) { _, object in
            f.screen.show("object \(object?.name ?? "nil")")
        }
        let objectForObserver = books.observe(
            .object(at: 0), observer: f.screen, queue: f.queue, isolation: MainActor.shared
        ) { screen, _, object in
            screen.show("object observer \(object?.name ?? "nil")")
        }
        // when: an insertion before it moves the object and changes the element at 0
        let zeroth = Profile()
        zeroth.name = "zeroth"
        books.insert(zeroth, at: 0)
        // then: the object moved but did not change or leave; the element at 0 did change
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["element observer 2", "element zeroth"])
        // when: the followed object leaves
        f.screen.log.removeAll()
        _ = books.remove(at: 1)
        // then: one last delivery, and the tokens end
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["object first", "object observer first"])
        #expect(!object.isValid)
        #expect(!objectForObserver.isValid)
    }

    @Test func eachDeliversAPropertyOfEveryElementOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let a = Profile()
        let b = Profile()
        let books: ObservedArray<Profile> = [a, b]
        books.observe(.each(\.age), queue: f.queue, isolation: MainActor.shared) { books in
            f.screen.show("plain \(books.map(\.age))")
        }.store(in: &f.screen.tokens)
        books.observe(.each(\.age), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, books in
            screen.show("observer \(books.map(\.age))")
        }.store(in: &f.screen.tokens)
        // when
        a.age = 1
        b.age = 2
        b.name = "not watched"
        // then
        #expect(f.drain() == 2)
        #expect(f.screen.log.sorted() == ["observer [1, 2]", "plain [1, 2]"])
    }

    @Test func aKeyAndAMemberDeliverOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let shelves: ObservedDictionary<String, Int> = [:]
        let tags: ObservedSet<String> = []
        shelves.observe(.key("top"), queue: f.queue, isolation: MainActor.shared) { shelves in
            f.screen.show("key \(shelves["top"] ?? -1)")
        }.store(in: &f.screen.tokens)
        shelves.observe(.key("top"), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, shelves in
            screen.show("key observer \(shelves.count)")
        }.store(in: &f.screen.tokens)
        tags.observe(.member("swift"), queue: f.queue, isolation: MainActor.shared) { tags in
            f.screen.show("member \(tags.contains("swift"))")
        }.store(in: &f.screen.tokens)
        tags.observe(.member("swift"), observer: f.screen, queue: f.queue, isolation: MainActor.shared) {
            screen, tags in
            screen.show("member observer \(tags.count)")
        }.store(in: &f.screen.tokens)
        // when: other keys and members change nothing
        shelves["bottom"] = 0
        tags.insert("go")
        #expect(f.drain() == 0)
        shelves["top"] = 3
        tags.insert("swift")
        // then
        #expect(f.drain() == 4)
        #expect(f.screen.log.sorted() == ["key 3", "key observer 2", "member observer 2", "member true"])
    }

    // MARK: Pipelines

    @Test func aPostingReceivesValuesOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.pipeline(of: \.age)
            .map { $0 * 2 }
            .post(queue: f.queue, isolation: MainActor.shared) { doubled in f.screen.show("posted \(doubled)") }
            .store(in: &f.screen.tokens)
        // then: `.initial` posts at creation
        #expect(f.screen.log == ["posted 0"])
        // when
        profile.age = 4
        profile.age = 5
        // then
        #expect(f.drain() == 1)
        #expect(f.screen.log == ["posted 0", "posted 10"])
    }

    @Test func aBindingWritesAMainActorObjectOnTheMainActor() {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        profile.name = "start"
        let label = Label()
        profile.pipeline(of: \.name)
            .bind(to: label, \.text, queue: f.queue, isolation: MainActor.shared)
            .store(in: &f.screen.tokens)
        profile.pipeline(of: \.name)
            .bind(to: label, \.subtitle, queue: f.queue, isolation: MainActor.shared)
            .store(in: &f.screen.tokens)
        #expect(label.text == "start")
        #expect(label.subtitle == "start")
        // when
        profile.name = "next"
        // then
        #expect(f.drain() == 2)
        #expect(label.text == "next")
        #expect(label.subtitle == "next")
    }

    @Test func aPushOffTheMainActorIsPostedAndWrittenOnTheMainActor() async {
        // given: a queue drained on another thread
        let queue = CoalescingQueue(target: .manual)
        let screen = Screen()
        let profile = Profile()
        let label = Label()
        profile.pipeline(of: \.name)
            .bind(to: label, \.text, options: [], queue: queue, isolation: MainActor.shared)
            .store(in: &screen.tokens)
        profile.pipeline(of: \.name)
            .post(options: [], queue: queue, isolation: MainActor.shared) { name in screen.show("posted \(name)") }
            .store(in: &screen.tokens)
        // when
        profile.name = "off"
        let drained = await Task.detached { queue.drain() }.value
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        // then: both were scheduled on the main queue, and ran there
        #expect(drained == 2)
        #expect(label.text == "off")
        #expect(screen.log == ["posted off"])
    }

    // MARK: Sequences

    @Test func valuesAreIteratedOnTheMainActor() async {
        // given
        let f = MainActorFixture()
        let profile = Profile()
        var ages = profile.values(of: \.age, queue: f.queue).makeAsyncIterator()
        var names = profile.values(of: KeyPathChain(\.friend).then(\.name), queue: f.queue).makeAsyncIterator()
        #expect(await ages.next() == 0)
        #expect(await names.next() == .some(nil))
        // when
        let friend = Profile()
        friend.name = "j"
        profile.friend = friend
        profile.age = 6
        f.drain()
        // then: main-actor code went on with the values it was handed
        f.screen.show("\(await ages.next() ?? -1) \(await names.next().flatMap { $0 } ?? "-")")
        #expect(f.screen.log == ["6 j"])
    }

    // MARK: The main queue

    @Test func theDefaultMainQueueDeliversEveryDeliveryStyleOnTheMainActor() async {
        // given: the default queue (.main), as an app writes it
        let screen = Screen()
        let profile = Profile()
        profile.observe(\.age, observer: screen, isolation: MainActor.shared) { screen, profile in
            screen.show("key path \(profile.age)")
        }.store(in: &screen.tokens)
        profile.observe(.changes(\.age), observer: screen, isolation: MainActor.shared) { screen, _, change in
            screen.show("changes \(change.new)")
        }.store(in: &screen.tokens)
        profile.observe(observer: screen, isolation: MainActor.shared) { screen, profile in
            screen.show("tracking \(profile.age)")
        }.store(in: &screen.tokens)
        profile.pipeline(of: \.age)
            .post(options: [], isolation: MainActor.shared) { age in screen.show("posted \(age)") }
            .store(in: &screen.tokens)
        // when
        profile.age = 1
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        // then
        #expect(screen.log.sorted() == ["changes 1", "key path 1", "posted 1", "tracking 0", "tracking 1"])
    }
}

/// A view, main actor by the module's default, that a binding writes.
final class Label {
    var text = ""
    var subtitle: String?
}
