import Testing

@testable import ObservationTokens

/// Cycles of bindings settle, for every value type: a change crosses each binding once, where
/// two changes meet the later one wins, and a change never comes back to where it started.
@Suite struct BindingCycleTests {
    /// One ring of bindings to build, feed and check.
    struct Ring: CustomTestStringConvertible, Sendable {
        enum Kind: Sendable { case oneWay, twoWay }
        enum Value: Sendable { case equatable, notEquatable }

        let kind: Kind
        let value: Value
        let size: Int
        let isImmediate: Bool
        /// Fed at member 0 only, or at member 0 and then at the last member, in one tick.
        let feedsTwice: Bool

        var testDescription: String {
            "\(kind) ring of \(size), \(value), \(isImmediate ? ".immediate" : "delivered"), fed \(feedsTwice ? "twice" : "once")"
        }

        /// The pushes the rules make. Fed once: every other member takes the change, once.
        /// Fed at member 0, then at the last member: delivered, the first change reaches every
        /// member but the last (which holds the later change) and the second reaches all but
        /// itself; `.immediate`, each change runs around in its setter, reaching all but its
        /// own member.
        var expectedPushes: Int {
            guard feedsTwice else { return size - 1 }
            return isImmediate ? 2 * size - 2 : 2 * size - 3
        }

        static let all: [Ring] = [Kind.oneWay, .twoWay].flatMap { kind in
            [Value.equatable, .notEquatable].flatMap { value in
                [2, 3, 50].flatMap { size in
                    [false, true].flatMap { isImmediate in
                        [false, true].map { feedsTwice in
                            Ring(kind: kind, value: value, size: size, isImmediate: isImmediate, feedsTwice: feedsTwice)
                        }
                    }
                }
            }
        }
    }

    /// A ring built: member `i` bound to member `i + 1` (and the last to the first).
    final class Built {
        let ring: Ring
        let queue = CoalescingQueue(target: .manual)
        let breaker: BindBreaker
        let nodes: [BindNode]
        var userWrites = 0

        init(_ ring: Ring) {
            self.ring = ring
            // Room for every expected push and then some: a ring that loops stops here.
            breaker = BindBreaker(limit: 4 * ring.size + 8)
            nodes = (0..<ring.size).map { [breaker] _ in BindNode(breaker: breaker) }
            let options: ObservationOptions = ring.isImmediate ? [.immediate] : []
            for index in nodes.indices {
                let a = nodes[index]
                let b = nodes[(index + 1) % nodes.count]
                let token: ObservationToken
                switch (ring.kind, ring.value) {
                case (.oneWay, .equatable): token = a.bind(\.text, to: b, \.text, options: options, queue: queue)
                case (.oneWay, .notEquatable): token = a.bind(\.shape, to: b, \.shape, options: options, queue: queue)
                case (.twoWay, .equatable):
                    token = a.bindTwoWay(\.text, with: b, \.text, options: options, queue: queue)
                case (.twoWay, .notEquatable):
                    token = a.bindTwoWay(\.shape, with: b, \.shape, options: options, queue: queue)
                }
                breaker.tokens.append(token)
            }
        }

        func feed(_ index: Int, _ value: Int) {
            userWrites += 1
            switch ring.value {
            case .equatable: nodes[index].text = "v\(value)"
            case .notEquatable: nodes[index].shape = BindShape(size: value)
            }
        }

        /// Each member's value, as a number (`v7` → 7).
        var values: [Int] {
            nodes.map { node in
                switch ring.value {
                case .equatable: Int(node.text.dropFirst()) ?? -1
                case .notEquatable: node.shape.size
                }
            }
        }

        var pushes: Int { breaker.writes - userWrites }

        /// Drains until a drain delivers nothing, at most `limit` times: the counts.
        func drainUntilQuiet(limit: Int = 8) -> [Int] {
            var counts: [Int] = []
            while counts.count < limit {
                let delivered = queue.drain()
                counts.append(delivered)
                if delivered == 0 { break }
            }
            return counts
        }
    }

    @Test(arguments: Ring.all)
    func aRingSettlesWithOnePushPerMemberPerChange(ring: Ring) {
        // Given a ring of bindings, settled
        let built = Built(ring)
        #expect(built.drainUntilQuiet() == [0])

        // When one member changes (or one, then another, in the same tick)
        built.feed(0, 1)
        if ring.feedsTwice { built.feed(ring.size - 1, 2) }
        let counts = built.drainUntilQuiet()

        // Then every member holds the last change, each push wrote once, and nothing loops
        let last = ring.feedsTwice ? 2 : 1
        #expect(!built.breaker.tripped, "the ring looped")
        #expect(built.values == Array(repeating: last, count: ring.size))
        #expect(built.pushes == ring.expectedPushes)
        #expect(counts == (ring.isImmediate ? [0] : [ring.expectedPushes, 0]))
        #expect(built.queue.pendingCount == 0)
    }

    @Test func aRingSettlesAgainAtEveryLaterChange() {
        // Given a ring of three one-way bindings of a value that is not Equatable, settled once
        let built = Built(Ring(kind: .oneWay, value: .notEquatable, size: 3, isImmediate: false, feedsTwice: false))
        built.feed(1, 1)
        _ = built.drainUntilQuiet()

        // When other members change in later ticks
        built.feed(2, 2)
        let second = built.drainUntilQuiet()
        built.feed(0, 3)
        let third = built.drainUntilQuiet()

        // Then each change reaches the two other members, once
        #expect(second == [2, 0])
        #expect(third == [2, 0])
        #expect(built.values == [3, 3, 3])
        #expect(built.pushes == 6)
        #expect(!built.breaker.tripped)
    }

    @Test func aRingFedAtEveryMemberInOneTickTakesTheLastChange() {
        // Given a ring of 50 two-way bindings of a value that is not Equatable
        let built = Built(Ring(kind: .twoWay, value: .notEquatable, size: 50, isImmediate: false, feedsTwice: false))
        built.breaker.limit = 50 * 50 + 50

        // When every member changes in one tick, member 0 last
        for index in (0..<50).reversed() { built.feed(index, 100 + index) }
        let counts = built.drainUntilQuiet()

        // Then every member holds member 0's change, and the ring is quiet after one drain
        #expect(built.values == Array(repeating: 100, count: 50))
        #expect(counts.count == 2 && counts.last == 0)
        #expect(!built.breaker.tripped)
    }

    @Test func creatingTheLastBindingOfARingSettles() {
        // Given two one-way bindings a → b → c, with values that are not Equatable
        let queue = CoalescingQueue(target: .manual)
        let breaker = BindBreaker(limit: 20)
        let nodes = (0..<3).map { _ in BindNode(breaker: breaker) }
        nodes[0].shape = BindShape(size: 7)
        breaker.tokens.append(nodes[0].bind(\.shape, to: nodes[1], \.shape, queue: queue))
        breaker.tokens.append(nodes[1].bind(\.shape, to: nodes[2], \.shape, queue: queue))

        // When c → a closes the ring (taking c's value at creation)
        breaker.tokens.append(nodes[2].bind(\.shape, to: nodes[0], \.shape, queue: queue))
        var counts: [Int] = []
        for _ in 0..<8 {
            counts.append(queue.drain())
            if counts.last == 0 { break }
        }

        // Then the value a took goes around once — to b, and to c, which can't tell it is the
        // value it had (not Equatable) — and stops at the binding that wrote it: the ring is quiet
        #expect(nodes.map(\.shape.size) == [7, 7, 7])
        #expect(counts == [2, 0])
        #expect(breaker.writes == 1 + 2 + 1 + 2)  // the set, 2 creations, the closing creation, b and c
        #expect(!breaker.tripped)
    }

    // MARK: Where a change meets a later one outside a cycle

    @Test func aDestinationChangedAfterItsSourceInOneTickKeepsItsValue() {
        // Given a one-way binding between two models
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson()
        let destination = BindPerson()
        let token = source.bind(\.name, to: destination, \.name, options: [], queue: queue)

        // When the source changes, then the destination, in one tick
        source.name = "source"
        destination.name = "direct"
        let delivered = queue.drain()

        // Then the destination keeps the later change, as an `.immediate` binding would leave it
        #expect(destination.name == "direct")
        #expect(delivered == 0)

        // And the next change of the source reaches it
        source.name = "source again"
        queue.drain()
        #expect(destination.name == "source again")
        withExtendedLifetime(token) {}
    }

    @Test func aBindingMadeFromAPendingDestinationDoesNotHoldThePendingChangeBack() {
        // Given a binding a → b, and a change of a waiting for its tick
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let c = BindPerson()
        let toB = a.bind(\.name, to: b, \.name, options: [], queue: queue)
        a.name = "from a"

        // When, before that tick, a binding b → c is made that writes c at once (`.initial`)
        let toC = b.bind(\.name, to: c, \.name, queue: queue)
        #expect(c.name == "")

        // Then reading b is not a change of b: the tick still brings a's change to b. c keeps
        // what its binding wrote at creation, a later change than a's (the later change wins)
        queue.drain()
        #expect(b.name == "from a")
        #expect(c.name == "")

        // And the next change of a reaches b and c
        a.name = "again"
        queue.drain()
        #expect(b.name == "again")
        #expect(c.name == "again")
        withExtendedLifetime((toB, toC)) {}
    }

    @Test func aChangeThatReachesAPropertyByTwoRoutesCrossesTheBindingAfterItOnce() {
        // Given two bindings of one source into one property, one with a map — two routes, no
        // cycle — and a binding that reads that property
        let queue = CoalescingQueue(target: .manual)
        let source = BindPerson()
        let middle = BindPerson()
        let last = BindPerson()
        let tokens = [
            source.pipeline(of: \.age).map { $0 * 10 }.bind(to: middle, \.age, options: [], queue: queue),
            source.pipeline(of: \.age).bind(to: middle, \.age, options: [], queue: queue),
            middle.pipeline(of: \.age).bind(to: last, \.age, options: [], queue: queue),
        ]

        // When the source changes
        source.age = 1

        // Then both routes write the middle property (the later one last), and the change
        // crosses the binding after it once, with the value it found first: no cycle is
        // reported (a debug build would stop), and the drain settles everything
        #expect(queue.drain() == 3)
        #expect(middle.age == 1)
        #expect(last.age == 10)
        #expect(queue.drain() == 0)
        withExtendedLifetime(tokens) {}
    }

    // MARK: Operators in cycles

    @Test func aCycleWhoseOperatorsAgreeOnTheSecondPassSettles() {
        // Given a → b trimming spaces, and b → a as it is
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let tokens = [
            a.pipeline(of: \.name).map { $0.trimmingSpaces() }.bind(to: b, \.name, options: [], queue: queue),
            b.bind(\.name, to: a, \.name, options: [], queue: queue),
        ]

        // When a takes a value with spaces
        a.name = "  padded  "
        let counts = [queue.drain(), queue.drain()]

        // Then the trimmed value comes back to a once, and both agree
        #expect(a.name == "padded" && b.name == "padded")
        #expect(counts == [2, 0])
        withExtendedLifetime(tokens) {}
    }

    #if DEBUG
        @Test func aCycleWhoseOperatorsNeverAgreeStopsADebugBuildNamingTheCycle() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = CoalescingQueue(target: .manual)
                let a = BindPerson()
                let b = BindPerson()
                let tokens = [
                    a.pipeline(of: \.age).map { $0 + 1 }.bind(to: b, \.age, options: [], queue: queue),
                    b.pipeline(of: \.age).map { $0 + 1 }.bind(to: a, \.age, options: [], queue: queue),
                ]
                a.age = 1
                for _ in 0..<10 { queue.drain() }
                withExtendedLifetime(tokens) {}
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("a cycle of bindings cannot settle"))
            #expect(
                message.contains(
                    "BindPerson.age → BindPerson.age (binding created at ObservationTokensTests/BindingCycleTests.swift:"
                ))
            #expect(message.contains("check the cycle's map and compactMap operators"))
        }
    #else
        @Test func aCycleWhoseOperatorsNeverAgreeStopsInReleaseAndLogsOnce() {
            // Given a → b adding one, and b → a adding one
            let queue = CoalescingQueue(target: .manual)
            let a = BindPerson()
            let b = BindPerson()
            let tokens = [
                a.pipeline(of: \.age).map { $0 + 1 }.bind(to: b, \.age, options: [], queue: queue),
                b.pipeline(of: \.age).map { $0 + 1 }.bind(to: a, \.age, options: [], queue: queue),
            ]

            // When a changes
            a.age = 1
            let counts = [queue.drain(), queue.drain()]

            // Then the change goes around once and stops, and nothing is pending
            #expect(b.age == 2 && a.age == 3)
            #expect(counts == [2, 0])
            withExtendedLifetime(tokens) {}
        }
    #endif

    // MARK: Writes a push causes

    @Test func whatAnOnApplyHandlerChangesBelongsToThePush() {
        // Given a → b, whose onApply handler copies the value to c, and c → a: a cycle that
        // runs through a handler
        let queue = CoalescingQueue(target: .manual)
        let breaker = BindBreaker(limit: 20)
        let nodes = (0..<3).map { _ in BindNode(breaker: breaker) }
        let c = nodes[2]
        breaker.tokens = [
            nodes[0].pipeline(of: \.shape).onApply { shape in c.shape = shape }
                .bind(to: nodes[1], \.shape, options: [], queue: queue),
            nodes[2].bind(\.shape, to: nodes[0], \.shape, options: [], queue: queue),
        ]

        // When a changes
        nodes[0].shape = BindShape(size: 4)
        let counts = [queue.drain(), queue.drain()]

        // Then b and c take it once each, and it does not come back to a
        #expect(nodes.map(\.shape.size) == [4, 4, 4])
        #expect(breaker.writes == 3)
        #expect(counts == [1, 0])
        #expect(!breaker.tripped)
    }
}

extension String {
    /// Without leading and trailing spaces.
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }
}
