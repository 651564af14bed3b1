/// Adopt this protocol on an ``ObservableModel`` subclass to hear when a property gains its
/// first observer or loses its last.
///
/// An enterprising model can load data only while someone is interested in it:
///
/// ```swift
/// final class Forecast: ObservableModel, ObservationStateObserving {
///     @Observed var temperature = 0.0
///
///     func observationStateDidChange(forProperty property: String, isObserved: Bool) {
///         if property == "temperature" { isObserved ? startPolling() : stopPolling() }
///     }
/// }
/// ```
///
/// It is a protocol rather than a method every model inherits so that models which don't
/// adopt it pay nothing: finding a property's name takes a lookup in the class's property table
/// (built once per class, reading no values), and the library only does it for models that asked.
///
/// > Note: Called with no lock held, on the thread that created or ended the observation —
/// > possibly inside a token's `deinit`. Observing `*` counts as observing every property.
public protocol ObservationStateObserving: ObservableModelBase {
    /// Called when the number of observers of `property` goes from 0 to 1 (`isObserved` is
    /// `true`) or from 1 to 0 (`false`).
    ///
    /// - Parameters:
    ///   - property: The property's name as declared, such as `"zipCode"`.
    ///   - isObserved: `true` when the first observer arrived, `false` when the last one left.
    func observationStateDidChange(forProperty property: String, isObserved: Bool)
}
