// swift-format-ignore-file
// The code blocks of docs/Tracking.md, verbatim (see scripts/check-doc-snippets.py).

import ObservationTokens
import Testing

enum TrackingDoc {
    final class Address: ObservableModel { @Observed var zipCode = "" }
    final class User: ObservableModel { @Observed var address: Address? }
    final class UserCache: ObservableModel { @Observed var currentUser: User? }
    final class Cart: ObservableModel { @Observed var items: [String] = [] }

    final class PlainPerson: ObservableModel {
        var nickname = ""
    }
}

@Suite struct TrackingDocSnippetTests {
    @Test func theFiveKinds() {
        typealias Address = TrackingDoc.Address
        let cache = TrackingDoc.UserCache()
        let cart = TrackingDoc.Cart()
        final class Person: ObservableModel {
            @Observed var firstName = ""
            @Observed var lastName = ""
            @Observed var address: Address?
            var fullName: String { firstName + " " + lastName }
        }
        let person = Person()

        let a = person.observe(\.fullName) { person in print(person.fullName) }           // computed
        let b = cache.observe(\.currentUser?.address?.zipCode) { cache in _ = cache }             // composed
        let c = cart.observe(\.items.count) { cart in _ = cart }                                   // nested
        let d = person.observe { person in print(person.firstName + " " + person.lastName) }
        let e = person.observeValue({ $0.fullName }) { person, fullName in print(fullName) }
        #expect([a, b, c, d, e].allSatisfy { $0.isValid })
    }

    @Test func mistakesAreLoud() {
        let person = TrackingDoc.PlainPerson()
        do {
            _ = try person.observe(checking: \.nickname) { _ in }   // throws before observing
        } catch {
            print(error)   // \Person.nickname reads no @Observed property of Person: mark the property @Observed
        }
        #expect(throws: (any Error).self) { _ = try person.observe(checking: \.nickname) { _ in } }
    }
}
