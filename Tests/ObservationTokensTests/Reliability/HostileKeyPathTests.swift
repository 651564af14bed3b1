import Testing

@testable import ObservationTokens

/// A node of a cyclic object graph with unusual property names. Used on the test's thread only.
final class RelHostileNode: ObservableModel {
    @Observed var name = ""
    @Observed var next: RelHostileNode?
    @Observed var other: RelHostileNode?
    /// Statically unknown: only run time can tell whether it holds a model.
    @Observed var payload: Any?
    @Observed var naïve = 0
    @Observed var 名前 = ""
    @Observed var 🐶 = 0
}

/// A cyclic graph: a → b → c → a through `next`, `other` back-links, and `a.payload` holding b.
/// Call `breakCycles()` at the end of a test so the graph can be freed.
struct RelHostileGraph {
    let a = RelHostileNode()
    let b = RelHostileNode()
    let c = RelHostileNode()

    init() {
        a.next = b
        b.next = c
        c.next = a
        a.other = a
        b.other = a
        c.other = b
        a.payload = b
    }

    func breakCycles() {
        for node in [a, b, c] {
            node.next = nil
            node.other = nil
            node.payload = nil
        }
    }
}

/// What a hostile path must do.
enum RelPathOutcome: Sendable, CustomTestStringConvertible {
    /// `observe(path:)` returns a valid token.
    case resolves
    /// `observe(path:)` throws exactly this error.
    case fails(KeyPathError)
    /// `observe(path:)` throws some `KeyPathError` whose path and component position are right.
    case failsSomehow

    var testDescription: String {
        switch self {
        case .resolves: "resolves"
        case .fails(let error): "throws \(String(describing: error).debugDescription)"
        case .failsSomehow: "throws a KeyPathError"
        }
    }
}

/// One hostile path, with a readable label (many of them contain invisible characters).
struct RelHostileCase: Sendable, CustomTestStringConvertible {
    let label: String
    let path: String
    let outcome: RelPathOutcome

    var testDescription: String { "\(label) \(path.debugDescription) \(outcome.testDescription)" }

    init(_ label: String, _ path: String, _ outcome: RelPathOutcome) {
        self.label = label
        self.path = path
        self.outcome = outcome
    }
}

private let node = "RelHostileNode"

/// Nasty string key paths: each one resolves or throws the typed error naming the right
/// component; none crashes or hangs.
@Suite(.timeLimit(.minutes(1))) struct HostileKeyPathTests {
    static let corpus: [RelHostileCase] = [
        RelHostileCase("empty", "", .fails(.emptyPath)),
        RelHostileCase("a dot", ".", .fails(.emptyComponent(path: ".", position: 1))),
        RelHostileCase("two dots", "..", .fails(.emptyComponent(path: "..", position: 1))),
        RelHostileCase("leading dot", ".name", .fails(.emptyComponent(path: ".name", position: 1))),
        RelHostileCase("trailing dot", "name.", .fails(.emptyComponent(path: "name.", position: 2))),
        RelHostileCase("double dot inside", "next..name", .fails(.emptyComponent(path: "next..name", position: 2))),
        RelHostileCase("dot after wildcard", "*.", .fails(.emptyComponent(path: "*.", position: 2))),
        RelHostileCase("wildcard", "*", .resolves),
        RelHostileCase("wildcard of wildcard", "*.*", .resolves),
        RelHostileCase("five wildcards", "*.*.*.*.*", .resolves),
        RelHostileCase("wildcard then name", "*.name", .resolves),
        RelHostileCase("name then wildcard", "next.*", .resolves),
        RelHostileCase("wildcards around names", "*.next.*.other.*", .resolves),
        RelHostileCase(
            "wildcard after a string", "name.*",
            .fails(.notObservable("*", type: "String", path: "name.*", position: 2))),
        RelHostileCase(
            "member of a string", "name.count",
            .fails(.notObservable("count", type: "String", path: "name.count", position: 2))),
        RelHostileCase("unknown", "nope", .fails(.unknownProperty("nope", type: node, path: "nope", position: 1))),
        RelHostileCase("case matters", "NAME", .fails(.unknownProperty("NAME", type: node, path: "NAME", position: 1))),
        RelHostileCase(
            "unknown deeper", "next.next.nope",
            .fails(.unknownProperty("nope", type: node, path: "next.next.nope", position: 3))),
        RelHostileCase("through Any", "payload.next.name", .resolves),
        RelHostileCase("cycle", "next.next.next.next.next.next.name", .resolves),
        RelHostileCase("leading space", " name", .fails(.unsupportedComponent(" name", path: " name", position: 1))),
        RelHostileCase("trailing space", "name ", .fails(.unsupportedComponent("name ", path: "name ", position: 1))),
        RelHostileCase("inner space", "na me", .fails(.unsupportedComponent("na me", path: "na me", position: 1))),
        RelHostileCase(
            "space component", "next. .name", .fails(.unsupportedComponent(" ", path: "next. .name", position: 2))),
        RelHostileCase("tab", "\tname", .fails(.unsupportedComponent("\tname", path: "\tname", position: 1))),
        RelHostileCase(
            "newline", "next.name\n", .fails(.unsupportedComponent("name\n", path: "next.name\n", position: 2))),
        RelHostileCase("CRLF", "name\r\n", .failsSomehow),
        RelHostileCase("NUL alone", "\u{0}", .fails(.unsupportedComponent("\u{0}", path: "\u{0}", position: 1))),
        RelHostileCase(
            "NUL inside", "na\u{0}me", .fails(.unsupportedComponent("na\u{0}me", path: "na\u{0}me", position: 1))),
        RelHostileCase(
            "NUL after dot", "next.\u{0}", .fails(.unsupportedComponent("\u{0}", path: "next.\u{0}", position: 2))),
        RelHostileCase("bell", "\u{7}", .failsSomehow),
        RelHostileCase("ANSI escape", "\u{1B}[31mname", .failsSomehow),
        RelHostileCase("DEL", "name\u{7F}", .failsSomehow),
        RelHostileCase("right-to-left override", "\u{202E}eman", .failsSomehow),
        RelHostileCase("byte order mark", "\u{FEFF}name", .failsSomehow),
        RelHostileCase("zero-width joiner", "name\u{200D}", .failsSomehow),
        RelHostileCase("zero-width space", "na\u{200B}me", .failsSomehow),
        RelHostileCase("fullwidth letters", "ｎａｍｅ", .failsSomehow),
        RelHostileCase("replacement character", "\u{FFFD}", .failsSomehow),
        RelHostileCase("digit", "0", .fails(.unsupportedComponent("0", path: "0", position: 1))),
        RelHostileCase("leading digit", "1name", .fails(.unsupportedComponent("1name", path: "1name", position: 1))),
        RelHostileCase("index", "next.#1", .fails(.unsupportedComponent("#1", path: "next.#1", position: 2))),
        RelHostileCase("ampersand", "&name", .fails(.unsupportedComponent("&name", path: "&name", position: 1))),
        RelHostileCase("subscript syntax", "next[0]", .failsSomehow),
        RelHostileCase("key path syntax", "\\.name", .failsSomehow),
        RelHostileCase("optional chaining", "next?.name", .failsSomehow),
        RelHostileCase("unicode name", "名前", .resolves),
        RelHostileCase("unicode name deeper", "next.other.名前", .resolves),
        RelHostileCase("precomposed ï", "na\u{EF}ve", .resolves),
        RelHostileCase("decomposed ï", "nai\u{308}ve", .resolves),
        RelHostileCase("emoji that is not a property", "😀", .failsSomehow),
        RelHostileCase("flag emoji", "next.🇨🇭", .failsSomehow),
        RelHostileCase("emoji with skin tone", "👍🏽.name", .failsSomehow),
    ]

    /// Given a cyclic graph; when each nasty path is observed (and, if it resolves, the graph
    /// changes along it and the queue drains); then it resolves or throws the expected
    /// `KeyPathError`, and the error's description is printable.
    @Test(arguments: corpus)
    func nastyPathResolvesOrThrowsTheTypedError(_ hostile: RelHostileCase) {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)

        let outcome = Self.observe(hostile.path, on: graph, queue: queue)

        switch (hostile.outcome, outcome) {
        case (.resolves, .success):
            break
        case (.fails(let expected), .failure(let error)):
            #expect(error == expected)
        case (.failsSomehow, .failure(let error)):
            Self.expectConsistent(error, for: hostile.path)
        default:
            Issue.record("\(hostile.label): expected \(hostile.outcome.testDescription), got \(outcome)")
        }
    }

    /// Past a value typed `Any`, only run time knows the object: `.path("payload.nope")` can't be
    /// refused when the source is made. Started on an object whose payload has no `nope`, a debug
    /// build traps naming the path, the component and the fix.
    #if DEBUG
        @Test func aComponentPastAnyThatTheObjectThereLacksTrapsAtStart() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let graph = RelHostileGraph()
                _ = try graph.a.observe(.path("payload.nope"), queue: CoalescingQueue(target: .manual)) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(message.contains(#"the path "payload.nope""#))
            #expect(message.contains("unknown property 'nope'"))
            #expect(message.contains("check the types of the values along it"))
        }
    #else
        /// Release builds follow the path as declared, say so once, and deliver nothing for the
        /// missing component; the token stays valid and hears the rest of the path.
        @Test func aComponentPastAnyThatTheObjectThereLacksIsLoggedAtStart() throws {
            let graph = RelHostileGraph()
            defer { graph.breakCycles() }
            let queue = CoalescingQueue(target: .manual)
            let token = try graph.a.observe(.path("payload.nope"), queue: queue) { _ in }
            #expect(token.isValid)
            let logged = "the path \"payload.nope\" observed at ObservationTokensTests/HostileKeyPathTests.swift:"
            #expect(RuntimeComponentLog.hasLogged(prefix: logged))
            token.invalidate()
        }
    #endif

    /// Past `Any`, a source is made without knowing the object: the path is checked when it is
    /// started, against the object there.
    @Test func aPathPastAnyIsMadeWithoutAnObject() {
        #expect(throws: Never.self) { _ = try ObservationSource<RelHostileNode, Void>.path("payload.nope") }
    }

    /// A property whose name is an emoji is a valid Swift identifier and is listed by
    /// `observablePropertyNames`, so a string path must be able to name it.
    @Test func emojiPropertyNameResolvesLikeAnyOtherSwiftIdentifier() {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)
        #expect(graph.a.observablePropertyNames.contains("🐶"))

        let outcome = Self.observe("next.🐶", on: graph, queue: queue)

        #expect(throws: Never.self) { try outcome.get() }
    }

    /// Given a component of 100,000 characters and a path of 100,000 dots; when observed; then
    /// each throws the typed error at once and the message stays short.
    @Test func hugeComponentsThrowWithAShortMessage() {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)
        let long = String(repeating: "a", count: 100_000)
        let dots = String(repeating: ".", count: 100_000)

        let longOutcome = Self.observe(long, on: graph, queue: queue)
        let dotsOutcome = Self.observe(dots, on: graph, queue: queue)

        #expect(throws: KeyPathError.unknownProperty(long, type: node, path: long, position: 1)) {
            try longOutcome.get()
        }
        #expect(throws: KeyPathError.emptyComponent(path: dots, position: 1)) { try dotsOutcome.get() }
        if case .failure(let error) = longOutcome { #expect(error.description.count < 300) }
    }

    static let segmentCount = RelScale.iterations(10_000, tsanDivisor: 5)

    /// Given the cyclic graph; when a path of 10,000 `next` segments is observed, a node in the
    /// middle of it is replaced and the queue drains; then the path resolves with one edge per
    /// segment, the replacement is delivered once, and the test ends within its time limit (a
    /// hang guard, not a performance figure: a linear retarget takes ~0.1 s in a debug build,
    /// the quadratic one it replaced 19–45 s).
    @Test(.timeLimit(.minutes(1)))
    func tenThousandSegmentPathResolvesAndRetargetsInBoundedTime() throws {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)
        let count = Self.segmentCount
        let path = Array(repeating: "next", count: count - 1).joined(separator: ".") + ".name"
        let token = try graph.a.observe(.path(path), queue: queue) { _ in }
        let edges = [graph.a, graph.b, graph.c].map(\.attachedEdgeCount)
        #expect(edges.reduce(0, +) == count)

        let replacement = RelHostileNode()
        replacement.next = graph.a
        graph.b.next = replacement  // c leaves the path; the walk now runs a → b → replacement → a …
        let delivered = queue.drain()

        #expect(token.isValid)
        #expect(delivered == 1)
        #expect(graph.c.attachedEdgeCount == 0)
        #expect(graph.c.observedPropertyCount == 0)
        token.invalidate()
        replacement.next = nil
        #expect([graph.a, graph.b, graph.c, replacement].allSatisfy { $0.observedPropertyCount == 0 })
    }

    static let wildcardLevels = RelScale.iterations(10_000, tsanDivisor: 5)

    /// Given the cyclic graph; when `*` repeated 10,000 times is observed; then it resolves
    /// without blowing up (each object is visited once per level), and the token ends cleanly.
    @Test func tenThousandWildcardsOverACyclicGraphResolve() throws {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)
        let path = Array(repeating: "*", count: Self.wildcardLevels).joined(separator: ".")

        let token = try graph.a.observe(.path(path), queue: queue) { _ in }

        #expect(token.isValid)
        let edges = [graph.a, graph.b, graph.c].map(\.attachedEdgeCount)
        #expect(edges.allSatisfy { $0 <= Self.wildcardLevels })
        token.invalidate()
        #expect([graph.a, graph.b, graph.c].allSatisfy { $0.observedPropertyCount == 0 })
    }

    /// Given the cyclic graph and `*` repeated 1,000 times; when a property changes and the
    /// queue drains; then the change is delivered once and the edges move without blowing up.
    @Test func wildcardsEverywhereOverACyclicGraphDeliverAChangeOnce() throws {
        let graph = RelHostileGraph()
        defer { graph.breakCycles() }
        let queue = CoalescingQueue(target: .manual)
        let path = Array(repeating: "*", count: 1_000).joined(separator: ".")
        let token = try graph.a.observe(.path(path), queue: queue) { _ in }

        graph.c.name = "changed"
        graph.b.other = graph.b
        let delivered = queue.drain()

        #expect(delivered == 1)
        #expect(token.isValid)
        token.invalidate()
    }

    // MARK: Helpers

    /// Observes `path` on `graph.a`; if it resolves, changes the graph along the way, drains,
    /// reads the debug description, and ends the token.
    static func observe(_ path: String, on graph: RelHostileGraph, queue: CoalescingQueue) -> Result<Void, KeyPathError>
    {
        let result = Result { () throws(KeyPathError) -> ObservationToken in
            try graph.a.observe(.path(path), queue: queue) { _ in }
        }
        switch result {
        case .success(let token):
            #expect(token.isValid, "\(path.debugDescription) resolved to an ended token")
            graph.b.name = "x"
            graph.b.next = graph.b
            graph.c.名前 = "y"
            _ = queue.drain()
            _ = token.debugDescription
            token.invalidate()
            return .success(())
        case .failure(let error):
            _ = error.description
            return .failure(error)
        }
    }

    /// The error names `path` and a component that really is at that position.
    static func expectConsistent(_ error: KeyPathError, for path: String) {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch error {
        case .emptyPath:
            #expect(path.isEmpty)
        case .emptyComponent(let errorPath, let position):
            #expect(errorPath == path)
            #expect(components.indices.contains(position - 1) && components[position - 1].isEmpty)
        case .unknownProperty(let name, _, let errorPath, let position),
            .notObservable(let name, _, let errorPath, let position),
            .unsupportedComponent(let name, let errorPath, let position),
            .invalidKey(let name, _, let errorPath, let position),
            .unknownMemberKey(let name, _, let errorPath, let position):
            #expect(errorPath == path)
            #expect(components.indices.contains(position - 1) && components[position - 1] == name)
        case .noObservedProperty, .emptyPathList, .wrongValueType:
            Issue.record("a string path observation never throws \(error)")
        case .indexOutOfRange(let index, _, let errorPath, let position):
            #expect(errorPath == path)
            #expect(components.indices.contains(position - 1) && components[position - 1] == String(index))
        }
    }
}
