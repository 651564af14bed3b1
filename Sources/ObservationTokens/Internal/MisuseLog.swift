#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes a programming error's message to standard error, in a release build, where
/// `_reportMisuse` does not stop the program: the library carries on as documented for that
/// misuse, and says so once where it happens (callers keep their own "once").
func _logMisuse(_ message: String) {
    #if !DEBUG
        // File descriptor 2, not the C `stderr` global: Swift 6 rejects a reference to that
        // mutable global as not concurrency-safe.
        var line = "ObservationTokens: \(message)\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    #endif
}
