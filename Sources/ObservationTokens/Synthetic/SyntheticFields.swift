@_spi(Reflection) import Swift

/// The synthetic storages of an object, found from its class's field records (superclass
/// ones first). Reads only the storages' immutable state references.
enum SyntheticFields {
    struct Field {
        let name: String
        let state: any SyntheticStateProtocol
    }

    static func fields(of object: ObservableModel) -> [Field] {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        var fields: [Field] = []
        _ = _forEachField(of: type(of: object), options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
            guard let storage = fieldType as? any SyntheticLayout.Type else { return true }
            let label = String(cString: name)
            fields.append(
                Field(
                    name: label.hasPrefix("_") ? String(label.dropFirst()) : label,
                    state: storage.state(at: base + offset)))
            return true
        }
        return fields
    }

    /// The declared name of the property whose state is `state`, for messages.
    static func name(of state: AnyObject, in object: ObservableModel) -> String {
        let name = fields(of: object).first { $0.state === state }?.name ?? "<unknown>"
        return "\(type(of: object)).\(name)"
    }
}

/// How to load a synthetic storage's state from an object's memory.
protocol SyntheticLayout {
    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol
}

extension Computed: SyntheticLayout {
    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol {
        address.assumingMemoryBound(to: Self.self).pointee.state
    }
}
