// Shrinks a failing program by delta debugging over its operations (Zeller's ddmin, then
// single removals until no operation can go), keeping the kind of failure, so the report is a
// short program that still shows the same defect.

enum ModelShrinker {
    /// The shortest program found that fails with the same kind, and its failure.
    ///
    /// - Parameters:
    ///   - attempts: Runs per candidate (threaded programs may fail only sometimes).
    ///   - budget: The most candidate runs.
    static func shrink(
        _ program: ModelProgram, failure: ModelFailure, attempts: Int = 1, budget: Int = 4_000
    ) -> (ModelProgram, ModelFailure) {
        var runs = 0
        var best = (program, failure)
        func failing(_ ops: [ModelOp]) -> Bool {
            guard runs < budget else { return false }
            let candidate = ModelProgram(features: program.features, ops: ops)
            for _ in 0..<attempts {
                runs += 1
                if let found = ModelRunner(program: candidate).run(), found.signature == failure.signature {
                    if ops.count <= best.0.ops.count { best = (candidate, found) }
                    return true
                }
            }
            return false
        }

        var ops = ddmin(program.ops, failing)
        // Parallel phases: first try them as plain sequential code, then shrink inside them.
        var index = 0
        while index < ops.count {
            guard case .parallel(let threads) = ops[index] else {
                index += 1
                continue
            }
            var sequential = ops
            sequential.replaceSubrange(index...index, with: threads.flatMap { $0 })
            if failing(sequential) {
                ops = sequential
                continue
            }
            let pairs = threads.enumerated().flatMap { thread, ops in ops.map { (thread, $0) } }
            let kept = ddmin(pairs.map { ThreadOp(thread: $0.0, op: $0.1) }) { kept in
                var candidate = ops
                candidate[index] = .parallel(rebuild(kept, threads: threads.count))
                return failing(candidate)
            }
            ops[index] = .parallel(rebuild(kept, threads: threads.count))
            index += 1
        }
        ops = ddmin(ops, failing)
        // The final program, run once more so the failure printed is its own.
        _ = failing(ops)
        return best
    }

    private struct ThreadOp {
        let thread: Int
        let op: ModelOp
    }

    private static func rebuild(_ ops: [ThreadOp], threads: Int) -> [[ModelOp]] {
        var result: [[ModelOp]] = Array(repeating: [], count: threads)
        for item in ops { result[item.thread].append(item.op) }
        return result
    }

    /// ddmin, then single removals to a fixed point: the result fails and no single element
    /// can be removed from it.
    static func ddmin<T>(_ input: [T], _ fails: ([T]) -> Bool) -> [T] {
        var items = input
        var granularity = 2
        while items.count >= 2 {
            let chunk = (items.count + granularity - 1) / granularity
            var reduced = false
            var start = 0
            while start < items.count {
                let end = min(start + chunk, items.count)
                var complement = items
                complement.removeSubrange(start..<end)
                if fails(complement) {
                    items = complement
                    granularity = max(granularity - 1, 2)
                    reduced = true
                    break
                }
                start = end
            }
            if !reduced {
                if granularity >= items.count { break }
                granularity = min(granularity * 2, items.count)
            }
        }
        var changed = true
        while changed {
            changed = false
            var index = items.count - 1
            while index >= 0 {
                var candidate = items
                candidate.remove(at: index)
                if fails(candidate) {
                    items = candidate
                    changed = true
                }
                index -= 1
            }
        }
        return items
    }
}
