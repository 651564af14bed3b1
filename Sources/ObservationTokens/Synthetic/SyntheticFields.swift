/// The synthetic storages of an object (`@Computed`, `@Lazy`, `@Hybrid`), superclass ones
/// first, from its class's ``PropertyTable`` (built once per class). Reads only the storages'
/// immutable state references.
enum SyntheticFields {
    struct Field {
        let name: String
        let state: any SyntheticStateProtocol
    }

    static func fields(of object: ObservableModelBase) -> [Field] {
        PropertyTable(object).synthetic.map { Field(name: $0.name, state: $0.state(in: object)) }
    }

    /// The declared name of the property whose state is `state`, for messages.
    static func name(of state: AnyObject, in object: ObservableModelBase) -> String {
        let name = fields(of: object).first { $0.state === state }?.name ?? "<unknown>"
        return "\(type(of: object)).\(name)"
    }
}

/// How to load a synthetic storage's state from an object's memory.
protocol SyntheticLayout {
    static var valueType: Any.Type { get }
    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol
}

extension Computed: SyntheticLayout {
    static var valueType: Any.Type { Value.self }

    static func state(at address: UnsafeRawPointer) -> any SyntheticStateProtocol {
        address.assumingMemoryBound(to: Self.self).pointee.state
    }
}
