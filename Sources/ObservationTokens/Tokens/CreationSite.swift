/// Where a token was created, and through which call: for debug descriptions and the debugging
/// aids (`observationReport`, the census, `dotGraph`, `breakOnInvoke()`).
///
/// Keeps the file ID's address rather than the `StaticString` (17 bytes, 24 with padding): every
/// token stores one. A `#fileID` literal lives in the binary for the whole process. The kind of
/// call and the options it was given fit in the bytes the file ID's length leaves free: 16
/// bytes in all, as without them.
@usableFromInline
struct CreationSite: @unchecked Sendable, CustomStringConvertible {  // points to immutable static text
    private let file: UnsafeRawPointer?
    private let fileLength: UInt16
    /// The call that made the token.
    let kind: TokenKind
    /// The options that call was given (`ObservationOptions` bits), plus `Self.optionsKnown`.
    private let passedOptions: UInt8
    let line: UInt32

    private static let optionsKnown: UInt8 = 0x80

    /// A site that says nothing about the call: its kind is `.unspecified`, and descriptions
    /// show the options the subscription runs with.
    @usableFromInline
    init(fileID: StaticString, line: UInt) {
        self.init(fileID: fileID, line: line, kind: .unspecified, passedOptions: 0)
    }

    /// A site of a call of `kind` given `options`: descriptions show that kind and those options.
    @usableFromInline
    init(fileID: StaticString, line: UInt, kind: TokenKind, options: ObservationOptions) {
        self.init(
            fileID: fileID, line: line, kind: kind,
            passedOptions: UInt8(truncatingIfNeeded: options.rawValue & 0x7F) | Self.optionsKnown)
    }

    private init(fileID: StaticString, line: UInt, kind: TokenKind, passedOptions: UInt8) {
        if fileID.hasPointerRepresentation {
            file = UnsafeRawPointer(fileID.utf8Start)
            fileLength = UInt16(clamping: fileID.utf8CodeUnitCount)
        } else {
            file = nil
            fileLength = 0
        }
        self.line = UInt32(clamping: line)
        self.kind = kind
        self.passedOptions = passedOptions
    }

    private init(copying site: CreationSite, kind: TokenKind, passedOptions: UInt8) {
        file = site.file
        fileLength = site.fileLength
        line = site.line
        self.kind = kind
        self.passedOptions = passedOptions
    }

    /// This site, for a call of `kind`, keeping the options it knows.
    func with(kind: TokenKind) -> CreationSite {
        CreationSite(copying: self, kind: kind, passedOptions: passedOptions)
    }

    /// This site, for a call of `kind` given `options`.
    func with(kind: TokenKind, options: ObservationOptions) -> CreationSite {
        CreationSite(
            copying: self, kind: kind,
            passedOptions: UInt8(truncatingIfNeeded: options.rawValue & 0x7F) | Self.optionsKnown)
    }

    /// The options the call was given, if the site knows them.
    var options: ObservationOptions? {
        guard passedOptions & Self.optionsKnown != 0 else { return nil }
        return ObservationOptions(rawValue: Int(passedOptions & ~Self.optionsKnown))
    }

    /// `file:line`.
    @usableFromInline
    var description: String {
        let name = file.map {
            String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(fileLength)), as: UTF8.self)
        }
        return "\(name ?? "?"):\(line)"
    }
}

/// Which call made a token, as the debugging aids name it (see the table in
/// `docs/Debugging.md`). Stored in the token's ``CreationSite``.
@usableFromInline
enum TokenKind: UInt8, Sendable {
    /// Made by code that didn't say: shown as `property` or `path` from what it watches.
    case unspecified
    /// `observe(\.property)`.
    case property
    /// `observeChanges` of a property, a chain or a string path.
    case change
    /// `observe([\.a, \.b])`, `observe(\.a, \.b)`.
    case list
    /// A ``KeyPathChain`` or a list of them, `observe(endpointOf:)`.
    case chain
    /// `observe(path:)`, `observe(paths:)`.
    case path
    /// `observeAll`.
    case all
    /// A key path that is not one `@Observed` property (computed, composed, nested), or a
    /// tracking closure (`observe { … }`, `observeValue`, `observeChanges(of:)`).
    case tracked
    /// `observe(whichOf:)`.
    case whichOf
    /// `observeWillChange`.
    case willChange
    /// An observer-lifetime observation: `tell`.
    case tell
    /// `bind`, `bindTwoWay`, a pipeline's `bind`.
    case binding
    /// A pipeline's `post`.
    case pipeline
    /// A collection's `observeMutations`.
    case mutations
    /// `ObservedArray.observeElement(at:)`.
    case element
    /// `ObservedArray.observeObject(at:)`.
    case object
    /// `ObservedArray.observeEach`.
    case each
    /// `ObservedDictionary.observe(key:)`.
    case key
    /// `ObservedSet.observe(member:)`.
    case member
    /// `values(of:)`: an asynchronous sequence.
    case values
    /// `token.breakOnInvoke()`.
    case breakpoint
    /// `breakOnChange(of:)`.
    case watchpoint
    /// One of several subscriptions of another token (a binding's, a `whichOf` token's): the
    /// debugging aids show that token instead.
    case part

    /// The word the debugging aids use.
    var label: String {
        switch self {
        case .unspecified: "property"
        case .willChange: "will-change"
        default: "\(self)"
        }
    }
}
