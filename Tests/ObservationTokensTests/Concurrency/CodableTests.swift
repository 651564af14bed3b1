import Foundation
import Testing

@testable import ObservationTokens

final class CodableTodo: ObservableModel, Codable {
    @Observed var title = ""
    @Observed var done = false
    @Observed var tags: [String] = []
    @Observed var due: Int?
}

/// A model with a hand-written conformance: what users write when synthesis doesn't fit
/// (other keys, a `Codable` superclass).
final class CodableNote: ObservableModel, Codable {
    @Observed var text: String
    @Observed var pinned = false

    enum CodingKeys: String, CodingKey {
        case text = "body"
        case pinned
    }

    init(text: String) {
        _text = Observed(wrappedValue: text)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _text = Observed(wrappedValue: try container.decode(String.self, forKey: .text))
        super.init()
        pinned = try container.decode(Bool.self, forKey: .pinned)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(pinned, forKey: .pinned)
    }
}

/// Issue 14 §4: `Observed` is `Codable` when its value is.
@Suite struct CodableTests {
    private func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func synthesizedCodableEncodesPlainPropertyNamesAndValues() throws {
        let todo = CodableTodo()
        todo.title = "Buy milk"
        todo.tags = ["home"]
        #expect(try json(todo) == #"{"done":false,"tags":["home"],"title":"Buy milk"}"#)
    }

    @Test func synthesizedCodableRoundTrips() throws {
        let todo = CodableTodo()
        todo.title = "Write"
        todo.done = true
        todo.due = 3
        let decoded = try JSONDecoder().decode(CodableTodo.self, from: Data(try json(todo).utf8))
        #expect(decoded.title == "Write")
        #expect(decoded.done)
        #expect(decoded.tags == [])
        #expect(decoded.due == 3)
    }

    @Test func decodedModelsAreObservableAndDecodingNotifiedNobody() throws {
        // Given a decoded model (nobody could observe it while it was being decoded)
        let queue = CoalescingQueue(target: .manual)
        let decoded = try JSONDecoder().decode(
            CodableTodo.self, from: Data(#"{"title":"a","done":false,"tags":[]}"#.utf8))
        #expect(queue.pendingCount == 0)

        // When it is observed and changed
        let calls = Counter()
        let token = decoded.observe(\.title, queue: queue) { _ in calls.increment() }
        decoded.title = "b"

        // Then its tokens work as for any model
        #expect(queue.drain() == 1)
        #expect(calls.value == 1)
        withExtendedLifetime(token) {}
    }

    @Test func decodingIntoAnObservedModelOfAnotherObjectDoesNotNotifyIt() throws {
        // Given a token on a property of one model
        let queue = CoalescingQueue(target: .manual)
        let todo = CodableTodo()
        let calls = Counter()
        let token = todo.observe(\.title, queue: queue) { _ in calls.increment() }

        // When another model is decoded from the first one's JSON
        _ = try JSONDecoder().decode(CodableTodo.self, from: Data(try json(todo).utf8))

        // Then nothing is pending
        #expect(queue.drain() == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aBareObservedEncodesAsItsValue() throws {
        #expect(try json(Observed(wrappedValue: 42)) == "42")
        #expect(try json(Observed(wrappedValue: "x")) == #""x""#)
        let decoded = try JSONDecoder().decode(Observed<[Int]>.self, from: Data("[1,2]".utf8))
        #expect(decoded.storedValue == [1, 2])
    }

    @Test func handWrittenCodableUsesTheWrappedProperties() throws {
        let note = CodableNote(text: "hello")
        note.pinned = true
        #expect(try json(note) == #"{"body":"hello","pinned":true}"#)
        let decoded = try JSONDecoder().decode(CodableNote.self, from: Data(try json(note).utf8))
        #expect(decoded.text == "hello")
        #expect(decoded.pinned)
    }

    @Test func malformedInputThrowsADecodingError() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(CodableTodo.self, from: Data(#"{"title":1,"done":false,"tags":[]}"#.utf8))
        }
    }
}

extension CodableTests {
    @Test func optionalPropertiesAreLeftOutWhenNilAndDecodeAsNilWhenMissing() throws {
        let todo = CodableTodo()
        #expect(try json(todo) == #"{"done":false,"tags":[],"title":""}"#)
        todo.due = 7
        #expect(try json(todo) == #"{"done":false,"due":7,"tags":[],"title":""}"#)
        let missing = try JSONDecoder().decode(
            CodableTodo.self, from: Data(#"{"title":"","done":false,"tags":[]}"#.utf8))
        #expect(missing.due == nil)
        let null = try JSONDecoder().decode(
            CodableTodo.self, from: Data(#"{"title":"","done":false,"tags":[],"due":null}"#.utf8))
        #expect(null.due == nil)
    }
}
