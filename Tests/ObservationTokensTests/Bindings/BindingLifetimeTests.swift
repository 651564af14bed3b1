import Testing

@testable import ObservationTokens

/// Issue 13: a binding is a token. Dropping or invalidating it cuts it; either object's deinit
/// ends it; neither object is retained; every end releases everything, in any release order.
@Suite struct BindingLifetimeTests {
    /// Weak references to everything one binding involves.
    struct Refs {
        weak var token: ObservationToken?
        weak var source: BindPerson?
        weak var destination: AnyObject?
        weak var probe: BindProbe?
        weak var subscription: Subscription?

        var allGone: Bool {
            token == nil && source == nil && destination == nil && probe == nil && subscription == nil
        }
    }

    /// The kinds of binding token, each created from `source` to `destination` with a closure
    /// that captures `probe`.
    enum Kind: CaseIterable, CustomTestStringConvertible {
        case oneWayToModel, oneWayToPlainObject, twoWay, group, posting, combineLatest, destinationPath

        var testDescription: String { "\(self)" }

        /// Whether the destination's deinit ends the token at once (it is a model the binding
        /// knows about), rather than at the next push.
        var destinationDeinitEndsAtOnce: Bool { self != .oneWayToPlainObject && self != .posting }

        func make(
            source: BindPerson, destination: AnyObject, probe: BindProbe, queue: CoalescingQueue
        ) -> ObservationToken {
            switch self {
            case .oneWayToModel:
                return source.pipeline(of: \.name).map { [probe] in
                    probe.touch()
                    return $0
                }.bind(to: destination as! BindPerson, \.name, queue: queue)
            case .oneWayToPlainObject:
                return source.pipeline(of: \.name).map { [probe] in
                    probe.touch()
                    return $0
                }.bind(to: destination as! BindLabel, \.text, queue: queue)
            case .twoWay:
                // The probe rides along in a sibling posting: two-way bindings take no closure.
                return source.bindTwoWay(\.name, with: destination as! BindPerson, \.name, queue: queue)
            case .group:
                // Group bindings take no closure either.
                return source.bind(
                    [.init(\.name, \.title), .init(\.age, \.years)], to: destination as! BindCard, queue: queue)
            case .posting:
                let box = WeakReference(destination as! BindLabel)
                return source.pipeline(of: \.name).post(queue: queue) { [probe] name in
                    probe.touch()
                    box.load(as: BindLabel.self)?.text = name
                }
            case .combineLatest:
                let other = destination as! BindPerson
                return ValuePipeline.combineLatest(source.pipeline(of: \.name), other.pipeline(of: \.age)) {
                    [probe] name, age in
                    probe.touch()
                    return "\(name)\(age)"
                }.post(queue: queue) { _ in }
            case .destinationPath:
                let person = destination as! BindPerson
                return source.pipeline(of: \.name).map { [probe] in
                    probe.touch()
                    return $0
                }.bind(to: person, KeyPathChain(\BindPerson.friend), \.name, queue: queue)
            }
        }

        func makeDestination() -> AnyObject {
            switch self {
            case .oneWayToModel, .twoWay, .combineLatest: BindPerson()
            case .oneWayToPlainObject, .posting: BindLabel()
            case .group: BindCard()
            case .destinationPath:
                {
                    let person = BindPerson()
                    person.friend = BindPerson()
                    return person
                }()
            }
        }
    }

    /// The only strong references, so that a test can drop each.
    final class Held {
        var source: BindPerson?
        var destination: AnyObject?
        var token: ObservationToken?
        init(source: BindPerson, destination: AnyObject, token: ObservationToken) {
            self.source = source
            self.destination = destination
            self.token = token
        }
    }

    static func make(_ kind: Kind, queue: CoalescingQueue) -> (Held, Refs) {
        let source = BindPerson(name: "a")
        let destination = kind.makeDestination()
        let probe = BindProbe()
        let token = kind.make(source: source, destination: destination, probe: probe, queue: queue)
        var refs = Refs()
        refs.token = token
        refs.source = source
        refs.destination = destination
        refs.probe = kind == .twoWay || kind == .group ? nil : probe
        refs.subscription = token.subscription
        return (Held(source: source, destination: destination, token: token), refs)
    }

    @Test(arguments: Kind.allCases)
    func droppingTheTokenReleasesEverything(kind: Kind) {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.make(kind, queue: queue)
        #expect(held.token!.isValid)
        held.source!.name = "pending"
        held.token = nil
        #expect(refs.token == nil)
        #expect(refs.probe == nil)
        #expect(refs.subscription == nil)
        #expect(held.source!.attachedEdgeCount == 0)
        queue.drain()
        held.source = nil
        held.destination = nil
        #expect(refs.allGone)
    }

    @Test(arguments: Kind.allCases)
    func invalidatingReleasesTheClosuresAtOnce(kind: Kind) {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.make(kind, queue: queue)
        held.token!.invalidate()
        held.token!.invalidate()  // idempotent
        #expect(!held.token!.isValid)
        #expect(refs.probe == nil)
        #expect(held.source!.attachedEdgeCount == 0)
        if let model = held.destination as? ObservableModel { #expect(model.attachedEdgeCount == 0) }
        held.source = nil
        held.destination = nil
        held.token = nil
        #expect(refs.allGone)
    }

    @Test(arguments: Kind.allCases)
    func sourceDeinitEndsTheTokenThenDestination(kind: Kind) {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.make(kind, queue: queue)
        held.source = nil
        #expect(refs.source == nil)
        #expect(!held.token!.isValid)
        #expect(refs.probe == nil)
        held.destination = nil
        #expect(refs.destination == nil)
        #expect(queue.drain() == 0)
        held.token = nil
        #expect(refs.allGone)
    }

    @Test(arguments: Kind.allCases)
    func destinationDeinitEndsTheTokenThenSource(kind: Kind) {
        let queue = CoalescingQueue(target: .manual)
        let (held, refs) = Self.make(kind, queue: queue)
        held.destination = nil
        #expect(refs.destination == nil)
        if kind.destinationDeinitEndsAtOnce {
            #expect(!held.token!.isValid)
            #expect(refs.probe == nil)
        } else if kind == .oneWayToPlainObject {
            // A plain object can't tell anyone it went away: the next push finds it gone.
            #expect(held.token!.isValid)
            held.source!.name = "b"
            queue.drain()
            #expect(!held.token!.isValid)
            #expect(refs.probe == nil)
        }
        held.source = nil
        #expect(refs.source == nil)
        #expect(queue.drain() == 0)
        held.token = nil
        #expect(refs.allGone)
    }

    @Test(arguments: Kind.allCases)
    func endedTokenNeverWritesAgain(kind: Kind) {
        let queue = CoalescingQueue(target: .manual)
        let (held, _) = Self.make(kind, queue: queue)
        held.token!.invalidate()
        held.source!.name = "after"
        held.source!.age = 99
        queue.drain()
        switch held.destination {
        case let person as BindPerson: #expect(person.name != "after" && person.friend?.name != "after")
        case let label as BindLabel: #expect(label.text != "after")
        case let card as BindCard: #expect(card.years != 99 && card.title != "after")
        default: Issue.record("unexpected destination")
        }
    }

    @Test func transitiveChainEndsWhereAnObjectGoes() {
        let queue = CoalescingQueue(target: .manual)
        var a: BindPerson? = BindPerson()
        var b: BindPerson? = BindPerson()
        let c = BindPerson()
        let ab = a!.bind(\.name, to: b!, \.name, queue: queue)
        let bc = b!.bind(\.name, to: c, \.name, queue: queue)
        weak let weakB = b
        b = nil
        #expect(weakB == nil)
        #expect(!ab.isValid && !bc.isValid)
        a!.name = "x"
        queue.drain()
        #expect(c.name == "")
        a = nil
    }
}
