/// Decides whether a set changed a value: `===` for class references (also inside an
/// `Optional`), `==` for `Equatable` values, and "always changed" for everything else.
///
/// Class references are compared by identity even when the class is `Equatable`: replacing a
/// model with a distinct but equal one must still retarget key paths that run through it.
@inlinable
func _valuesAreIdentical<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
    if Value.self is AnyObject.Type {
        return (lhs as AnyObject) === (rhs as AnyObject)
    }
    if let left = lhs as? any _OptionalReference, type(of: left)._wrapsClass {
        let right = rhs as? any _OptionalReference
        return left._reference === right?._reference
    }
    if let left = lhs as? any Equatable {
        return isEqual(left, rhs)
    }
    return false
}

/// `_valuesAreIdentical` for values already erased to `Any` (path endpoints).
func anyValuesAreIdentical(_ lhs: Any, _ rhs: Any) -> Bool {
    func open<T>(_ left: T) -> Bool {
        guard let right = rhs as? T else { return false }
        return _valuesAreIdentical(left, right)
    }
    return _openExistential(lhs, do: open)
}

@usableFromInline
func isEqual<T: Equatable>(_ lhs: T, _ rhs: Any) -> Bool {
    guard let rhs = rhs as? T else { return false }
    return lhs == rhs
}

/// Lets the identity check see through `Optional` to a class reference.
@usableFromInline
protocol _OptionalReference {
    static var _wrapsClass: Bool { get }
    var _reference: AnyObject? { get }
}

extension Optional: _OptionalReference {
    @usableFromInline
    static var _wrapsClass: Bool { Wrapped.self is AnyObject.Type }

    @usableFromInline
    var _reference: AnyObject? {
        guard case .some(let wrapped) = self, Wrapped.self is AnyObject.Type else { return nil }
        return wrapped as AnyObject
    }
}

/// `_valuesAreIdentical` for `Equatable` values, with `==` dispatched statically. Class
/// references (also optional ones) still compare by identity.
@inlinable @inline(__always)
func _equatableValuesAreIdentical<Value: Equatable>(_ lhs: Value, _ rhs: Value) -> Bool {
    if Value.self is AnyObject.Type {
        return (lhs as AnyObject) === (rhs as AnyObject)
    }
    if let optional = Value.self as? any _OptionalReference.Type, optional._wrapsClass {
        return _valuesAreIdentical(lhs, rhs)
    }
    return lhs == rhs
}
