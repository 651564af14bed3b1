import Testing

@testable import ObservationTokens

/// Two-way bindings — B takes A's value, no loop, no echo, the later change wins a same-tick tie.
@Suite struct TwoWayBindingTests {
    @Test func otherSideTakesTheReceiversValueAtCreation() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson(name: "a")
        let b = BindPerson(name: "b")
        let token = a.bindTwoWay(\.name, with: b, \.name, queue: queue)
        #expect(a.name == "a")
        #expect(b.name == "a")
        withExtendedLifetime(token) {}
    }

    @Test func eitherSidesChangeReachesTheOther() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, queue: queue)

        a.name = "from a"
        queue.drain()
        #expect(b.name == "from a")

        b.name = "from b"
        queue.drain()
        #expect(a.name == "from b")
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func ownWritesAreNotEchoedEvenForValuesWithoutEquality() {
        // `BindPoint` is not Equatable: every set is a change. An echo would bounce forever.
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.point, with: b, \.point, queue: queue)
        let writesToA = BindCounter()
        let writesToB = BindCounter()
        let watchA = a.observe(\.point, options: .immediate, queue: queue) { _ in writesToA.increment() }
        let watchB = b.observe(\.point, options: .immediate, queue: queue) { _ in writesToB.increment() }

        a.point = BindPoint(x: 1, y: 2)
        queue.drain()
        #expect(b.point.x == 1 && b.point.y == 2)
        #expect(writesToA.value == 1)  // the user's set
        #expect(writesToB.value == 1)  // the binding's copy, once
        #expect(queue.drain() == 0)  // nothing bounces back next tick

        b.point = BindPoint(x: 3, y: 4)
        queue.drain()
        #expect(a.point.x == 3 && a.point.y == 4)  // struct values round-trip
        #expect(writesToA.value == 2)
        #expect(writesToB.value == 2)
        #expect(queue.drain() == 0)
        withExtendedLifetime((token, watchA, watchB)) {}
    }

    @Test func whenBothSidesChangeInOneTickTheLaterChangeWins() {
        // Given a two-way binding
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, queue: queue)

        // When b changes, then a, in one tick: a's change is the later one
        b.name = "b first"
        a.name = "a second"
        let first = queue.drain()
        #expect(a.name == "a second")
        #expect(b.name == "a second")

        // When a changes, then b: b's change is the later one (an `.immediate` binding would
        // end the same way)
        a.name = "a first"
        b.name = "b second"
        let second = queue.drain()
        #expect(a.name == "b second")
        #expect(b.name == "b second")

        // Then each tick wrote the losing side once, and nothing is left
        #expect(first == 1 && second == 1)
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func immediateTwoWayCopiesInsideTheSetter() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, options: [.initial, .immediate], queue: queue)

        a.name = "x"
        #expect(b.name == "x")
        b.name = "y"
        #expect(a.name == "y")
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func chainOfTwoWayBindingsPropagatesInOneTick() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let c = BindPerson()
        let ab = a.bindTwoWay(\.name, with: b, \.name, queue: queue)
        let bc = b.bindTwoWay(\.name, with: c, \.name, queue: queue)

        a.name = "from a"
        queue.drain()
        #expect(b.name == "from a" && c.name == "from a")

        c.name = "from c"
        queue.drain()
        #expect(b.name == "from c" && a.name == "from c")
        #expect(queue.drain() == 0)
        withExtendedLifetime((ab, bc)) {}
    }

    @Test func nowCopiesTheReceiversValueAgain() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson(name: "a")
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, options: [], queue: queue)
        #expect(b.name == "")
        #expect(token.now())
        #expect(b.name == "a")
        withExtendedLifetime(token) {}
    }

    @Test func invalidatingStopsBothDirections() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let token = a.bindTwoWay(\.name, with: b, \.name, queue: queue)
        token.invalidate()
        a.name = "a"
        b.name = "b"
        queue.drain()
        #expect(a.name == "a" && b.name == "b")
        #expect(a.attachedEdgeCount == 0 && b.attachedEdgeCount == 0)
    }

    #if DEBUG
        @Test func bindingAPropertyToItselfStopsADebugBuild() async {
            await #expect(processExitsWith: .failure) {
                let person = BindPerson()
                _ = person.bindTwoWay(\.name, with: person, \.name, queue: CoalescingQueue(target: .manual))
            }
        }
    #else
        @Test func bindingAPropertyToItselfReturnsAnEndedTokenInRelease() {
            let person = BindPerson()
            let token = person.bindTwoWay(\.name, with: person, \.name, queue: CoalescingQueue(target: .manual))
            #expect(!token.isValid)
            #expect(person.attachedEdgeCount == 0)
        }
    #endif

    @Test func twoPropertiesOfOneObjectCanBeBound() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "x")
        let token = person.bindTwoWay(\.name, with: person, \.nickname, queue: queue)
        #expect(person.nickname == "x")
        person.nickname = "y"
        queue.drain()
        #expect(person.name == "y")
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }
}
