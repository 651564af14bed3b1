import Foundation
import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

// The same tiny models in every flavour, plus one non-inlined setter per flavour.
//
// Each measured loop calls a setter through an `@inline(never)` function with a value derived
// from the loop index. Without that call the optimizer may keep only the last store of a loop
// to a plain stored property (the baseline of W1 would then cost nothing). The call costs the
// same for every flavour; `callFloor` in W1 reports it so readers can subtract it.

// MARK: - Counting callbacks

/// Counts callbacks, so every benchmark can check that it did the work it claims.
///
/// `@unchecked Sendable`: each benchmark runs on one thread, and every callback it counts runs
/// synchronously on that thread (manual-queue drains, synchronous sinks, posts, and
/// `withObservationTracking` change handlers), so `count` is never accessed concurrently.
final class Tally: @unchecked Sendable {
    var count = 0
}

// MARK: - ObservationTokens

final class OTCounter: ObservableModel {
    @Observed var value = 0
}

/// Depth-3 path `root.middle.leaf.value` for W8.
final class OTRoot: ObservableModel {
    @Observed var middle = OTMiddle()
}

final class OTMiddle: ObservableModel {
    @Observed var leaf = OTLeaf()
}

final class OTLeaf: ObservableModel {
    @Observed var value = 0
}

@inline(never)
func setOurs(_ model: OTCounter, _ value: Int) { model.value = value }

// MARK: - Plain stored property (W1 baseline)

final class PlainCounter {
    var value = 0
}

@inline(never)
func setPlain(_ model: PlainCounter, _ value: Int) { model.value = value }

/// The floor of every per-operation loop: the same non-inlined call with an empty body
/// (`@_optimize(none)`, or the optimizer would delete calls to a function that does nothing).
@inline(never) @_optimize(none)
func setNothing(_ model: PlainCounter, _ value: Int) {}

// MARK: - Apple's Observation

#if canImport(Observation)
    /// `@unchecked Sendable`: the `Observations` async sequence captures the model in a `@Sendable`
    /// closure. W2 hands the model to one detached task and waits for it; no two threads ever touch
    /// it at once.
    @Observable
    final class AppleCounter: @unchecked Sendable {
        var value = 0
    }

    @Observable
    final class AppleRoot {
        var middle = AppleMiddle()
    }

    @Observable
    final class AppleMiddle {
        var leaf = AppleLeaf()
    }

    @Observable
    final class AppleLeaf {
        var value = 0
    }

    @inline(never)
    func setApple(_ model: AppleCounter, _ value: Int) { model.value = value }
#endif

/// Why a row has no Observation number, when the toolchain lacks the module.
let appleUnavailable = "the Observation module is not available on this toolchain"

// MARK: - OpenCombine

final class CombineCounter {
    @OpenCombine.Published var value = 0
}

final class CombineRoot {
    @OpenCombine.Published var middle = CombineMiddle()
}

final class CombineMiddle {
    @OpenCombine.Published var leaf = CombineLeaf()
}

final class CombineLeaf {
    @OpenCombine.Published var value = 0
}

@inline(never)
func setCombine(_ model: CombineCounter, _ value: Int) { model.value = value }

// MARK: - NotificationCenter

/// A model that announces changes the Foundation way: set, then post.
final class NotifyingCounter {
    static let didChange = Notification.Name("PeerBench.NotifyingCounter.didChange")

    let center: NotificationCenter
    var value = 0

    init(center: NotificationCenter) {
        self.center = center
    }
}

@inline(never)
func setNotifying(_ model: NotifyingCounter, _ value: Int) {
    model.value = value
    model.center.post(name: NotifyingCounter.didChange, object: model)
}
