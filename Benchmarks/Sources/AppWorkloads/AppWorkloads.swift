// App-shaped workloads (W17, W18, W19), shared by PeerBench (timed), ProfileTarget (our side
// under callgrind) and PeerProfile (the peers' side under callgrind), so that the timed and the
// counted code are the same code.
//
// Every measured body is a non-inlined function whose name contains `measured`, so
// `valgrind --tool=callgrind --toggle-collect='*measured*'` counts only what PeerBench times.

import ObservationTokens
import OpenCombine

#if canImport(Observation)
    import Observation
#endif

// MARK: - Shared helpers

@inline(never) @_optimize(none)
public func appBlackHole(_ value: Int) {}

@inline(never) @_optimize(none)
public func appOpaque(_ value: Int) -> Int { value }

/// A fixed-seed generator (SplitMix64), so every flavour and every run sees the same sets.
public struct SplitMix64 {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One set of W17: which model, which of its 8 properties, and a value to derive the new value
/// from. Precomputed so that the random number generation is not measured.
public struct AppSet {
    public var model: Int32
    public var property: UInt8
    public var value: Int32
}

/// `count` sets over `models` models with a fixed seed.
public func appSets(models: Int, count: Int, seed: UInt64 = 17) -> [AppSet] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in
        let bits = random.next()
        return AppSet(
            model: Int32(truncatingIfNeeded: (bits >> 32) % UInt64(models)),
            property: UInt8(truncatingIfNeeded: bits & 7),
            value: Int32(truncatingIfNeeded: (bits >> 8) & 0xFF_FFFF))
    }
}

/// Short strings (no allocation): the same for every flavour.
public let appTitles: [String] = (0..<16).map { "title \($0)" }

/// Counts callbacks. `@unchecked Sendable`: every callback of these workloads runs synchronously
/// on the thread that drives it.
public final class AppTally: @unchecked Sendable {
    public var count = 0
    public var fired: [Int] = []
    public init() {}
}

// MARK: - ObservationTokens

public final class OTItem: ObservableModel {
    @Observed public var count = 0
    @Observed public var title = ""
    @Observed public var ratio = 0.0
    @Observed public var flag = false
    @Observed public var owner: OTItem? = nil
    @Observed public var a = 0
    @Observed public var b = 0
    @Observed public var note = ""
    public override init() {}
}

/// The README idiom: a view-model that owns its tokens in a set, callbacks get it as observer.
public final class OTViewModel {
    public var tokens = Set<ObservationToken>()
    public var hits = 0

    public init(item: OTItem, queue: CoalescingQueue) {
        item.observe(\.count, observer: self, queue: queue) { viewModel, item in
            viewModel.hits &+= item.count | 1
        }
        .store(in: &tokens)
        item.observe(\.title, observer: self, queue: queue) { viewModel, item in
            viewModel.hits &+= item.title.utf8.count | 1
        }
        .store(in: &tokens)
        item.observe(.chain(KeyPathChain(\OTItem.owner).then(\.count)), observer: self, queue: queue) {
            viewModel, _, ownerCount in
            viewModel.hits &+= (ownerCount ?? 0) | 1
        }
        .store(in: &tokens)
    }
}

@inline(__always)
func apply(_ set: AppSet, to item: OTItem, items: [OTItem]) {
    let value = Int(set.value)
    switch set.property {
    case 0: item.count = value
    case 1: item.title = appTitles[value & 15]
    case 2: item.ratio = Double(value)
    case 3: item.flag = value & 1 == 0
    case 4: item.owner = value & 7 == 0 ? nil : items[value % items.count]
    case 5: item.a = value
    case 6: item.b = value
    default: item.note = appTitles[value & 15]
    }
}

/// W17, ours: 1,000 models, one view-model (3 tokens) each.
public final class W17Ours {
    public let items: [OTItem]
    public let viewModels: [OTViewModel]
    public let queue: CoalescingQueue
    public private(set) var callbacks = 0

    public init(models: Int) {
        let queue = CoalescingQueue(target: .manual)
        items = (0..<models).map { _ in OTItem() }
        viewModels = items.map { OTViewModel(item: $0, queue: queue) }
        self.queue = queue
    }

    /// Runs the ticks: `perTick` sets then one delivery each.
    @inline(never)
    public func measuredTicks(_ sets: [AppSet], perTick: Int) {
        var start = 0
        while start < sets.count {
            let end = min(start + perTick, sets.count)
            for index in start..<end {
                let set = sets[index]
                apply(set, to: items[Int(set.model)], items: items)
            }
            callbacks &+= queue.drain()
            start = end
        }
    }

    /// Breaks the owner references (they may form cycles).
    public func tearDown() {
        for item in items { item.owner = nil }
        _ = queue.drain()
    }
}

// MARK: - OpenCombine

public final class CombineItem {
    @OpenCombine.Published public var count = 0
    @OpenCombine.Published public var title = ""
    @OpenCombine.Published public var ratio = 0.0
    @OpenCombine.Published public var flag = false
    @OpenCombine.Published public var owner: CombineItem? = nil
    @OpenCombine.Published public var a = 0
    @OpenCombine.Published public var b = 0
    @OpenCombine.Published public var note = ""
    public init() {}
}

public final class CombineViewModel {
    public var cancellables = Set<AnyCancellable>()
    public var hits = 0
    /// Sink calls, including the 3 at subscription.
    public var calls = 0

    public init(item: CombineItem) {
        item.$count.sink { [unowned self] value in
            self.hits &+= value | 1
            self.calls &+= 1
        }.store(in: &cancellables)
        item.$title.sink { [unowned self] value in
            self.hits &+= value.utf8.count | 1
            self.calls &+= 1
        }.store(in: &cancellables)
        item.$owner
            .map { owner -> AnyPublisher<Int?, Never> in
                guard let owner else { return Just(nil).eraseToAnyPublisher() }
                return owner.$count.map { Optional($0) }.eraseToAnyPublisher()
            }
            .switchToLatest()
            .sink { [unowned self] value in
                self.hits &+= (value ?? 0) | 1
                self.calls &+= 1
            }
            .store(in: &cancellables)
    }
}

@inline(__always)
func apply(_ set: AppSet, to item: CombineItem, items: [CombineItem]) {
    let value = Int(set.value)
    switch set.property {
    case 0: item.count = value
    case 1: item.title = appTitles[value & 15]
    case 2: item.ratio = Double(value)
    case 3: item.flag = value & 1 == 0
    case 4: item.owner = value & 7 == 0 ? nil : items[value % items.count]
    case 5: item.a = value
    case 6: item.b = value
    default: item.note = appTitles[value & 15]
    }
}

/// W17, OpenCombine: `@Published` + `sink`; sinks run synchronously on every set.
public final class W17Combine {
    public let items: [CombineItem]
    public let viewModels: [CombineViewModel]

    public init(models: Int) {
        items = (0..<models).map { _ in CombineItem() }
        viewModels = items.map { CombineViewModel(item: $0) }
    }

    /// Sink calls so far, over all view-models.
    public var callbacks: Int { viewModels.reduce(0) { $0 &+ $1.calls } }

    @inline(never)
    public func measuredTicks(_ sets: [AppSet], perTick: Int) {
        // No delivery step: sinks already ran during the sets.
        for set in sets { apply(set, to: items[Int(set.model)], items: items) }
    }

    public func tearDown() {
        for item in items { item.owner = nil }
    }
}

// MARK: - Observation

#if canImport(Observation)
    @Observable
    public final class AppleItem {
        public var count = 0
        public var title = ""
        public var ratio = 0.0
        public var flag = false
        public var owner: AppleItem? = nil
        public var a = 0
        public var b = 0
        public var note = ""
        public init() {}
    }

    @inline(__always)
    func apply(_ set: AppSet, to item: AppleItem, items: [AppleItem]) {
        let value = Int(set.value)
        switch set.property {
        case 0: item.count = value
        case 1: item.title = appTitles[value & 15]
        case 2: item.ratio = Double(value)
        case 3: item.flag = value & 1 == 0
        case 4: item.owner = value & 7 == 0 ? nil : items[value % items.count]
        case 5: item.a = value
        case 6: item.b = value
        default: item.note = appTitles[value & 15]
        }
    }

    /// W17, Observation: one `withObservationTracking` per view-model reading the same three
    /// values; a change fires its `onChange` once; the end of the tick runs the view-model's
    /// update and re-arms it (the SwiftUI pattern).
    public final class W17Apple {
        public let items: [AppleItem]
        public let fired = AppTally()
        public private(set) var callbacks = 0
        public var hits = 0

        public init(models: Int) {
            items = (0..<models).map { _ in AppleItem() }
            for index in items.indices { arm(index) }
        }

        func arm(_ index: Int) {
            let item = items[index]
            let fired = fired
            withObservationTracking {
                appBlackHole(item.count)
                appBlackHole(item.title.utf8.count)
                appBlackHole(item.owner?.count ?? 0)
            } onChange: {
                fired.fired.append(index)
            }
        }

        @inline(never)
        public func measuredTicks(_ sets: [AppSet], perTick: Int) {
            var start = 0
            while start < sets.count {
                let end = min(start + perTick, sets.count)
                for index in start..<end {
                    let set = sets[index]
                    apply(set, to: items[Int(set.model)], items: items)
                }
                for index in fired.fired {
                    let item = items[index]
                    hits &+= (item.count | 1) &+ item.title.utf8.count &+ (item.owner?.count ?? 0)
                    callbacks &+= 1
                    arm(index)
                }
                fired.fired.removeAll(keepingCapacity: true)
                start = end
            }
        }

        public func tearDown() {
            for item in items { item.owner = nil }
            fired.fired.removeAll()
        }
    }
#endif

// MARK: - W18: one token per object

public final class OTCell: ObservableModel {
    @Observed public var value = 0
    public override init() {}
}

/// Creates one token on each (fresh) object, sets each object once, delivers, ends the tokens.
/// Returns the number of callbacks.
@inline(never)
public func measuredW18Ours(_ cells: [OTCell], queue: CoalescingQueue, tally: AppTally) -> Int {
    var tokens: [ObservationToken] = []
    tokens.reserveCapacity(cells.count)
    for cell in cells {
        tokens.append(cell.observe(\.value, queue: queue) { _ in tally.count &+= 1 })
    }
    for (index, cell) in cells.enumerated() { cell.value = index &+ 1 }
    let delivered = queue.drain()
    tokens.removeAll()
    return delivered
}

public final class CombineCell {
    @OpenCombine.Published public var value = 0
    public init() {}
}

@inline(never)
public func measuredW18Combine(_ cells: [CombineCell], tally: AppTally) -> Int {
    var cancellables: [AnyCancellable] = []
    cancellables.reserveCapacity(cells.count)
    for cell in cells {
        cancellables.append(cell.$value.dropFirst().sink { _ in tally.count &+= 1 })
    }
    let before = tally.count
    for (index, cell) in cells.enumerated() { cell.value = index &+ 1 }
    let delivered = tally.count &- before
    cancellables.removeAll()
    return delivered
}

#if canImport(Observation)
    @Observable
    public final class AppleCell {
        public var value = 0
        public init() {}
    }

    /// Observation has no "end": a registration ends when it fires (or its object dies).
    @inline(never)
    public func measuredW18Apple(_ cells: [AppleCell], tally: AppTally) -> Int {
        for cell in cells {
            withObservationTracking {
                appBlackHole(cell.value)
            } onChange: {
                tally.count &+= 1
            }
        }
        let before = tally.count
        for (index, cell) in cells.enumerated() { cell.value = index &+ 1 }
        // Deliver: the callback reads the new value.
        var sum = 0
        for cell in cells { sum &+= cell.value }
        appBlackHole(sum)
        return tally.count &- before
    }
#endif

// MARK: - W19: teardown

/// Models with a view-model's 3 live tokens each (the W17 shape), released models first or
/// tokens first.
public struct W19Ours {
    public var items: [OTItem]
    public var viewModels: [OTViewModel]

    public init(models: Int, queue: CoalescingQueue) {
        items = (0..<models).map { _ in OTItem() }
        viewModels = items.map { OTViewModel(item: $0, queue: queue) }
    }

    @inline(never)
    public static func measuredModelsFirst(_ state: inout W19Ours) {
        state.items.removeAll()
        state.viewModels.removeAll()
    }

    @inline(never)
    public static func measuredTokensFirst(_ state: inout W19Ours) {
        state.viewModels.removeAll()
        state.items.removeAll()
    }
}

public struct W19Combine {
    public var items: [CombineItem]
    public var viewModels: [CombineViewModel]

    public init(models: Int) {
        items = (0..<models).map { _ in CombineItem() }
        viewModels = items.map { CombineViewModel(item: $0) }
    }

    @inline(never)
    public static func measuredModelsFirst(_ state: inout W19Combine) {
        // (The marker call keeps the linker from folding this body into W19Ours's, which
        // compiles to the same code, and callgrind from losing it.)
        appBlackHole(19)
        state.items.removeAll()
        state.viewModels.removeAll()
    }

    @inline(never)
    public static func measuredTokensFirst(_ state: inout W19Combine) {
        appBlackHole(19)
        state.viewModels.removeAll()
        state.items.removeAll()
    }
}

#if canImport(Observation)
    /// Observation's registrations can't be cancelled by the user; they live in the object's
    /// registrar, so "tokens first" is not expressible: only the models' release is measured.
    public struct W19Apple {
        public var items: [AppleItem]

        public init(models: Int) {
            items = (0..<models).map { _ in AppleItem() }
            for item in items {
                withObservationTracking {
                    appBlackHole(item.count)
                    appBlackHole(item.title.utf8.count)
                    appBlackHole(item.owner?.count ?? 0)
                } onChange: {
                }
            }
        }

        @inline(never)
        public static func measuredModels(_ state: inout W19Apple) {
            state.items.removeAll()
        }
    }
#endif
