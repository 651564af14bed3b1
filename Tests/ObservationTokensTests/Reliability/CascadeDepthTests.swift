import Synchronization
import Testing

@testable import ObservationTokens

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One link of an `.immediate` cascade: its callback sets the next link's value.
final class CascadeLink: ObservableModel, @unchecked Sendable {  // touched by one thread at a time
    @Observed var value = 0
    var next: CascadeLink?
}

/// Where the deepest callback of a cascade found its stack, and where the first one did.
final class CascadeProbe: @unchecked Sendable {  // written by the cascade's thread, read after join
    var top: UInt = 0
    var bottom: UInt = 0
    var levels = 0
}

@inline(never)
func cascadeStackAddress() -> UInt {
    var marker = 0
    return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}

/// Runs `body` on a new thread with a stack of `size` bytes and waits for it.
func runOnThread(stackSize size: Int, _ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {  // handed to the thread once
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, size)
    #if canImport(Darwin)
        var thread: pthread_t?
    #else
        var thread = pthread_t()
    #endif
    let status = pthread_create(
        &thread, &attributes,
        { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(status == 0, "pthread_create failed: \(status)")
    #if canImport(Darwin)
        pthread_join(thread!, nil)
    #else
        pthread_join(thread, nil)
    #endif
    pthread_attr_destroy(&attributes)
}

@Suite("Immediate cascades")
struct CascadeDepthTests {
    /// A cascade of `depth` `.immediate` tokens, each callback setting the next link, run on a
    /// thread with `stackSize` bytes of stack. Returns the stack bytes used per level.
    func runCascade(depth: Int, stackSize: Int) -> (levels: Int, bytesPerLevel: Int) {
        let links = (0...depth).map { _ in CascadeLink() }
        for index in 0..<depth { links[index].next = links[index + 1] }
        let probe = CascadeProbe()
        let tokens = links.map { link in
            link.observe(\.value, options: .immediate, queue: CoalescingQueue(target: .manual)) { link in
                probe.levels += 1
                if let next = link.next {
                    next.value = link.value
                } else {
                    probe.bottom = cascadeStackAddress()
                }
            }
        }
        runOnThread(stackSize: stackSize) {
            probe.top = cascadeStackAddress()
            links[0].value = 1
        }
        withExtendedLifetime((links, tokens)) {}
        return (probe.levels, Int(probe.top &- probe.bottom) / depth)
    }

    @Test func cascadeCostsAFewHundredBytesOfStackPerLevel() {
        // Given 200 links on an 8 MiB thread
        let result = runCascade(depth: 200, stackSize: 8 << 20)

        // Then every level ran, each on a bounded slice of stack (figures in docs/Reliability.md)
        #expect(result.levels == 201)
        // (measured: 1,575 bytes in debug, 385 optimized, of which the test's own callback and
        // setter take 176; 1,977 and 482 before the setter's out-of-line part called a lone
        // immediate subscription with nothing else in its frame; 2,958 in debug before
        // immediate callbacks were moved out of the registry's frame)
        #if DEBUG
            // The thread sanitizer's instrumentation makes frames larger still.
            #expect(result.bytesPerLevel < (RelScale.isThreadSanitizerRun ? 4_000 : 2_500))
        #else
            #expect(
                result.bytesPerLevel <= 400,
                "a level of an immediate cascade takes \(result.bytesPerLevel) bytes of stack (keep _propertyDidChange's, deliverNow's and the setter's frames small)"
            )
        #endif
    }

    #if !DEBUG
        @Test func thousandLevelCascadeFitsAHalfMegabyteStackInOptimizedBuilds() {
            // Given 1,000 links on a thread with the 512 KiB stack of Apple platforms' secondary
            // threads. An overflow would crash the whole test process, so the stack a level
            // takes is measured first on a large stack (385 bytes when last measured: 1,000
            // levels need 376 KiB of the 512).
            let measured = runCascade(depth: 200, stackSize: 8 << 20)
            #expect(
                measured.bytesPerLevel * 1_001 < (512 << 10) - (8 << 10),
                "a level of an immediate cascade takes \(measured.bytesPerLevel) bytes of stack: 1,000 levels would overflow 512 KiB (keep deliverNow's and the setter's frames small)"
            )
            guard measured.bytesPerLevel * 1_001 < (512 << 10) - (8 << 10) else { return }
            let result = runCascade(depth: 1_000, stackSize: 512 << 10)

            // Then all of them ran
            #expect(result.levels == 1_001)
        }
    #endif
}
