/// A cached property of an ``ObservableModel`` computed from other observable properties.
///
/// The compute closure sits at the declaration. Its dependencies are whatever `@Observed`
/// (or other `@Computed`) properties it read the last time it ran, on any object, so they
/// can't drift from the code. A dependency change marks the value invalid in O(1) inside the
/// setter, without recomputing; the next read recomputes it. Chains of computed properties
/// invalidate transitively.
///
/// ```swift
/// final class Person: ObservableModel {
///     @Observed var firstName = ""
///     @Observed var lastName = ""
///     @Computed({ (person: Person) in person.firstName + " " + person.lastName })
///     var fullName: String
/// }
/// ```
///
/// A computed property is observed like an `@Observed` one (`observe(\.fullName)`, tracking
/// closures over it, paths and bindings). A change of a dependency makes its tokens pending
/// without computing anything; when a token is delivered, the value is brought up to date
/// (computed once, however many tokens read it) and the token runs only if the value differs
/// from the one *that token* last saw (`===` for class references, `==` for `Equatable` values;
/// other values count as changed whenever a dependency changed). A token on the computed value
/// and a token on one of its inputs run in the same drain, and each reads final values.
/// `.immediate` tokens on it run inside the setter of the input, after the value is recomputed
/// there, only when it changed for them.
///
/// > Note: The value is cached under a lock of its own; the compute closure runs with no lock
/// > held. A valid value of a plain type of at most 32 bytes (`Int`, `Double`, `Bool`, small
/// > enums and optionals of them, points, sizes, rectangles) is read without the lock. Two
/// > threads reading an invalid value at once may both compute it; both results are from
/// > current inputs, and only a result computed with no invalidation since it started is marked
/// > valid. An object the computation read that deinitializes invalidates the value. A cycle
/// > between computed properties is a programming error: a debug build traps naming the
/// > property; a release build logs once and returns the last cached value (or the type's empty
/// > value — `nil`, `0`, `""`, `[]` — when there is none).
///
/// - Complexity: A read of a valid value is a few loads for plain values, one lock round trip
///   otherwise; an invalidation is O(1) per invalidated property.
@propertyWrapper
public struct Computed<Model: ObservableModelBase, Value> {
    /// The `ComputedState<Model, Value>`, typed `AnyObject` so inlinable code can load it.
    @usableFromInline
    let stateObject: AnyObject

    var state: ComputedState<Model, Value> { unsafeDowncast(stateObject, to: ComputedState<Model, Value>.self) }

    /// Declares a computed property.
    ///
    /// - Parameters:
    ///   - compute: Computes the value from the model; its reads are its dependencies.
    public init(_ compute: @escaping @Sendable (Model) -> Value) {
        stateObject = ComputedState(compute: compute)
    }

    /// Declares a computed property whose dependencies are the paths you list, as
    /// EBNObservable's synthetic properties had them, instead of what its computation reads.
    ///
    /// ```swift
    /// final class Badge: ObservableModel {
    ///     @Observed var owner: Person?
    ///     @Observed var title = ""
    ///     @Computed(dependsOn: ["owner.firstName", "title"], { (badge: Badge) in
    ///         badge.title + " " + (badge.owner?.firstName ?? "")
    ///     })
    ///     var label: String
    /// }
    /// ```
    ///
    /// A path may start nil, or pass through `nil` later: it is followed again as its objects
    /// are replaced, like an observed path. A path that can't be observed (a property that
    /// doesn't exist, a value that isn't a model) is a programming error found at the first
    /// computation: a debug build traps naming the property and the path; a release build makes
    /// the property depend on every property of its object instead.
    ///
    /// > Important: What the computation reads is *not* a dependency: a property it reads but
    /// > you did not list leaves the value stale when it changes. Prefer the tracking
    /// > initializer, whose dependencies can't drift from the code.
    ///
    /// - Parameters:
    ///   - paths: String key paths rooted at the model (`"owner.firstName"`, `"items.count"`,
    ///     `"owner.*"`); `*` only as a path's last component.
    ///   - compute: Computes the value from the model.
    public init(
        dependsOn paths: [String], _ compute: @escaping @Sendable (Model) -> Value
    ) {
        stateObject = ComputedState(
            declared: DeclaredDependencies(paths: paths, keyPaths: []), compute: compute)
    }

    /// Declares a computed property whose dependencies are what the typed key paths you list
    /// read, instead of what its computation reads (as the string-path initializer does).
    ///
    /// ```swift
    /// @Computed(dependsOn: [\TypedBadge.owner?.firstName, \TypedBadge.title], { (badge: TypedBadge) in
    ///     badge.title + " " + (badge.owner?.firstName ?? "")
    /// })
    /// var label: String
    /// ```
    ///
    /// - Parameters:
    ///   - keyPaths: Typed key paths rooted at the model. Each is applied at every computation;
    ///     every `@Observed` or computed property it reads is a dependency.
    ///   - compute: Computes the value from the model.
    public init(
        dependsOn keyPaths: [PartialKeyPath<Model> & Sendable],
        _ compute: @escaping @Sendable (Model) -> Value
    ) {
        stateObject = ComputedState(
            declared: DeclaredDependencies(paths: [], keyPaths: keyPaths), compute: compute)
    }

    /// Not available: `@Computed` works only inside ``ObservableModel`` subclasses.
    @available(*, unavailable, message: "@Computed can only be used on properties of an ObservableModelBase subclass")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
    }

    /// Whether the cached value is valid (a read returns it without computing).
    public var isValid: Bool { state.isValid }

    /// Marks the value invalid, and the computed properties that read it too.
    public func invalidate() { state.invalidate() }

    /// Reads the property: the cached value if valid, a new computation otherwise.
    @inlinable @inline(__always)
    public static subscript(
        _enclosingInstance object: Model,
        wrapped wrappedKeyPath: KeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        _readSynthetic(Unmanaged.passUnretained(object[keyPath: storageKeyPath].stateObject), object)
    }
}
