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
    /// The cascade thread's stack, taken before the cascade starts.
    var stack: (low: UInt, size: UInt) = (0, 0)

    /// Whether both addresses are on the cascade thread's own stack, the deepest below the first.
    var addressesAreOnTheStack: Bool {
        bottom >= stack.low && top > bottom && top - stack.low < stack.size
    }
}

@inline(never)
func cascadeStackAddress() -> UInt {
    var marker = 0
    return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}

/// The calling thread's stack as its thread attributes give it: lowest address and size.
func cascadeThreadStack() -> (low: UInt, size: UInt) {
    #if canImport(Darwin)
        let high = UInt(bitPattern: pthread_get_stackaddr_np(pthread_self()))
        let size = UInt(pthread_get_stacksize_np(pthread_self()))
        return (high - size, size)
    #else
        // `pthread_getattr_np` is a GNU extension the Glibc module doesn't declare.
        typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pthread_getattr_np") else { return (0, 0) }
        var attributes = pthread_attr_t()
        guard unsafeBitCast(symbol, to: GetAttributes.self)(pthread_self(), &attributes) == 0 else { return (0, 0) }
        defer { pthread_attr_destroy(&attributes) }
        var low: UnsafeMutableRawPointer?
        var size = 0
        guard pthread_attr_getstack(&attributes, &low, &size) == 0 else { return (0, 0) }
        return (UInt(bitPattern: low), UInt(size))
    #endif
}

/// Whether `address` lies on the calling thread's own stack.
func cascadeIsOnThisThreadsStack(_ address: UInt) -> Bool {
    let stack = cascadeThreadStack()
    return address >= stack.low && address - stack.low < stack.size
}

/// Whether the distance between two locals' addresses measures the stack a cascade takes
/// against the bounds below. Not under AddressSanitizer (its runtime exports `__asan_init`):
/// its "fake stacks" keep such locals on the heap, to catch a use after return, so the distance
/// means nothing (it once wrapped around and trapped), and even with them switched off its
/// redzones make every frame far larger than any build the bounds are for. Nor in any build
/// whose locals are found off the thread's stack.
let cascadeStackIsMeasurable =
    dlsym(dlopen(nil, RTLD_NOW), "__asan_init") == nil && cascadeIsOnThisThreadsStack(cascadeStackAddress())

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

@Suite(
    "Immediate cascades",
    .disabled(
        if: !cascadeStackIsMeasurable,
        "AddressSanitizer keeps locals on fake stacks and pads every frame, so the stack a level takes can't be measured"
    ))
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
            probe.stack = cascadeThreadStack()
            probe.top = cascadeStackAddress()
            links[0].value = 1
        }
        withExtendedLifetime((links, tokens)) {}
        // The stack grows down: the deepest level's local is below the first one's.
        #expect(
            probe.addressesAreOnTheStack,
            "the cascade's locals were not on its thread's stack (top \(probe.top), bottom \(probe.bottom), stack \(probe.stack))"
        )
        guard probe.addressesAreOnTheStack else { return (probe.levels, Int.max) }
        return (probe.levels, Int(probe.top - probe.bottom) / depth)
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
