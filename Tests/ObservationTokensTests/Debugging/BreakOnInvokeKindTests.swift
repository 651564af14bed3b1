import Testing

@testable import ObservationTokens

// `breakOnInvoke()` on each kind of token: a breakpoint that stops with the token's callback,
// or a trap naming the fix where no breakpoint can follow the callback.

/// Records callbacks and stops in order, as "callback" and "break".
private func recordingStops() -> CoreRecorder<String> {
    let events = CoreRecorder<String>()
    ObservationDebugging.setWatchpointHandler { hit in events.append(hit.isInvoke ? "break" : "change") }
    return events
}

extension DebuggingTests {
    @Test func breakOnInvokeOfAWhichOfTokenStopsOnceATickWithItsCallback() {
        let events = recordingStops()
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }
        // Given a whichOf token on two properties, and a breakpoint on it
        let queue = CoalescingQueue(target: .manual)
        let person = DebugPerson()
        let token = person.observe(.whichOf([\.name, \.address]), queue: queue) { _, _ in events.append("callback") }
        let breakpoint = token.breakOnInvoke()
        #expect(breakpoint.isValid)

        // When both properties change in one tick
        person.name = "Ada"
        person.address = DebugAddress()
        _ = queue.drain()

        // Then it stopped once, in the drain of the callback, right before it
        #expect(events.entries == ["break", "callback"])

        // And once the token ends, it stops no more
        token.invalidate()
        person.name = "Grace"
        _ = queue.drain()
        #expect(events.entries == ["break", "callback"])
        #expect(!breakpoint.isValid)
    }

    @Test func breakOnInvokeOfAWillChangeTokenStopsRightAfterItsCallbackInTheSetter() {
        let events = recordingStops()
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }
        let person = DebugPerson()
        let token = person.observe(.willChange) { _ in events.append("callback") }
        let breakpoint = token.breakOnInvoke()
        #expect(breakpoint.isValid)

        person.name = "Ada"
        #expect(events.entries == ["callback", "break"])

        // Ended with the token: the next set neither calls nor stops
        token.invalidate()
        person.name = "Grace"
        #expect(events.entries == ["callback", "break"])
        #expect(!breakpoint.isValid)
    }

    /// `observeMutations` watches a storage of the array's own, which has no property name: its
    /// breakpoint used to be an ended token. Lists and pipelines stop the same way.
    @Test func breakOnInvokeStopsAfterTheCallbackOfCollectionListAndPipelineTokens() {
        let events = recordingStops()
        defer { ObservationDebugging.setWatchpointHandler(ObservationDebugging.defaultHandler) }
        // Given a breakpoint on each: a collection token, a list, a pipeline
        let queue = CoalescingQueue(target: .manual)
        let items: ObservedArray<Int> = []
        let mutations = items.observe(.mutations, queue: queue) { _, _ in events.append("callback") }
        let person = DebugPerson()
        let list = person.observe([\.name, \.address], queue: queue) { _ in events.append("list") }
        let pipeline = person.pipeline(of: \.name).post(options: [], queue: queue) { _ in events.append("pipeline") }
        let breakpoints = [mutations.breakOnInvoke(), list.breakOnInvoke(), pipeline.breakOnInvoke()]
        #expect(breakpoints.map(\.isValid) == [true, true, true])

        // When the array changes in one tick, the person's address in the next
        items.append(1)
        items.append(2)
        _ = queue.drain()
        person.address = DebugAddress()
        _ = queue.drain()

        // Then each stopped once, right after its callback
        #expect(events.entries == ["callback", "break", "list", "break"])

        // And a change both watch stops after each of them
        person.name = "Ada"
        _ = queue.drain()
        #expect(events.entries.suffix(4) == ["pipeline", "break", "list", "break"])
        withExtendedLifetime((mutations, list, pipeline, breakpoints)) {}
    }

    #if DEBUG
        @Test func breakOnInvokeOfATwoWayBindingTrapsNamingTheFix() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = DebugPerson()
                let label = DebugLabel()
                let token = person.bindTwoWay(\.name, with: label, \.text)
                _ = token.breakOnInvoke()
                withExtendedLifetime((person, label)) {}
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("breakOnInvoke() at ObservationTokensTests/BreakOnInvokeKindTests.swift:"))
            #expect(message.contains("on a binding token"))
            #expect(message.contains("Use breakOnChange(of:) on a source instead"))
        }

        @Test func breakOnInvokeOfACombinedPipelineTrapsNamingTheFix() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let person = DebugPerson()
                let token = ValuePipeline.combineLatest(person.pipeline(of: \.name), person.pipeline(of: \.address)) {
                    name, _ in name
                }.post(queue: CoalescingQueue(target: .manual)) { _ in }
                _ = token.breakOnInvoke()
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains("on a pipeline token"))
            #expect(message.contains("Use breakOnChange(of:) on a source instead"))
        }
    #endif
}
