import Testing

@testable import ObservationTokens

/// Issue 13: operators on bindings and postings, `now()`, `combineLatest`, posting.
@Suite struct PipelineTests {
    @Test func operatorsRunInDeclarationOrder() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "abcdef")
        let label = BindLabel()
        let log = BindLog<String>()

        // YJSafeKVO's "get together" example: filter, convert, filter, convert, applied.
        let token = person.pipeline(of: \.name)
            .onApply { _ in log.append("applied first") }
            .filter {
                log.append("filter 1: \($0)"); return $0.count > 5
            }
            .map {
                log.append("map 1: \($0)"); return $0.uppercased()
            }
            .filter {
                log.append("filter 2: \($0)"); return $0.hasPrefix("ABC")
            }
            .map {
                log.append("map 2: \($0)"); return $0.lowercased()
            }
            .onApply { _ in log.append("applied last") }
            .bind(to: label, \.text, queue: queue)

        #expect(label.text == "abcdef")
        #expect(
            log.values == [
                "filter 1: abcdef", "map 1: abcdef", "filter 2: ABCDEF", "map 2: ABCDEF", "applied first",
                "applied last",
            ])
        withExtendedLifetime(token) {}
    }

    @Test func aFailingFilterStopsThePipeline() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "abcdef")
        let label = BindLabel()
        let log = BindLog<String>()
        let token = person.pipeline(of: \.name)
            .onApply { _ in log.append("applied") }
            .filter { $0.count > 5 }
            .map { value -> String in
                log.append("map \(value)")
                return value.uppercased()
            }
            .bind(to: label, \.text, queue: queue)
        #expect(label.text == "ABCDEF")

        person.name = "Bar"  // too short: stops at the filter
        queue.drain()
        #expect(label.text == "ABCDEF")
        #expect(log.values == ["map abcdef", "applied"])

        person.name = "Barrrr"
        queue.drain()
        #expect(label.text == "BARRRR")
        #expect(log.values == ["map abcdef", "applied", "map Barrrr", "applied"])
        withExtendedLifetime(token) {}
    }

    @Test func aFilterThatRejectsTheInitialValueLeavesTheDestinationAlone() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "no")
        let label = BindLabel()
        label.text = "unchanged"
        let token = person.pipeline(of: \.name).filter { $0.count > 3 }.bind(to: label, \.text, queue: queue)
        #expect(label.text == "unchanged")
        #expect(label.textWrites.value == 1)  // only the test's own write

        person.name = "long enough"
        queue.drain()
        #expect(label.text == "long enough")
        withExtendedLifetime(token) {}
    }

    @Test func mapToAnotherTypeAndCompactMap() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "")
        let label = BindLabel()
        let hidden = person.pipeline(of: \.name).map(\.isEmpty).bind(to: label, \.isHidden, queue: queue)
        let count = person.pipeline(of: \.name).compactMap { Int($0) }.bind(to: label, \.count, queue: queue)
        #expect(label.isHidden)

        person.name = "42"
        queue.drain()
        #expect(!label.isHidden)
        #expect(label.count == 42)

        person.name = "not a number"
        queue.drain()
        #expect(label.count == 42)
        withExtendedLifetime((hidden, count)) {}
    }

    @Test func removeDuplicatesStopsRepeatedValues() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(age: 10)
        let seen = BindLog<Int>()
        let token = person.pipeline(of: \.age).map { $0 / 10 }.removeDuplicates().post(queue: queue) { seen.append($0) }
        #expect(seen.values == [1])

        person.age = 11
        queue.drain()
        person.age = 25
        queue.drain()
        person.age = 29
        queue.drain()
        #expect(seen.values == [1, 2])
        #expect(token.now())  // now() goes through removeDuplicates too: 2 again is a duplicate
        #expect(seen.values == [1, 2])
        withExtendedLifetime(token) {}
    }

    /// Stateless operators are built once per pipeline and shared; stateful ones
    /// (`removeDuplicates`) get fresh state for each token finished from the pipeline, also when
    /// stateless operators follow them.
    @Test func aPipelineFinishedTwiceGivesEachTokenItsOwnOperatorState() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a")
        let first = BindLog<String>()
        let second = BindLog<String>()
        let pipeline = person.pipeline(of: \.name).removeDuplicates().map { $0.uppercased() }.filter { !$0.isEmpty }
        let tokenA = pipeline.post(queue: queue) { first.append($0) }
        person.name = "b"
        queue.drain()
        // Its own `removeDuplicates`: "b" was the first token's last value, not this one's.
        let tokenB = pipeline.post(queue: queue) { second.append($0) }
        person.name = "c"
        queue.drain()
        #expect(first.values == ["A", "B", "C"])
        #expect(second.values == ["B", "C"])
        withExtendedLifetime((tokenA, tokenB)) {}
    }

    @Test func removeDuplicatesByAPredicate() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a")
        let seen = BindLog<String>()
        let token = person.pipeline(of: \.name)
            .removeDuplicates { $0.lowercased() == $1.lowercased() }
            .post(queue: queue) { seen.append($0) }
        person.name = "A"
        queue.drain()
        person.name = "b"
        queue.drain()
        #expect(seen.values == ["a", "b"])
        withExtendedLifetime(token) {}
    }

    @Test func nowPushesThroughThisPipelineOnlyWithoutSettingTheSource() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada")
        let label = BindLabel()
        let token = person.pipeline(of: \.name).map { "[\($0)]" }.bind(to: label, \.text, options: [], queue: queue)
        let othersHeard = BindCounter()
        let other = person.observe(\.name, options: .immediate, queue: queue) { _ in othersHeard.increment() }
        #expect(label.text == "")

        #expect(token.now())
        #expect(label.text == "[Ada]")

        label.text = "scribbled"
        token.now()
        #expect(label.text == "[Ada]")
        #expect(othersHeard.value == 0)
        #expect(person.nameWrites.value == 0)
        #expect(queue.pendingCount == 0)
        withExtendedLifetime((token, other)) {}
    }

    @Test func postingReceivesEachNewValue() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "a")
        let seen = BindLog<String>()
        let token = person.pipeline(of: \.name).post(options: [], queue: queue) { seen.append($0) }
        person.name = "b"
        person.name = "c"
        queue.drain()
        person.name = "d"
        queue.drain()
        #expect(seen.values == ["c", "d"])

        token.invalidate()
        person.name = "e"
        queue.drain()
        #expect(seen.values == ["c", "d"])
    }

    @Test func postingWithOperatorsAndInitialValue() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "foo")
        let seen = BindLog<String>()
        let token = person.pipeline(of: \.name).filter { !$0.isEmpty }.map { $0.uppercased() }.post(queue: queue) {
            seen.append($0)
        }
        person.name = ""
        queue.drain()
        person.name = "bar"
        queue.drain()
        #expect(seen.values == ["FOO", "BAR"])
        withExtendedLifetime(token) {}
    }

    @Test func combineLatestOfTwoFiresAtCreationThenOncePerTick() {
        let queue = CoalescingQueue(target: .manual)
        let foo = BindPerson(name: "foo")
        let bar = BindPerson(name: "bar")
        let clown = BindPerson()
        let token = ValuePipeline.combineLatest(foo.pipeline(of: \.name), bar.pipeline(of: \.name)) { $0 + $1 }
            .bind(to: clown, \.name, queue: queue)
        #expect(clown.name == "foobar")

        foo.name = "Foo"
        bar.name = "Bar"
        foo.name = "FOO"
        queue.drain()
        #expect(clown.name == "FOOBar")
        #expect(clown.nameWrites.value == 0)
        withExtendedLifetime(token) {}
    }

    @Test func combineLatestFiresAtMostOncePerTick() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        let b = BindPerson()
        let fired = BindCounter()
        let token = ValuePipeline.combineLatest(a.pipeline(of: \.age), b.pipeline(of: \.age)) { $0 + $1 }
            .post(queue: queue) { _ in fired.increment() }
        #expect(fired.value == 1)
        for value in 1...100 {
            a.age = value
            b.age = value
        }
        queue.drain()
        #expect(fired.value == 2)
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func combineLatestOfFiveSourcesOfDifferentTypes() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson(name: "Ada", age: 36)
        let other = BindPerson(name: "Grace")
        let card = BindCard()
        card.subtitle = "!"
        let label = BindLabel()
        let token = ValuePipeline.combineLatest(
            person.pipeline(of: \.name), person.pipeline(of: \.age), other.pipeline(of: \.name),
            card.pipeline(of: \.subtitle), person.pipeline(of: \.point)
        ) { name, age, otherName, suffix, point in
            "\(name) \(age) \(otherName)\(suffix) \(point.x)"
        }
        .bind(to: label, \.text, queue: queue)
        #expect(label.text == "Ada 36 Grace! 0")

        card.subtitle = "?"
        person.point = BindPoint(x: 7, y: 0)
        queue.drain()
        #expect(label.text == "Ada 36 Grace? 7")
        #expect(label.textWrites.value == 2)
        withExtendedLifetime(token) {}
    }

    @Test func combineLatestStopsWhenAnInputStops() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson(age: 1)
        let b = BindPerson(age: 1)
        let seen = BindLog<Int>()
        let token = ValuePipeline.combineLatest(a.pipeline(of: \.age).filter { $0 > 0 }, b.pipeline(of: \.age)) {
            $0 * 10 + $1
        }
        .post(queue: queue) { seen.append($0) }
        a.age = -1
        queue.drain()
        b.age = 2
        queue.drain()
        a.age = 3
        queue.drain()
        #expect(seen.values == [11, 32])
        withExtendedLifetime(token) {}
    }

    @Test func immediateCombineLatestPushesOnEachChange() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson(age: 1)
        let b = BindPerson(age: 2)
        let seen = BindLog<Int>()
        let token = ValuePipeline.combineLatest(a.pipeline(of: \.age), b.pipeline(of: \.age)) { $0 + $1 }
            .post(options: [.initial, .immediate], queue: queue) { seen.append($0) }
        a.age = 10
        b.age = 20
        #expect(seen.values == [3, 12, 30])
        #expect(queue.pendingCount == 0)
        withExtendedLifetime(token) {}
    }

    @Test func endpointChangesOnAChainSource() {
        let queue = CoalescingQueue(target: .manual)
        let person = BindPerson()
        person.friend = BindPerson(name: "same")
        let seen = BindLog<String?>()
        let token = person.pipeline(of: KeyPathChain(\BindPerson.friend).then(\.name))
            .post(options: .endpointChanges, queue: queue) { seen.append($0) }
        person.friend = BindPerson(name: "same")  // another friend, same name
        queue.drain()
        person.friend?.name = "different"
        queue.drain()
        #expect(seen.values == ["different"])
        withExtendedLifetime(token) {}
    }

    @Test func combineLatestOfChainsWithEndpointChanges() {
        let queue = CoalescingQueue(target: .manual)
        let a = BindPerson()
        a.friend = BindPerson(name: "x")
        let b = BindPerson(age: 1)
        let seen = BindLog<String>()
        let token = ValuePipeline.combineLatest(
            a.pipeline(of: KeyPathChain(\BindPerson.friend).then(\.name)), b.pipeline(of: \.age)
        ) { "\($0 ?? "-")\($1)" }
        .post(options: [.initial, .endpointChanges], queue: queue) { seen.append($0) }
        a.friend = BindPerson(name: "x")  // another friend, same name: no push
        queue.drain()
        a.friend?.name = "y"
        queue.drain()
        b.age = 2
        queue.drain()
        #expect(seen.values == ["x1", "y1", "y2"])
        withExtendedLifetime(token) {}
    }

    @Test func postingWithoutTheInitialValueThenNow() {
        // YJSafeKVO's posting: only new values, and `now` for the current one.
        let queue = CoalescingQueue(target: .manual)
        let foo = BindPerson(name: "foo")
        let seen = BindLog<String>()
        let token = foo.pipeline(of: \.name).post(options: [], queue: queue) { seen.append($0) }
        #expect(seen.values.isEmpty)
        #expect(token.now())
        #expect(seen.values == ["foo"])
        #expect(token.debugDescription.contains("created at"))
        token.invalidate()
        #expect(!token.now())
        #expect(seen.values == ["foo"])
    }
}
