/// What a release build can return for a value it has no way to compute: `nil` for optionals,
/// the empty collection or string, zero, `false`; plain-bits types zero-filled.
enum EmptyValue {
    static func make<Value>(_: Value.Type) -> Value? {
        if let optional = Value.self as? any ExpressibleByNilLiteral.Type {
            return optional.init(nilLiteral: ()) as? Value
        }
        if let collection = Value.self as? any RangeReplaceableCollection.Type { return collection.init() as? Value }
        if let set = Value.self as? any SetAlgebra.Type { return set.init() as? Value }
        if let dictionary = Value.self as? any ExpressibleByDictionaryLiteral.Type {
            return emptyDictionary(dictionary) as? Value
        }
        if let number = Value.self as? any AdditiveArithmetic.Type { return number.zero as? Value }
        if _isPOD(Value.self) {
            // Zero bits: a valid value of every plain type made of numbers, booleans and
            // enums without payloads (their first case).
            return withUnsafeTemporaryAllocation(of: Value.self, capacity: 1) { buffer in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw.initializeMemory(as: UInt8.self, repeating: 0)
                return buffer.baseAddress!.move()
            }
        }
        return nil
    }

    private static func emptyDictionary<D: ExpressibleByDictionaryLiteral>(_: D.Type) -> D { [:] }
}
