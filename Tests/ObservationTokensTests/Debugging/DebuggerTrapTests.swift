import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parts of the debugging aids that depend on the process: whether a debugger is attached
/// (a watchpoint then raises `SIGTRAP`), and the census being on from the start in debug builds.
/// Each runs in a child process of its own (exit tests), so no global setting leaks into other
/// tests.
@Suite("Debugging: traps and defaults")
struct DebuggerTrapTests {
    @Test func tracerPidLinesAreReadAsTracedOrNot() {
        #expect(ObservationDebugging.isTraced(statusLine: "TracerPid:\t0\n") == false)
        #expect(ObservationDebugging.isTraced(statusLine: "TracerPid:\t4242\n") == true)
        #expect(ObservationDebugging.isTraced(statusLine: "TracerPid:\n") == false)
        #expect(ObservationDebugging.isTraced(statusLine: "Name:\tTracerPid\n") == nil)
        #expect(ObservationDebugging.isTraced(statusLine: "PPid:\t17\n") == nil)
    }

    #if os(Linux) || os(macOS)
        @Test func aWatchpointRaisesSIGTRAPWhenADebuggerIsAttached() async {
            await #expect(processExitsWith: .signal(SIGTRAP)) {
                ObservationDebugging.debuggerOverride.store(1, ordering: .relaxed)
                // A handler that would end the process differently if it were called instead.
                ObservationDebugging.setWatchpointHandler { _ in exit(3) }
                let person = DebugPerson()
                let watch = person.breakOnChange(of: \.name)
                person.name = "stops here"
                withExtendedLifetime(watch) {}
                exit(4)  // not reached: the trap ends the process (no debugger is there to catch it)
            }
        }

        @Test func aWatchpointCallsTheHandlerWhenNoDebuggerIsAttached() async {
            await #expect(processExitsWith: .exitCode(3)) {
                ObservationDebugging.debuggerOverride.store(2, ordering: .relaxed)
                ObservationDebugging.setWatchpointHandler { _ in exit(3) }
                let person = DebugPerson()
                let watch = person.breakOnChange(of: \.name)
                person.name = "logged"
                withExtendedLifetime(watch) {}
                exit(4)
            }
        }

        @Test func theCensusIsOnFromTheStartInDebugBuildsOnly() async {
            await #expect(processExitsWith: .success) {
                guard ObservationDebugging.isCensusEnabled == LiveCounters.isCounting else { exit(1) }
                let person = DebugPerson()
                let token = person.observe(\.name, queue: CoalescingQueue(target: .manual)) { _ in }
                let listed = ObservationDebugging.census().contains { $0.observedType == "DebugPerson" }
                withExtendedLifetime(token) {}
                exit(listed == LiveCounters.isCounting ? 0 : 2)
            }
        }
    #endif
}
