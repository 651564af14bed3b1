/// The dependencies a `@Computed` property declares (EBNObservable's style) instead of having
/// them tracked: string paths and typed key paths rooted at the model.
///
/// Each computation first reads the declared paths with tracking on — which wires an edge to
/// every storage on the way, before its value is read, as tracked reads do — and then runs the
/// compute closure with no edges wired: what the closure reads is not a dependency.
final class DeclaredDependencies<Model: ObservableModelBase>: Sendable {
    let paths: [String]
    let keyPaths: [PartialKeyPath<Model> & Sendable]
    /// The string paths, parsed on the first computation (a path is checked against an
    /// instance): nil until then; a path that failed to parse is left out after its report.
    private let parsed = Locked<[ObservedPath]?>(state: nil)

    init(paths: [String], keyPaths: [PartialKeyPath<Model> & Sendable]) {
        self.paths = paths
        self.keyPaths = keyPaths
    }

    /// Reads every declared path from `owner`. Call with tracking on, inside the computation's
    /// frame, with edges wired as reads are recorded.
    ///
    /// A string path that doesn't parse (a property that doesn't exist, a component that isn't
    /// observable) is a programming error, reported at this first use: a debug build traps
    /// naming the property, the path and the fix; a release build depends on every property of
    /// `owner` instead (`*`), so the value is recomputed more often rather than left stale.
    func read(from owner: Model, property: @autoclosure () -> String) {
        for keyPath in keyPaths { _ = owner[keyPath: keyPath] }
        for path in paths(for: owner, property: property()) { Self.read(path, from: owner) }
    }

    private func paths(for owner: Model, property: @autoclosure () -> String) -> [ObservedPath] {
        if let known = parsed.withLock({ $0 }) { return known }
        var result: [ObservedPath] = []
        for path in paths {
            do {
                let parsedPath = try StringKeyPath.parse(path, root: owner)
                if parsedPath.hasInnerWildcard {
                    _reportMisuse(
                        "@Computed \(property()) declares the dependency \"\(path)\", with a '*' before its last component: declare the paths through each property instead"
                    )
                    result.append(ObservedPath(steps: [.wildcard]))
                    continue
                }
                result.append(parsedPath)
            } catch {
                _reportMisuse(
                    "@Computed \(property()) declares the dependency \"\(path)\", which can't be observed: \(error). Fix the path, or drop `dependsOn:` to have the dependencies tracked"
                )
                result.append(ObservedPath(steps: [.wildcard]))
            }
        }
        return parsed.withLock { known in
            if let known { return known }
            known = result
            return result
        }
    }

    /// Records each step's storage (which wires its edge) before reading its value to go on.
    private static func read(_ path: ObservedPath, from owner: Model) {
        var object: ObservableModelBase = owner
        for (index, step) in path.steps.enumerated() {
            if case .wildcard = step {
                _recordObservedAccess(object, serial: PathStep.wildcardSerial, valueType: Any.self)
                return
            }
            // A synthetic property records its own read (its invalidations, since this runs
            // inside a computation).
            var isSynthetic = false
            if case .name(let name) = step { isSynthetic = PropertyTable(object).syntheticEntry(named: name) != nil }
            if !isSynthetic {
                guard let serial = step.resolveSerial(on: object) else { return }
                _recordObservedAccess(object, serial: serial, valueType: Any.self)
                if index == path.steps.count - 1 { return }
            }
            guard let (_, value) = step.readForWalk(on: object), let next = PathStep.model(in: value) else { return }
            object = next
        }
    }
}
