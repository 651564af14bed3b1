/// Where a token was created, and through which call: for debug descriptions and the debugging
/// aids (`observationReport`, the census, `dotGraph`, `breakOnInvoke()`).
///
/// Keeps the file ID's address rather than the `StaticString` (17 bytes, 24 with padding): every
/// token stores one. A `#fileID` literal lives in the binary for the whole process. The line,
/// the file ID's length, the kind of call and the options it was given share one word: 16 bytes
/// in all, as with the line and length alone, and built inline, so that a call site of literals
/// stores two constants.
@usableFromInline
struct CreationSite: @unchecked Sendable, CustomStringConvertible {  // points to immutable static text
    @usableFromInline let file: UnsafeRawPointer?
    /// The line (bits 0–31), the file ID's length (32–47), the `TokenKind` (48–55), and the
    /// options the call was given (56–62) with bit 63 set when they are known.
    @usableFromInline let bits: UInt64

    /// A site that says nothing about the call: its kind is `.unspecified`, and descriptions
    /// show the options the subscription runs with.
    @inlinable
    init(fileID: StaticString, line: UInt) {
        self.init(fileID: fileID, line: line, kind: .unspecified, passedOptions: 0)
    }

    /// A site of a call of `kind` given `options`: descriptions show that kind and those options.
    @inlinable
    init(fileID: StaticString, line: UInt, kind: TokenKind, options: ObservationOptions) {
        self.init(fileID: fileID, line: line, kind: kind, passedOptions: Self.known(options))
    }

    @inlinable
    init(fileID: StaticString, line: UInt, kind: TokenKind, passedOptions: UInt64) {
        var length: UInt64 = 0
        if fileID.hasPointerRepresentation {
            file = UnsafeRawPointer(fileID.utf8Start)
            length = UInt64(UInt16(clamping: fileID.utf8CodeUnitCount))
        } else {
            file = nil
        }
        bits =
            UInt64(UInt32(clamping: line)) | length << 32 | UInt64(kind.rawValue) << 48 | passedOptions << 56
    }

    private init(file: UnsafeRawPointer?, bits: UInt64) {
        self.file = file
        self.bits = bits
    }

    /// `options` as the site keeps them: their bits, and bit 7 for "known".
    @inlinable
    static func known(_ options: ObservationOptions) -> UInt64 {
        UInt64(truncatingIfNeeded: options.rawValue & 0x7F) | 0x80
    }

    var line: UInt32 { UInt32(truncatingIfNeeded: bits) }
    private var fileLength: Int { Int(truncatingIfNeeded: bits >> 32 & 0xFFFF) }
    /// The call that made the token.
    var kind: TokenKind { TokenKind(rawValue: UInt8(truncatingIfNeeded: bits >> 48)) ?? .unspecified }

    /// The options the call was given, if the site knows them.
    var options: ObservationOptions? {
        let passed = bits >> 56
        guard passed & 0x80 != 0 else { return nil }
        return ObservationOptions(rawValue: Int(passed & 0x7F))
    }

    /// This site, for a call of `kind`, keeping the options it knows.
    func with(kind: TokenKind) -> CreationSite {
        CreationSite(file: file, bits: bits & ~(0xFF << 48) | UInt64(kind.rawValue) << 48)
    }

    /// This site, for a call of `kind` given `options`.
    func with(kind: TokenKind, options: ObservationOptions) -> CreationSite {
        CreationSite(
            file: file, bits: bits & 0x0000_FFFF_FFFF_FFFF | UInt64(kind.rawValue) << 48 | Self.known(options) << 56)
    }

    /// `file:line`.
    @usableFromInline
    var description: String {
        let name = file.map {
            String(decoding: UnsafeRawBufferPointer(start: $0, count: fileLength), as: UTF8.self)
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
    /// `.changes` of a property (of a chain or a string path: `chain`, `path`).
    case change
    /// `observe([\.a, \.b])`, `observe(\.a, \.b)`.
    case list
    /// A ``KeyPathChain`` or a list of them, `observe(endpointOf:)`.
    case chain
    /// `.path`, `.paths`.
    case path
    /// `observeAll`.
    case all
    /// A key path that is not one `@Observed` property (computed, composed, nested), or a
    /// tracking closure (`observe { … }`, `.value`, `.changes(of:)`).
    case tracked
    /// `.whichOf`.
    case whichOf
    /// `observeWillChange`.
    case willChange
    /// An observer-lifetime observation: `tell`.
    case tell
    /// `bind`, `bindTwoWay`, a pipeline's `bind`.
    case binding
    /// A pipeline's `post`.
    case pipeline
    /// A collection's `.mutations`.
    case mutations
    /// `.element(at:)` on an `ObservedArray`.
    case element
    /// `.object(at:)` on an `ObservedArray`.
    case object
    /// `.each` on an `ObservedArray`.
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
    /// A `@Computed` property's own subscription on what its computation read: listed under
    /// each input as the property it computes; not a token, so the census leaves it out.
    case computed

    /// The word the debugging aids use.
    var label: String {
        switch self {
        case .unspecified: "property"
        case .willChange: "will-change"
        default: "\(self)"
        }
    }
}
