/// Adopt this protocol on an observer to learn when an object it observes deinitializes.
///
/// When an observed object goes away, every token rooted at it ends. If the token's observer
/// adopts this protocol, it is told once per token, on the token's queue, at its next drain —
/// also for `.immediate` tokens: the deinit may run inside another property's write (the write
/// released the object), where no user code may run.
///
/// ```swift
/// final class AddressLabel: ObservedObjectDeinitObserver {
///     var token: ObservationToken?
///     func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice) {
///         token = nil   // already ended; drop it
///     }
/// }
/// ```
public protocol ObservedObjectDeinitObserver: AnyObject {
    /// Called once for each token of this observer whose observed object deinitialized.
    func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice)
}

/// What an ``ObservedObjectDeinitObserver`` learns about an object that went away.
public struct ObservedObjectDeinitNotice: Sendable, CustomStringConvertible {
    /// The identity the object had; it may be reused by a new object from now on.
    public let objectID: ObjectIdentifier
    /// The object's dynamic type name.
    public let typeName: String
    /// What the ended observation watched on the object: property names and dotted paths
    /// (`["zipCode"]`, `["currentUser.address.zipCode"]`), as the token's description names
    /// them (EBNObservable's `endingObservation`).
    public let observedPaths: [String]
    let site: CreationSite

    /// Where the ended token was created (`file:line`).
    public var tokenCreationSite: String { site.description }

    /// The notice in one line: the object's type, what was observed, and where the token was
    /// created.
    public var description: String {
        "\(typeName) deinitialized, ending the observation of \(observedPaths.joined(separator: ", ")); token created at \(site)"
    }
}
