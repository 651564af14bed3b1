/// W4: end a token by releasing it.
///
/// The second half of W3's cycle (see `CreateEndCosts`): a batch of 100 live registrations on
/// one property is ended in creation order.
/// - ours: the token is released (its deinit ends the observation);
/// - NotificationCenter: `removeObserver(_:)` for each observer token, then release;
/// - OpenCombine: the `AnyCancellable` is released (its deinit cancels).
///
/// `withObservationTracking` has no way to end a registration, so it has no W4 row.
func runW4(_ settings: Settings) -> [Row] {
    let costs = CreateEndCosts(settings)
    let title = "end a token (release it)"
    return [
        Row(
            workload: "W4", title: title, ours: costs.ours.end, peer: "NotificationCenter `removeObserver`",
            peerValue: costs.notification.end, target: .ratioAtLeast(3),
            counted: createEndCounts(peer: "W3-notification", function: "*w4measuredEnd*")),
        Row(
            workload: "W4", title: title, ours: costs.ours.end, peer: "OpenCombine `AnyCancellable` released",
            peerValue: costs.combine.end, target: .ratioAtLeast(10),
            counted: createEndCounts(peer: "W3-combine", function: "*w4measuredEnd*")),
    ]
}
