import Foundation
import Testing

// The model-based random test of the whole library.
//
// Each test writes random programs over nodes and hubs (`ModelFixtures.swift`): stored `Int`
// properties, references, computed properties, observed collections, tokens of every kind made
// with and without `.initial` (and `.immediate`), invalidated and dropped, bindings and
// pipelines, callbacks that set properties, end tokens or release objects, objects released,
// drains of two `.manual` queues. The runner runs each program against the library;
// the reference model (`ReferenceModel.swift`, plain Swift) checks, after every operation and
// every drain, which callbacks ran, what each one read, what `drain()` returned, and when each
// object deinitialized, against the propagation rules.
//
// - Every run prints its base seed; a failure prints its program's seed, the command that
//   replays it (`OBSERVATION_TOKENS_MODEL_SEED=<seed> swift test --filter <test>`), and the
//   program shrunk to a few lines of Swift-like code.
// - `swift test` runs a fixed number of programs per group from a fixed seed (a few seconds in
//   all); `OBSERVATION_TOKENS_MODEL_SECONDS=<n>` runs for about n seconds in all, from a random
//   seed (CI's long run). `OBSERVATION_TOKENS_MODEL_BASE_SEED` fixes the base seed.
// - Feature groups localize a failure (`ModelFeatures`): stored properties only, then
//   collections, paths and tracking, bindings, callbacks that change things, two queues,
//   `.immediate`, computed values, value tokens, `combineLatest`, each alone and together.
// - Diagnostics: `OBSERVATION_TOKENS_MODEL_KEEP_GOING=1` reports the first failure of each kind
//   and goes on; `OBSERVATION_TOKENS_MODEL_IGNORE=drainCount,…` looks past known failures.
// - The threaded mode runs parallel phases: several threads, each the only writer of its own
//   properties, started together, joined, then a drain, checked like any other drain. With
//   paths, the threads also make chain tokens and end them there while other threads set what
//   the chains read (`churnChain`); those never run.
// - Groups that fail on today's main are gated by `ModelBasedConfig.propagationRulesLanded`
//   (`OBSERVATION_TOKENS_MODEL_ALL_GROUPS=1` runs them anyway).

@Suite("Model-based random programs", .serialized)
struct ModelBasedTests {
    @Test(.enabled(if: ModelBasedConfig.isEnabled([])))
    func randomProgramsOfStoredPropertiesFollowThePropagationRules() {
        ModelBasedRun.run(features: [], test: "randomProgramsOfStoredPropertiesFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.collections)))
    func randomProgramsWithObservedCollectionsFollowThePropagationRules() {
        ModelBasedRun.run(
            features: .collections, test: "randomProgramsWithObservedCollectionsFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.paths)))
    func randomProgramsWithChainsAndTrackingFollowThePropagationRules() {
        ModelBasedRun.run(features: .paths, test: "randomProgramsWithChainsAndTrackingFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.bindings)))
    func randomProgramsWithBindingsFollowThePropagationRules() {
        ModelBasedRun.run(features: .bindings, test: "randomProgramsWithBindingsFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.reentrancy)))
    func randomProgramsWithCallbacksThatChangeThingsFollowThePropagationRules() {
        ModelBasedRun.run(
            features: .reentrancy, test: "randomProgramsWithCallbacksThatChangeThingsFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.queues)))
    func randomProgramsWithTwoQueuesFollowThePropagationRules() {
        ModelBasedRun.run(features: .queues, test: "randomProgramsWithTwoQueuesFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.immediate)))
    func randomProgramsWithImmediateTokensFollowThePropagationRules() {
        ModelBasedRun.run(features: .immediate, test: "randomProgramsWithImmediateTokensFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.everythingButComputed)))
    func randomProgramsWithEverythingButComputedValuesFollowThePropagationRules() {
        ModelBasedRun.run(
            features: .everythingButComputed,
            test: "randomProgramsWithEverythingButComputedValuesFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.computed)))
    func randomProgramsWithComputedValuesFollowThePropagationRules() {
        ModelBasedRun.run(features: .computed, test: "randomProgramsWithComputedValuesFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.valueTokens)))
    func randomProgramsWithValueTokensFollowThePropagationRules() {
        ModelBasedRun.run(features: .valueTokens, test: "randomProgramsWithValueTokensFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.combineLatest)))
    func randomProgramsWithCombineLatestBindingsFollowThePropagationRules() {
        ModelBasedRun.run(
            features: .combineLatest, test: "randomProgramsWithCombineLatestBindingsFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(.all)))
    func randomProgramsWithEveryFeatureFollowThePropagationRules() {
        ModelBasedRun.run(features: .all, test: "randomProgramsWithEveryFeatureFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled([.threads, .collections, .paths, .bindings, .reentrancy, .queues])))
    func threadsSettingTheirOwnPropertiesThenADrainFollowThePropagationRules() {
        ModelBasedRun.run(
            features: [.threads, .collections, .paths, .bindings, .reentrancy, .queues],
            test: "threadsSettingTheirOwnPropertiesThenADrainFollowThePropagationRules")
    }

    @Test(.enabled(if: ModelBasedConfig.isEnabled(ModelFeatures.all.union(.threads))))
    func threadsSettingTheirOwnPropertiesWithEveryFeatureFollowThePropagationRules() {
        ModelBasedRun.run(
            features: ModelFeatures.all.union(.threads),
            test: "threadsSettingTheirOwnPropertiesWithEveryFeatureFollowThePropagationRules")
    }
}

/// Runs one test's programs: a count (plain `swift test`), a time budget, or one seed.
enum ModelBasedRun {
    /// The feature groups of the tests above, to share a time budget among the enabled ones.
    static let groups: [ModelFeatures] = [
        [], .collections, .paths, .bindings, .reentrancy, .queues, .immediate, .everythingButComputed, .computed,
        .valueTokens, .combineLatest, .all, [.threads, .collections, .paths, .bindings, .reentrancy, .queues],
        ModelFeatures.all.union(.threads),
    ]

    static func run(features: ModelFeatures, test: String) {
        let threaded = features.contains(.threads)
        let tag = "ModelBased[\(features)]"
        if let seed = ModelBasedConfig.replaySeed {
            print("\(tag): replaying program seed \(ModelBasedConfig.format(seed: seed))")
            let program = ModelProgramGenerator.program(seed: seed, features: features)
            print(program.listing())
            if let failure = ModelRunner(program: program).run() {
                report(failure, program: program, seed: seed, features: features, test: test)
            } else {
                print("\(tag): program \(ModelBasedConfig.format(seed: seed)) passed")
            }
            return
        }
        let base = ModelBasedConfig.baseSeed
        let seconds: Double? = ModelBasedConfig.timeBudget.map { total in
            total / Double(max(1, groups.filter(ModelBasedConfig.isEnabled).count))
        }
        let count = RelScale.iterations(
            threaded ? ModelBasedConfig.threadedProgramsPerGroup : ModelBasedConfig.programsPerGroup,
            tsanDivisor: threaded ? 2 : 4)
        print(
            "\(tag): base seed \(ModelBasedConfig.format(seed: base)), "
                + (seconds.map { String(format: "%.0f s budget", $0) } ?? "\(count) programs")
                + " (set OBSERVATION_TOKENS_MODEL_BASE_SEED=\(ModelBasedConfig.format(seed: base)) to run these again)")
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = seconds.map { start + .milliseconds(Int($0 * 1_000)) }
        if !ModelBasedConfig.ignoredKinds.isEmpty {
            print("\(tag): IGNORING failures of kinds \(ModelBasedConfig.ignoredKinds.map { "\($0)" }.sorted())")
        }
        var programs = 0
        var statistics = ModelRunStatistics()
        var reported: Set<String> = []
        var failed = 0
        while deadline.map({ clock.now < $0 }) ?? (programs < count) {
            let seed = ModelRandom.programSeed(base: base, index: programs)
            let program = ModelProgramGenerator.program(seed: seed, features: features)
            let runner = ModelRunner(program: program)
            if let failure = runner.run() {
                programs += 1
                guard ModelBasedConfig.keepsGoing else {
                    print("\(tag): program #\(programs - 1) (seed \(ModelBasedConfig.format(seed: seed))) failed")
                    report(failure, program: program, seed: seed, features: features, test: test)
                    return
                }
                failed += 1
                if reported.insert(failure.signature).inserted {
                    report(failure, program: program, seed: seed, features: features, test: test)
                }
                continue
            }
            programs += 1
            statistics.add(runner.statistics)
        }
        let elapsed =
            Double((clock.now - start).components.attoseconds) / 1e18
            + Double((clock.now - start).components.seconds)
        print(
            String(
                format:
                    "%@: %d programs (%d failed) in %.2f s: %.0f programs/s; %d operations (%d skipped), %d drains, %d callbacks, %d deinits, %d chain tokens made and ended in parallel phases; bindings wrote %d values, %d held before their operators, %d after, %d pushed in the drain of the push that changed their source",
                tag, programs, failed, elapsed, Double(programs) / max(elapsed, 1e-9), statistics.operations,
                statistics.skipped, statistics.drains, statistics.callbacks, statistics.deinits,
                statistics.churnedChainTokens, statistics.bindings.written, statistics.bindings.heldBeforeOperators,
                statistics.bindings.heldAfterOperators, statistics.bindings.sameDrainPushes))
    }

    private static func report(
        _ failure: ModelFailure, program: ModelProgram, seed: UInt64, features: ModelFeatures, test: String
    ) {
        let threaded = features.contains(.threads)
        // A group that is off in this configuration runs only when asked.
        let gated =
            ModelBasedConfig.propagationRulesLanded || features.isDisjoint(with: .gatedUntilPropagationLands)
            ? "" : "OBSERVATION_TOKENS_MODEL_ALL_GROUPS=1 "
        let (shrunk, shrunkFailure) = ModelShrinker.shrink(program, failure: failure, attempts: threaded ? 3 : 1)
        let text = """
            Model-based program failed (\(features)): \(shrunkFailure)
            replay: \(gated)OBSERVATION_TOKENS_MODEL_SEED=\(ModelBasedConfig.format(seed: seed)) swift test --filter ModelBasedTests/\(test)
            first failure, in the \(program.ops.count)-operation program: \(failure)
            shrunk to \(shrunk.ops.count) operations (then the runner drains until nothing is pending)\(features.contains(.computed) ? "; every callback of a property, list, chain or tracked key path token also logs its node's t (a hub's hw)" : ""):
            \(shrunk.listing())
            """
        Issue.record(Comment(rawValue: text))
    }
}
