/// `@Observed` storage encodes as its value alone, so a model's `Codable` conformance uses
/// plain property names and plain values:
///
/// ```swift
/// final class Todo: ObservableModel, Codable {
///     @Observed var title = ""
///     @Observed var done = false
/// }
/// // {"title":"Buy milk","done":false}
/// ```
///
/// Swift synthesizes `Codable` for a `final` subclass of ``ObservableModel`` (the synthesized
/// `init(from:)` calls `super.init()`). A model whose superclass is itself `Codable`, or that
/// needs other keys, writes `init(from:)` and `encode(to:)` by hand with the plain property
/// names, exactly as for unwrapped properties.
///
/// Decoding creates the storage; it never notifies anyone (no token can observe an object
/// that is still being initialized).
extension Observed: Encodable where Value: Encodable {
    /// Encodes the value in a single-value container: the wrapper adds no structure.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What encoding the value throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension Observed: Decodable where Value: Decodable {
    /// Decodes the value from a single-value container, as ``encode(to:)`` wrote it.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: What decoding the value throws.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.init(wrappedValue: try container.decode(Value.self))
    }
}

// Optional properties behave as unwrapped optional properties do under synthesized `Codable`:
// a nil value is left out, and a missing key decodes as nil. Synthesized code calls
// `encode(_:forKey:)` and `decode(_:forKey:)` with the storage's type; these more specific
// overloads take the optional case.

extension KeyedEncodingContainer {
    /// Encodes an optional `@Observed` property like an optional property: nothing when nil.
    ///
    /// - Parameters:
    ///   - value: The property's storage.
    ///   - key: The property's key.
    /// - Throws: What encoding the value throws.
    public mutating func encode<Wrapped: Encodable>(_ value: Observed<Wrapped?>, forKey key: Key) throws {
        try encodeIfPresent(value.value, forKey: key)
    }
}

extension KeyedDecodingContainer {
    /// Decodes an optional `@Observed` property like an optional property: nil when the key is
    /// missing or null.
    ///
    /// - Parameters:
    ///   - type: The storage's type.
    ///   - key: The property's key.
    /// - Returns: The storage holding the decoded value or nil.
    /// - Throws: What decoding a present value throws.
    public func decode<Wrapped: Decodable>(_ type: Observed<Wrapped?>.Type, forKey key: Key) throws
        -> Observed<Wrapped?>
    {
        Observed(wrappedValue: try decodeIfPresent(Wrapped.self, forKey: key))
    }
}
