/// Names of the storages a collection makes for its own tokens, which are no `@Observed`
/// property of any class: `count`, `contents` (any mutation), and the edges that index, key and
/// object tokens share. For the debugging aids' headings.
protocol CollectionDebugNames: ObservableModelBase {
    func debugName(ofSerial serial: UInt64) -> String?
}

extension ObservedArray: CollectionDebugNames {
    func debugName(ofSerial serial: UInt64) -> String? {
        switch serial {
        case observation.countSerial: "count"
        case observation.contentsSerial: "contents"
        case observation.indexersSerial: "indexes"
        case observation.followersSerial: "followed objects"
        default: nil
        }
    }
}

extension ObservedDictionary: CollectionDebugNames {
    func debugName(ofSerial serial: UInt64) -> String? {
        switch serial {
        case observation.countSerial: "count"
        case observation.contentsSerial: "contents"
        case observation.keyersSerial: "keys"
        default: nil
        }
    }
}

extension ObservedSet: CollectionDebugNames {
    func debugName(ofSerial serial: UInt64) -> String? {
        switch serial {
        case observation.countSerial: "count"
        case observation.contentsSerial: "contents"
        case observation.keyersSerial: "members"
        default: nil
        }
    }
}
