/// How a token delivers, as an `observe` call's arguments say: the observer it works on
/// (held weakly by the token), where and when (queue, options), and the callback — already
/// wrapped for the call's isolation — erased to one shape, so that a source needs no variant per
/// delivery style.
///
/// A source hands `observer`, `options` and `queue` to the subscription it makes, and calls
/// `callback` with the observer the subscription passes at delivery (alive; nil when none was
/// given), the object, and its payload.
@usableFromInline
struct _ObservationDelivery<Root: ObservableModel, Payload> {
    @usableFromInline let observer: AnyObject?
    @usableFromInline let options: ObservationOptions
    @usableFromInline let queue: CoalescingQueue
    @usableFromInline let fileID: StaticString
    @usableFromInline let line: UInt
    @usableFromInline let callback: @Sendable (AnyObject?, Root, Payload) -> Void

    @inlinable
    init(
        observer: AnyObject?, options: ObservationOptions, queue: CoalescingQueue, fileID: StaticString, line: UInt,
        callback: @escaping @Sendable (AnyObject?, Root, Payload) -> Void
    ) {
        self.observer = observer
        self.options = options
        self.queue = queue
        self.fileID = fileID
        self.line = line
        self.callback = callback
    }

    /// Where the token was made, for a source of `kind`.
    @inlinable
    func site(_ kind: TokenKind) -> CreationSite {
        CreationSite(fileID: fileID, line: line, kind: kind, options: options)
    }
}

extension _ObservationDelivery where Payload == Void {
    /// The callback as subscriptions without a payload call it (`ErasedSubscription`).
    var general: _GeneralCallback {
        let callback = callback
        return { observer, root, _ in callback(observer, unsafeDowncast(root, to: Root.self), ()) }
    }
}
