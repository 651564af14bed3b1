extension ObservationToken {
    /// Pushes the source's current value through this token's pipeline now, on the calling
    /// thread, without setting the source.
    ///
    /// ```swift
    /// let token = user.pipeline(of: \.name).filter { !$0.isEmpty }.bind(to: label, \.text, options: [])
    /// label.text = "scratch"
    /// token.now()   // label.text == user.name again, unless the filter stops it
    /// ```
    ///
    /// Only this token's pipeline runs: nobody else observing the source hears anything, which
    /// re-setting the source would not guarantee. Every operator runs, `removeDuplicates`
    /// included. For a two-way binding, copies the receiver's value to the other side; for a
    /// group binding, copies every pair; for a plain observation, runs the callback, like
    /// ``fire()``.
    ///
    /// - Returns: Whether the token is valid and its source alive (the push ran, whether or
    ///   not an operator stopped it).
    @discardableResult
    public func now() -> Bool {
        fire()
    }
}
