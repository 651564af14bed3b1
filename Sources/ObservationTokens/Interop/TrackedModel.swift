import Observation
import Synchronization

/// A model that Observation also sees: SwiftUI views, `withObservationTracking` and
/// `Observations` track its `@Observed` properties, and tokens work on it as on any model.
///
/// Subclass it instead of ``ObservableModel``; nothing else changes:
///
/// ```swift
/// import Observation
///
/// final class Profile: TrackedModel {
///     @Observed var name = ""
/// }
///
/// let profile = Profile()
/// withObservationTracking {
///     _ = profile.name
/// } onChange: {
///     print("name will change")
/// }
/// profile.name = "Ada"   // prints "name will change"
/// ```
///
/// Each `@Observed` read reports an access to the model's `ObservationRegistrar`, and each
/// real change reports a mutation (inside the setter, after the comparison that skips equal
/// values, so setting the same value notifies Observation no more than it notifies tokens).
/// Observation's `willSet`-style callbacks therefore run just *after* the new value is
/// stored, unlike with the `@Observable` macro.
///
/// > Note: **Cost.** Models that stay ``ObservableModel`` pay nothing. A `TrackedModel` keeps
/// > one `.immediate` token per `@Observed` property, created in `init` (they show in
/// > ``ModelObserving/observerCount(of:)`` and make the object count as observed), so its
/// > setters always take the observed path. While any `TrackedModel` is alive, every
/// > `@Observed` getter in the process (of any model) checks whether its object is a
/// > `TrackedModel`: one call and a class check per read.
///
/// > Note: **Threading.** As with `@Observable`, Observation's `onChange` runs on the thread
/// > that sets the property.
open class TrackedModel: ObservableModelBase, ModelObserving, Observation.Observable {
    final let observationRegistrar = ObservationRegistrar()
    /// The key paths that name each `@Observed` property in the registrar, by serial. Written
    /// once in `init`, before `self` can reach another thread; read-only after.
    private final var trackingKeyPaths: [UInt64: KeyPath<TrackedModel, UInt64>] = [:]
    /// The `.immediate` tokens that report mutations.
    private final var bridges: [ObservationToken] = []

    /// Creates a model whose `@Observed` properties Observation tracks.
    public override init() {
        super.init()
        _accessCaptureCount.add(1, ordering: .relaxed)
        liveTrackedModels.add(1, ordering: .relaxed)
        for entry in PropertyTable(self).entries {
            let serial = entry.serial(in: self)
            let keyPath = \TrackedModel.[trackingSerial: serial]
            trackingKeyPaths[serial] = keyPath
            let subscription = _ModelSubscription<TrackedModel>(
                root: self, target: .paths([ObservedPath(step: .name(entry.name))]), options: .immediate,
                queue: .main, site: CreationSite(fileID: #fileID, line: #line),
                callback: { model in
                    model.observationRegistrar.withMutation(of: model, keyPath: keyPath) {}
                })
            bridges.append(_observe(subscription))
        }
    }

    deinit {
        _accessCaptureCount.subtract(1, ordering: .relaxed)
        liveTrackedModels.subtract(1, ordering: .relaxed)
    }

    /// Names a property by its storage serial, for the registrar.
    final subscript(trackingSerial serial: UInt64) -> UInt64 { serial }

    /// Reports a read of the property with `serial` to the registrar.
    final func reportAccess(serial: UInt64) {
        guard let keyPath = trackingKeyPaths[serial] else { return }
        observationRegistrar.access(self, keyPath: keyPath)
    }
}

/// How many `TrackedModel`s are alive. A model's own reads come after its `init` counted it.
let liveTrackedModels = Atomic<Int>(0)

/// Called by `@Observed` getters while some thread captures key paths or any `TrackedModel`
/// is alive: reports the read to Observation if the object is a `TrackedModel`.
@usableFromInline
func _reportTrackedAccess(_ object: AnyObject, serial: UInt64) {
    // One load instead of a class check when no `TrackedModel` exists (tracking closures and
    // key path resolution also make getters call here).
    guard liveTrackedModels.load(ordering: .relaxed) != 0, let tracked = object as? TrackedModel else { return }
    tracked.reportAccess(serial: serial)
}
