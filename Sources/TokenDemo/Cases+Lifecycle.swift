import Dispatch
import ObservationTokens

// How a token's observation begins and ends. Every case here uses its own manual queue, so
// callbacks run only inside `queue.drain()` — the "end of tick" — and the output is the same
// on every run.

extension DemoCase {
    static let lifecycleCases: [DemoCase] = [
        ownerGoesAway, invalidate, invalidateTwice, droppedToken, observedObjectDeinit, pendingChangeKeepsObject,
    ]

    static let ownerGoesAway = DemoCase(
        "owner-goes-away",
        group: .lifecycle,
        summary: "A token kept by an owning object ends when the owner goes away.",
        shows: """
            an object that stores its tokens (here in a `Set<ObservationToken>`) observes for exactly \
            as long as it lives. When it goes away, its tokens go with it and the observation ends: \
            no cleanup code, no unregistering.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let seen = Recorder<String>()

        var label: NameLabel? = NameLabel(showing: person, queue: queue, timeline: timeline, seen: seen)
        weak var token = label?.token
        timeline.step(#"label = NameLabel(showing: person)  — its init calls person.observe(\.name, observer: self)"#)
        timeline.note("and keeps the returned token in its own `tokens` set")
        timeline.note(#"person.observerCount(of: \.name) = \#(person.observerCount(of: \.name))"#)

        person.name = "Ada"
        timeline.step(#"person.name = "Ada"  — the setter only marks the label's token pending"#)
        timeline.endTick(draining: queue)

        label = nil
        timeline.step("label = nil  — the label deinitializes, and with it its `tokens` set and the token")
        timeline.note(
            "token released: \(token == nil); " + #"person.observerCount(of: \.name) = "#
                + "\(person.observerCount(of: \.name))")

        person.name = "Linus"
        timeline.step(#"person.name = "Linus"  — nobody observes any more: the setter is a plain store"#)
        timeline.endTick(draining: queue)

        timeline.expect(
            "the label saw \"Ada\" while it was alive, and nothing after it went away", seen.values,
            equals: ["Ada"])
        timeline.expect("the token was released together with its owner", token == nil, got: "token still alive")
        timeline.expect(#"person.observerCount(of: \.name) is 0"#, person.observerCount(of: \.name), equals: 0)
        withExtendedLifetime(label) {}
    }

    static let invalidate = DemoCase(
        "invalidate",
        group: .lifecycle,
        summary: "invalidate() ends a token at once, even a delivery already pending.",
        shows: """
            `token.invalidate()` ends the observation immediately: a change already waiting for the \
            end of the tick is cancelled, and the callback closure is released right away.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let seen = Recorder<String>()
        var witness: ClosureWitness? = ClosureWitness()
        weak var closureWitness = witness

        let token = person.observe(\.name, queue: queue) { [witness] person in
            withExtendedLifetime(witness) {}
            seen.append(person.name)
            timeline.callback("callback: name is \(quoted(person.name))")
        }
        witness = nil
        timeline.step(#"let token = person.observe(\.name) { person in … }  — token.isValid = \#(token.isValid)"#)

        person.name = "Ada"
        timeline.step(#"person.name = "Ada""#)
        timeline.endTick(draining: queue)

        person.name = "Linus"
        timeline.step(#"person.name = "Linus"  — queue.pendingCount = \#(queue.pendingCount): a delivery is waiting"#)
        token.invalidate()
        timeline.step("token.invalidate()  — ends the observation and cancels that pending delivery")
        timeline.note("token.isValid = \(token.isValid); callback closure released: \(closureWitness == nil)")
        timeline.endTick(draining: queue)

        person.name = "Margaret"
        timeline.step(#"person.name = "Margaret"  — the token has ended, nothing is queued"#)
        timeline.endTick(draining: queue)

        timeline.expect("the callback ran once, before invalidate()", seen.values, equals: ["Ada"])
        timeline.expect("token.isValid is false after invalidate()", token.isValid, equals: false)
        timeline.expect(
            "the closure was released inside invalidate(), not later", closureWitness == nil,
            got: "closure still alive")
        timeline.expect(#"person.observerCount(of: \.name) is 0"#, person.observerCount(of: \.name), equals: 0)
    }

    static let invalidateTwice = DemoCase(
        "invalidate-twice",
        group: .lifecycle,
        summary: "invalidate() is idempotent and safe from any thread.",
        shows: """
            ending a token again is harmless: a second `invalidate()` (from any thread) and the \
            token's eventual deinit do nothing, and an ended token never runs its callback.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let seen = Recorder<String>()

        let token = person.observe(\.name, queue: queue) { person in
            seen.append(person.name)
            timeline.callback("callback: name is \(quoted(person.name))")
        }
        timeline.step(#"let token = person.observe(\.name) { person in … }  — token.isValid = \#(token.isValid)"#)

        token.invalidate()
        timeline.step("token.invalidate()  — token.isValid = \(token.isValid)")
        token.invalidate()
        timeline.step("token.invalidate() again  — a no-op: token.isValid = \(token.isValid)")
        DispatchQueue.global().sync { token.invalidate() }
        timeline.step("token.invalidate() from a background thread  — also a no-op")

        let fired = token.fire()
        timeline.step("token.fire()  — returns \(fired): an ended token never calls back")

        person.name = "Ada"
        timeline.step(#"person.name = "Ada""#)
        timeline.endTick(draining: queue)
        timeline.note("token.debugDescription = \(token.debugDescription)")

        timeline.expect("the token stays ended after each extra invalidate()", token.isValid, equals: false)
        timeline.expect("fire() on an ended token returns false", fired, equals: false)
        timeline.expect("the callback never ran", seen.values, equals: [])
        timeline.expect(
            "debugDescription says the token ended", token.debugDescription.hasSuffix(", ended)"),
            got: token.debugDescription)
        timeline.expect(#"person.observerCount(of: \.name) is 0"#, person.observerCount(of: \.name), equals: 0)
    }

    static let droppedToken = DemoCase(
        "dropped-token",
        group: .lifecycle,
        summary: "A token that is not kept ends at once and never fires.",
        shows: """
            the observation lives only as long as its token. A token that nobody keeps is released at \
            the end of the statement, so the observation ends before it could ever fire. (Without \
            `_ =` the compiler warns that the result of `observe` is unused — that warning is the hint.)
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Grace")
        let seen = Recorder<String>()

        _ = person.observe(\.name, queue: queue) { person in
            seen.append(person.name)
            timeline.callback("callback: name is \(quoted(person.name))  (should never happen)")
        }
        timeline.step(#"_ = person.observe(\.name) { person in … }  — the token is dropped right here"#)
        timeline.note(#"person.observerCount(of: \.name) = \#(person.observerCount(of: \.name))"#)

        person.name = "Ada"
        timeline.step(#"person.name = "Ada"  — queue.pendingCount = \#(queue.pendingCount)"#)
        timeline.endTick(draining: queue)

        timeline.expect("the callback never ran", seen.values, equals: [])
        timeline.expect("nothing was queued by the set", queue.pendingCount, equals: 0)
        timeline.expect(#"person.observerCount(of: \.name) is 0"#, person.observerCount(of: \.name), equals: 0)
    }

    static let observedObjectDeinit = DemoCase(
        "observed-object-deinit",
        group: .lifecycle,
        summary: "The observed object's deinit ends its tokens and tells the observer.",
        shows: """
            tokens never keep the observed object alive. When it deinitializes, its tokens end at once, \
            and an observer that adopts `ObservedObjectDeinitObserver` is told — through the token's \
            queue, so the notice arrives at the end of the tick like a callback.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let notices = Recorder<String>()
        let screen = ProfileScreen(timeline: timeline, notices: notices)
        var person: Person? = Person(name: "Ada")
        weak var weakPerson = person

        let token = person!.observe(\.name, observer: screen, queue: queue) { _, person in
            timeline.callback("callback: name is \(quoted(person.name))")
        }
        screen.token = token
        timeline.step(#"screen.token = person.observe(\.name, observer: screen) { screen, person in … }"#)
        timeline.note("(ProfileScreen adopts ObservedObjectDeinitObserver)")

        person = nil
        timeline.step("person = nil  — that was the last strong reference: the Person deinitializes now")
        timeline.note("person deinitialized: \(weakPerson == nil); token.isValid = \(token.isValid)")
        timeline.note("queue.pendingCount = \(queue.pendingCount): the notice for the screen waits for the tick's end")
        let pendingNotices = queue.pendingCount
        timeline.endTick(draining: queue)
        timeline.note("(drain() counts token callbacks only; the deinit notice is not one)")

        timeline.expect("the Person deinitialized although a token observed it", weakPerson == nil, got: "alive")
        timeline.expect("the token ended when the Person deinitialized", token.isValid, equals: false)
        timeline.expect("the notice waited on the token's queue", pendingNotices, equals: 1)
        timeline.expect("the screen was told exactly once, about a Person", notices.values, equals: ["Person"])
        withExtendedLifetime(screen) {}
    }

    static let pendingChangeKeepsObject = DemoCase(
        "pending-change-keeps-object",
        group: .lifecycle,
        summary: "A changed object lives until its observers have been told.",
        shows: """
            the one time the library keeps an observed object alive: from a set until that change is \
            delivered. So observers always hear about the last changes of an object that is about to \
            go away; right after the delivery it deinitializes as usual.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let seen = Recorder<String>()
        var person: Person? = Person(name: "Grace")
        weak var weakPerson = person

        let token = person!.observe(\.name, queue: queue) { person in
            seen.append(person.name)
            timeline.callback("callback: name is \(quoted(person.name))  — the object is still there to read")
        }
        timeline.step(#"let token = person.observe(\.name) { person in … }"#)

        person!.name = "Ada"
        timeline.step(#"person.name = "Ada"  — the pending delivery now holds the person"#)
        person = nil
        let aliveWhilePending = weakPerson != nil
        timeline.step("person = nil  — our last reference is gone")
        timeline.note("person still alive: \(aliveWhilePending) (kept by the pending delivery)")
        timeline.endTick(draining: queue)
        timeline.note("person deinitialized after the delivery: \(weakPerson == nil); token.isValid = \(token.isValid)")

        timeline.expect("the object stayed alive while its change was pending", aliveWhilePending, equals: true)
        timeline.expect("the observer was told about the last change", seen.values, equals: ["Ada"])
        timeline.expect("the object deinitialized right after the delivery", weakPerson == nil, got: "still alive")
        timeline.expect("its token ended with it", token.isValid, equals: false)
    }
}
