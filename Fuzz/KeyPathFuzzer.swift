// libFuzzer target for string key paths. Not part of the Swift package: scripts/fuzz-keypaths.sh
// compiles it together with Sources/ObservationTokens as one module, with
// `swiftc -sanitize=fuzzer,address`.
//
// Every input is decoded as UTF-8 (invalid bytes become U+FFFD) and observed as a string key
// path on a small cyclic object graph. The input must either resolve to a valid token, which is
// then exercised (changes along the graph, a drain, the debug description, invalidate), or
// throw a `KeyPathError` that is consistent with the input (the same path, a position that
// exists, the component found there). Anything else — a crash, an ASan report, a violated
// check, a hang past libFuzzer's -timeout — is a finding, and libFuzzer saves the input.

final class FuzzNode: ObservableModel {
    @Observed var name = ""
    @Observed var next: FuzzNode?
    @Observed var other: FuzzNode?
    @Observed var payload: Any?
    @Observed var count = 0
    @Observed var 名前 = ""
}

final class FuzzLeaf: ObservableModel {
    @Observed var zip = ""
    @Observed var owner: FuzzNode?
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyPath(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    checkKeyPath(path)
    return 0
}

private func fuzzFailure(_ message: String, _ path: String) -> Never {
    fatalError("\(message) for path \(path.debugDescription)")
}

private func checkKeyPath(_ path: String) {
    let a = FuzzNode()
    let b = FuzzNode()
    let leaf = FuzzLeaf()
    a.next = b
    b.next = a
    a.other = a
    b.payload = leaf
    leaf.owner = a
    defer {
        a.next = nil
        b.next = nil
        a.other = nil
        b.payload = nil
        leaf.owner = nil
    }
    let queue = CoalescingQueue(target: .manual)
    do {
        let token = try a.observe(.path(path), queue: queue) { _ in }
        guard !path.isEmpty else { fuzzFailure("the empty path resolved", path) }
        guard token.isValid else { fuzzFailure("resolved to an ended token", path) }
        a.name = "changed"
        b.next = b
        leaf.zip = "97210"
        a.count += 1
        _ = queue.drain()
        _ = token.debugDescription
        token.invalidate()
        _ = queue.drain()
        for object in [a, b] as [ObservableModel] + [leaf] where object.hasEdges {
            fuzzFailure("edges left after invalidate()", path)
        }
    } catch {
        checkConsistent(error, path)
    }
}

private func checkConsistent(_ error: KeyPathError, _ path: String) {
    _ = error.description
    let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    switch error {
    case .emptyPath:
        guard path.isEmpty else { fuzzFailure(".emptyPath for a non-empty path", path) }
    case .emptyComponent(let errorPath, let position):
        guard errorPath == path else { fuzzFailure("error names another path", path) }
        guard components.indices.contains(position - 1), components[position - 1].isEmpty else {
            fuzzFailure(".emptyComponent at \(position), which is not empty", path)
        }
    case .unknownProperty(let name, _, let errorPath, let position),
        .notObservable(let name, _, let errorPath, let position),
        .unsupportedComponent(let name, let errorPath, let position),
        .invalidKey(let name, _, let errorPath, let position),
        .unknownMemberKey(let name, _, let errorPath, let position):
        guard errorPath == path else { fuzzFailure("error names another path", path) }
        guard components.indices.contains(position - 1), components[position - 1] == name else {
            fuzzFailure("\(error) names a component that is not at position \(position)", path)
        }
    case .indexOutOfRange(let index, let count, let errorPath, let position):
        guard errorPath == path else { fuzzFailure("error names another path", path) }
        guard components.indices.contains(position - 1), components[position - 1] == String(index) else {
            fuzzFailure("\(error) names an index that is not at position \(position)", path)
        }
        guard index < 0 || index >= count else { fuzzFailure("\(error) for an index in range", path) }
    case .noObservedProperty, .emptyPathList, .wrongValueType:
        fuzzFailure("a string path observation threw \(error)", path)
    }
}
