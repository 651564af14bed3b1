/// Where a token was created, for debug descriptions.
///
/// Keeps the file ID's address rather than the `StaticString` (17 bytes, 24 with padding): every
/// token stores one. A `#fileID` literal lives in the binary for the whole process.
@usableFromInline
struct CreationSite: @unchecked Sendable, CustomStringConvertible {  // points to immutable static text
    private let file: UnsafeRawPointer?
    private let fileLength: UInt32
    let line: UInt32

    @usableFromInline
    init(fileID: StaticString, line: UInt) {
        if fileID.hasPointerRepresentation {
            file = UnsafeRawPointer(fileID.utf8Start)
            fileLength = UInt32(clamping: fileID.utf8CodeUnitCount)
        } else {
            file = nil
            fileLength = 0
        }
        self.line = UInt32(clamping: line)
    }

    @usableFromInline
    var description: String {
        let name = file.map {
            String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(fileLength)), as: UTF8.self)
        }
        return "\(name ?? "?"):\(line)"
    }
}
