extension ModelObserving where Self: ObservableModelBase {

    /// The non-inlinable half of `observe(_:observer:…)` with a chain.
    @usableFromInline
    func _observe<Value>(
        chain: KeyPathChain<Self, Value>, observer: AnyObject?, options: ObservationOptions, queue: CoalescingQueue,
        fileID: StaticString, line: UInt, kind: TokenKind = .chain, callback: @escaping _GeneralCallback
    ) -> ObservationToken {
        let isValid = checkChains([chain.steps], fileID: fileID, line: line)
        let token = makeToken(
            paths: chain.paths, observer: observer, options: isValid ? options : [], queue: queue,
            site: CreationSite(fileID: fileID, line: line, kind: kind, options: options), callback: callback)
        if !isValid { token.invalidate() }
        return token
    }

}
