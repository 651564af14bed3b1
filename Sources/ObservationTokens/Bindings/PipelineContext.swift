/// What one push through a pipeline carries besides the value.
struct PipelineContext {
    /// A push that must reach the destination even if the value did not change: the destination
    /// path now leads to a new object. `removeDuplicates` lets it through.
    var isRefresh = false
    /// `onApply` handlers reached by this push, run in order once the value has been applied,
    /// and dropped if a later operator stops the push.
    var afterApply: [() -> Void] = []

    /// Runs the `onApply` handlers reached by this push.
    mutating func runAfterApply() {
        guard !afterApply.isEmpty else { return }
        let handlers = afterApply
        afterApply = []
        for handler in handlers { handler() }
    }
}

/// Reads a pipeline's source now, runs its operators and hands the value that comes through to
/// `next`; calls nothing when the source is gone or unreachable in a way that has no value, or
/// an operator stopped the push.
///
/// Values are handed on, not returned: unspecialized generic code that returns an `Output?`
/// looks up `Optional<Output>`'s metadata (≈ 325 instructions) at each stage of each push.
typealias Puller<Output> =
    @Sendable (
        _ context: inout PipelineContext, _ next: (inout PipelineContext, Output) -> Void
    ) -> Void

/// One source of a pipeline: an object and what of it to watch.
struct PipelineSource {
    /// Kept alive while the pipeline is being built; tokens hold it weakly.
    let root: ObservableModelBase
    let watched: Watched

    enum Watched {
        /// A typed key path: a property, or (tracked) any key path that reads some.
        case key(TypedKey)
        /// A key path chain or a string path.
        case path(ObservedPath)
    }

    /// Creates a subscription on `root` that calls `onChange` at each delivery, adds it to the
    /// group (if any) and starts it. It has ended (and so has the group) when the path does not
    /// start at an `@Observed` property of `root`, or when `onChange` returns false.
    func makeSubscription(
        _ options: ObservationOptions, _ queue: CoalescingQueue, _ site: CreationSite, _ group: BindingGroup?,
        _ onChange: @escaping @Sendable () -> Bool, purpose: BindingSubscription.Purpose = .part
    ) -> Subscription {
        let subscription: BindingSubscription
        switch watched {
        case .key(let key):
            subscription = BindingSubscription(
                root: root, target: .key(key, options: options), options: options, queue: queue, site: site,
                group: group, purpose: purpose, push: onChange)
            group?.add(subscription)
            if subscription.isProperty {
                _ = subscription.start(root: root, key: key)
            } else {
                _ = subscription.start(root: root)
            }
        case .path(let path):
            subscription = BindingSubscription(
                root: root, target: .paths([path]), options: options, queue: queue, site: site, group: group,
                purpose: purpose, push: onChange)
            group?.add(subscription)
            _ = subscription.start(root: root)
        }
        return subscription
    }

    /// The record of the one `@Observed` property this source reads, for a binding that writes
    /// a model; nil for a path (or a key path compared at its endpoint, or one that names no
    /// `@Observed` property: its subscription will end).
    func member(_ options: ObservationOptions) -> BindingMember? {
        guard case .key(let key) = watched, !options.contains(.endpointChanges),
            let serial = key.resolveSerial(on: root)
        else { return nil }
        return BindingMember.acquire(serial: serial, on: root)
    }

    /// A subscription of `link` on this source, not started yet.
    func makeLinkSubscription(
        _ options: ObservationOptions, _ queue: CoalescingQueue, _ site: CreationSite, _ group: BindingGroup,
        _ link: BindingLink, _ member: BindingMember?, role: LinkSubscription.Role
    ) -> LinkSubscription {
        let target: Subscription.Target
        switch watched {
        case .key(let key): target = .key(key, options: options)
        case .path(let path): target = .paths([path])
        }
        return LinkSubscription(
            root: root, target: target, options: options, queue: queue, site: site, group: group, link: link,
            member: member, role: role)
    }

    /// Starts a subscription made by `makeLinkSubscription`; it ends (and its group) when the
    /// source is not an `@Observed` property of `root`, or a path that starts at one.
    func start(_ subscription: Subscription) {
        if case .key(let key) = watched, subscription.isProperty {
            _ = subscription.start(root: root, key: key)
        } else {
            _ = subscription.start(root: root)
        }
    }
}

/// The sources of a pipeline. Most pipelines have one, kept out of an array.
struct PipelineSources {
    let first: PipelineSource
    /// Empty (no allocation) unless the pipeline combines several.
    let rest: [PipelineSource]

    init(_ source: PipelineSource) {
        first = source
        rest = []
    }

    /// - Precondition: `all` is not empty.
    init(_ all: [PipelineSource]) {
        first = all[0]
        rest = Array(all.dropFirst())
    }

    var all: [PipelineSource] { [first] + rest }
}
