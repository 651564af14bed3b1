import Testing

@testable import ObservationTokens

// The README's first example, verbatim, compiled in a nonisolated module (the same code is
// compiled in the main-actor module `DefaultIsolationTests`).

nonisolated final class Address: ObservableModel {  // `nonisolated`: see below
    @Observed var zipCode = ""
}

@MainActor final class AddressLabel {
    var text = ""
    private var tokens = Set<ObservationToken>()

    init(address: Address) {
        address.observe(\.zipCode, observer: self, isolation: MainActor.shared) { label, address in
            label.text = address.zipCode  // main-actor code; no `self` captured, no retain cycle
        }
        .store(in: &tokens)  // the label's lifetime is the observation's
    }
}

@MainActor @Suite struct DocSnippetTests {
    @Test func readmeFirstExampleUpdatesTheLabelOncePerTick() async {
        let address = Address()
        let label = AddressLabel(address: address)
        for zip in 1...1_000 { address.zipCode = "\(zip)" }
        await concMainQueueTurn()
        #expect(label.text == "1000")
    }

    @Test func commandLineExampleDeliversOnDrain() {
        let person = ConcPerson()
        let printed = RelLock<[String]>([])
        let queue = CoalescingQueue(target: .manual)
        let token = person.observe(\.name, queue: queue) { person in printed.withLock { $0.append(person.name) } }
        person.name = "Ada"
        queue.drain()  // prints "Ada"
        #expect(printed.withLock { $0 } == ["Ada"])
        withExtendedLifetime(token) {}
    }
}
