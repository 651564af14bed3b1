/// Why a string key path was rejected.
///
/// Every case names the offending component and, where one was involved, the type it was
/// looked up on.
///
/// ```swift
/// do {
///     let token = try cache.observe(.path("currentUser.adress.zipCode")) { _ in }
/// } catch {
///     print(error)   // unknown property 'adress' on User (component 2 of "currentUser.adress.zipCode")
/// }
/// ```
public enum KeyPathError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path is the empty string.
    case emptyPath
    /// A component between dots is empty, as in `"a..b"` or `".a"`.
    case emptyComponent(path: String, position: Int)
    /// The type has no `@Observed` property of that name.
    case unknownProperty(String, type: String, path: String, position: Int)
    /// The component follows a property whose type is not an ``ObservableModel``.
    case notObservable(String, type: String, path: String, position: Int)
    /// The component uses syntax that is reserved (collection elements) or not allowed
    /// (characters that can't appear in a Swift property name).
    case unsupportedComponent(String, path: String, position: Int)
    /// A typed key path reads no `@Observed` property, so a token on it would observe nothing
    /// (a plain `var` or `let`, or a computed property over such). `keyPath` is the key path as
    /// Swift prints it.
    case noObservedProperty(keyPath: String, type: String)
    /// A list of paths or key paths to observe together is empty.
    case emptyPathList
    /// An object-following array component (`items.4`) names an index the array doesn't have,
    /// in a call that takes the path and the object at once (`pipeline(path:)`,
    /// `tell(_:whenPath:)`); a `.path` source started there delivers once and ends instead.
    case indexOutOfRange(Int, count: Int, path: String, position: Int)
    /// A component names a dictionary key, but the dictionary's key type can't be made from
    /// the component's text (`scores.high` on a dictionary with `Int` keys). `keyType` is the
    /// key type.
    case invalidKey(String, keyType: String, path: String, position: Int)
    /// A set member's key (`&3`) that ``ObservedSet/key(for:)`` never handed out for the set's
    /// element type. `type` is the set's type.
    case unknownMemberKey(String, type: String, path: String, position: Int)
    /// A path written to (a binding's destination) ends at a property whose type is not the
    /// type of the values written: `valueType` is the property's, `writtenType` the values'.
    case wrongValueType(String, valueType: String, writtenType: String, path: String, position: Int)

    /// The error in one sentence: what was wrong, the component and the type it was looked up on.
    public var description: String {
        switch self {
        case .emptyPath:
            "empty key path"
        case .emptyComponent(let path, let position):
            "empty component \(position) in \(Self.quoted(path))"
        case .unknownProperty(let name, let type, let path, let position):
            "unknown property '\(Self.short(name))' on \(type) (component \(position) of \(Self.quoted(path)))"
        case .notObservable(let name, let type, let path, let position):
            "'\(Self.short(name))' is looked up on \(type), which is not an ObservableModelBase (component \(position) of \(Self.quoted(path)))"
        case .unsupportedComponent(let name, let path, let position):
            "unsupported component '\(Self.short(name))' (component \(position) of \(Self.quoted(path)))"
        case .noObservedProperty(let keyPath, let type):
            "\(Self.short(keyPath)) reads no @Observed property of \(type): mark the property @Observed"
        case .emptyPathList:
            "empty list of paths: a token on it would observe nothing"
        case .indexOutOfRange(let index, let count, let path, let position):
            "index \(index) is beyond the end of an array of \(count) (component \(position) of \(Self.quoted(path))); use '#\(index)' to follow the index"
        case .invalidKey(let name, let keyType, let path, let position):
            "'\(Self.short(name))' can't be a key of type \(keyType) (component \(position) of \(Self.quoted(path)))"
        case .unknownMemberKey(let name, let type, let path, let position):
            "no member of \(type) has the key '\(Self.short(name))' (component \(position) of \(Self.quoted(path))); get keys from key(for:)"
        case .wrongValueType(let name, let valueType, let writtenType, let path, let position):
            "'\(Self.short(name))' holds \(valueType), but the values written to it are \(writtenType) (component \(position) of \(Self.quoted(path))); add a map to \(valueType) before binding"
        }
    }

    /// Quotes a path for messages, shortening very long ones.
    private static func quoted(_ path: String) -> String {
        "\"\(short(path))\""
    }

    /// Shortens a very long name or path so a message stays readable.
    private static func short(_ text: String) -> String {
        text.count > 120 ? "\(text.prefix(117))..." : text
    }
}
