import ObservationTokens

// The model objects the cases observe. Each is an `ObservableModel` subclass whose observable
// stored properties are marked `@Observed`; nothing else is needed to make them observable.

/// A person with a name, and a greeting that one case derives from the name.
final class Person: ObservableModel {
    @Observed var name: String
    @Observed var greeting = ""

    init(name: String) {
        self.name = name
    }
}

/// A number that one case sets a thousand times in a row.
final class Counter: ObservableModel {
    @Observed var count = 0
}

/// Download progress, updated on a background thread and shown on the main thread.
///
/// `@unchecked Sendable`: the demo hands it to a background thread that sets `percent` while
/// the main thread only waits; the main thread reads `percent` after that thread has finished
/// (and after the coalescing queue's lock handed the delivery over), never at the same time.
final class DownloadProgress: ObservableModel, @unchecked Sendable {
    @Observed var percent = 0
}

/// A street address; `label` is a plain (unobserved) name for the timeline.
final class Address: ObservableModel {
    let label: String
    @Observed var zipCode: String

    init(_ label: String, zipCode: String) {
        self.label = label
        self.zipCode = zipCode
    }
}

/// A user whose address may be replaced or missing.
final class User: ObservableModel {
    @Observed var name: String
    @Observed var address: Address?

    init(name: String, address: Address? = nil) {
        self.name = name
        self.address = address
    }
}

/// The root of the key path cases: `cache.currentUser.address.zipCode`.
final class UserCache: ObservableModel {
    @Observed var currentUser: User?
}
