import Testing

@testable import ObservationTokens

/// The callback closure is released by whoever sees the token ended with no delivery running:
/// the call that ends it, or else the delivery running at that moment, when it returns. These
/// tests pin the second case, which the first-case leak tests can't see.
@Suite struct CallbackLifetimeTests {
    @Test func callbackThatInvalidatesItsOwnTokenIsReleasedWhenItReturns() {
        // Given a token whose callback captures a probe and invalidates the token
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let tokenBox = CoreBox<ObservationToken?>(nil)
        let probeRef: WeakObserverBox
        do {
            let probe = CoreProbe()
            probeRef = WeakObserverBox(probe)
            tokenBox.value = person.observe(\.firstName, queue: queue) { [probe] _ in
                tokenBox.value?.invalidate()
                probe.touch()  // the closure still runs with its captures after invalidate()
            }
        }
        #expect(probeRef.object != nil)

        // When a change is delivered
        person.firstName = "Ada"
        #expect(queue.drain() == 1)

        // Then the token ended and its closure (with the probe) was released on return
        #expect(tokenBox.value?.isValid == false)
        #expect(probeRef.object == nil)
        person.firstName = "Grace"
        #expect(queue.drain() == 0)
    }

    @Test func invalidateOnAnotherThreadDuringTheCallbackReleasesTheClosureWhenItReturns() async {
        // Given a token whose callback pauses inside, capturing a probe
        let gate = CoreGate()
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let probeRef: WeakObserverBox
        let token: ObservationToken
        do {
            let probe = CoreProbe()
            probeRef = WeakObserverBox(probe)
            token = person.observe(\.firstName, queue: queue) { [probe] _ in
                gate.pass()
                probe.touch()
            }
        }
        person.firstName = "Ada"
        let aliveWhileRunning = CoreBox<Bool?>(nil)
        let delivered = CoreBox(0)

        // When one thread delivers and is paused inside the callback while another invalidates
        await coreRunOnThreads(2) { index in
            if index == 0 {
                gate.arm()
                delivered.value = queue.drain()
                gate.disarm()
            } else {
                gate.waitUntilEntered()
                token.invalidate()
                // The running callback still owns its closure: nothing it captured is gone.
                aliveWhileRunning.value = probeRef.object != nil
                gate.release()
            }
        }

        // Then the closure stayed alive while it ran and was released when it returned
        #expect(delivered.value == 1)
        #expect(aliveWhileRunning.value == true)
        #expect(!token.isValid)
        #expect(probeRef.object == nil)
    }

    @Test func tokensEndedWhileAnotherThreadDeliversReleaseEveryClosureExactlyOnce() async {
        // Given many tokens, each capturing its own probe, all pending
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let count = 2_000
        var probeRefs: [WeakObserverBox] = []
        var tokens: [ObservationToken] = []
        let calls = CoreCounter()
        for _ in 0..<count {
            let probe = CoreProbe()
            probeRefs.append(WeakObserverBox(probe))
            tokens.append(
                person.observe(\.firstName, queue: queue) { [probe] _ in
                    probe.touch()
                    calls.increment()
                })
        }
        person.firstName = "Ada"
        let held = CoreBox(tokens)
        tokens = []

        // When one thread drains while another invalidates every token
        await coreRunOnThreads(2) { index in
            if index == 0 {
                queue.drain()
            } else {
                for token in held.value { token.invalidate() }
            }
        }

        // Then every closure is released (none kept by a delivery, none released twice, which
        // would crash), and at most one callback ran per token
        #expect(probeRefs.allSatisfy { $0.object == nil })
        #expect(calls.value <= count)
        #expect(held.value.allSatisfy { !$0.isValid })
    }

    @MainActor @Test func aChainTokenOfEveryObserveFormDeliversTheEndpointAndReleasesTheCallbackWhenItEnds() {
        // Given a chain token from each observe form, each callback capturing a probe
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.address = CoreAddress()
        person.address?.zip = "0"
        let observer = CoreObserver()
        let zips = CoreRecorder<String>()
        var probeRefs: [WeakObserverBox] = []
        var tokens: [ObservationToken] = []
        do {
            let probes = (0..<5).map { _ in CoreProbe() }
            probeRefs = probes.map(WeakObserverBox.init)
            let zip = KeyPathChain(\CorePerson.address).then(\.zip)
            tokens.append(
                person.observe(.chain(zip), queue: queue) { [probe = probes[0]] _, zip in
                    probe.touch()
                    zips.append("plain \(zip ?? "-")")
                })
            tokens.append(
                person.observe(.chain(zip), observer: observer, queue: queue) { [probe = probes[1]] _, _, zip in
                    probe.touch()
                    zips.append("observer \(zip ?? "-")")
                })
            tokens.append(
                person.observe(.chain(zip), queue: queue, isolation: MainActor.shared) { [probe = probes[2]] _, zip in
                    probe.touch()
                    zips.append("main actor \(zip ?? "-")")
                })
            tokens.append(
                person.observe(.chain(zip), options: .endpointChanges, queue: queue) { [probe = probes[3]] _, zip in
                    probe.touch()
                    zips.append("endpoint \(zip ?? "-")")
                })
            tokens.append(
                person.observe(.changes(zip), queue: queue) { [probe = probes[4]] _, change in
                    probe.touch()
                    zips.append("change \(change.old ?? "-") → \(change.new ?? "-")")
                })
        }

        // When the endpoint changes, is delivered, and every token ends (each still held)
        person.address?.zip = "12345"
        #expect(queue.drain() == 5)
        for token in tokens { token.invalidate() }

        // Then each form delivered the endpoint once, and released its callback at the end
        #expect(
            zips.entries.sorted() == [
                "change 0 → 12345", "endpoint 12345", "main actor 12345", "observer 12345", "plain 12345",
            ])
        #expect(probeRefs.allSatisfy { $0.object == nil })
        #expect(tokens.allSatisfy { !$0.isValid })
    }

    @Test func aChainCallbackThatEndsItsOwnTokenKeepsItsCapturesUntilItReturns() {
        // Given chain tokens (a plain delivery and an `.endpointChanges` one) whose callbacks
        // capture a probe, end their own token, then check that the probe is still alive
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        person.address = CoreAddress()
        let zip = KeyPathChain(\CorePerson.address).then(\.zip)
        let aliveAfterEnding = CoreRecorder<Bool>()
        var probeRefs: [WeakObserverBox] = []
        var tokenBoxes: [CoreBox<ObservationToken?>] = []
        for options: ObservationOptions in [[], .endpointChanges] {
            let probe = CoreProbe()
            let probeRef = WeakObserverBox(probe)
            let tokenBox = CoreBox<ObservationToken?>(nil)
            tokenBox.value = person.observe(.chain(zip), options: options, queue: queue) { [probe] _, _ in
                tokenBox.value?.invalidate()
                // The callback (the only owner of the probe) is still held while it runs.
                aliveAfterEnding.append(probeRef.object != nil)
                probe.touch()
            }
            probeRefs.append(probeRef)
            tokenBoxes.append(tokenBox)
        }

        // When the endpoint changes and is delivered
        person.address?.zip = "12345"
        #expect(queue.drain() == 2)

        // Then each callback ran to its end with its captures, and was released on return
        #expect(aliveAfterEnding.entries == [true, true])
        #expect(probeRefs.allSatisfy { $0.object == nil })
        #expect(tokenBoxes.allSatisfy { $0.value?.isValid == false })
        person.address?.zip = "54321"
        #expect(queue.drain() == 0)
    }

    @Test func aPropertyCallbackThatEndsItsOwnTokenKeepsItsCapturesUntilItReturns() {
        // Given property tokens (without and with an observer, and a change token) whose
        // callbacks capture a probe, end their own token, then check that the probe is alive
        let queue = CoalescingQueue(target: .manual)
        let person = CorePerson()
        let observer = CoreObserver()
        let aliveAfterEnding = CoreRecorder<Bool>()
        var probeRefs: [WeakObserverBox] = []
        var tokenBoxes: [CoreBox<ObservationToken?>] = []
        for form in 0..<3 {
            let probe = CoreProbe()
            let probeRef = WeakObserverBox(probe)
            let tokenBox = CoreBox<ObservationToken?>(nil)
            let body: @Sendable () -> Void = { [probe] in
                tokenBox.value?.invalidate()
                // The callback (the only owner of the probe) is still held while it runs.
                aliveAfterEnding.append(probeRef.object != nil)
                probe.touch()
            }
            switch form {
            case 0: tokenBox.value = person.observe(\.age, queue: queue) { _ in body() }
            case 1: tokenBox.value = person.observe(\.age, observer: observer, queue: queue) { _, _ in body() }
            default: tokenBox.value = person.observe(.changes(\.age), queue: queue) { _, _ in body() }
            }
            probeRefs.append(probeRef)
            tokenBoxes.append(tokenBox)
        }

        // When the property changes and is delivered
        person.age = 1
        #expect(queue.drain() == 3)

        // Then each callback ran to its end with its captures, and was released on return
        #expect(aliveAfterEnding.entries == [true, true, true])
        #expect(probeRefs.allSatisfy { $0.object == nil })
        #expect(tokenBoxes.allSatisfy { $0.value?.isValid == false })
        person.age = 2
        #expect(queue.drain() == 0)
    }
}
