/// The type-erased face of a synthetic property's state.
protocol SyntheticStateProtocol: AnyObject {
    var isValid: Bool { get }
    var serial: UInt64 { get }
    func invalidate()
    func forceValid()
}
