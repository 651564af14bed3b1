import Testing

@testable import ObservationTokens

// Fixtures start with `Table` so they can't clash with those of other suites.

/// A plain class: a reference that is not a model.
final class TableBox: Sendable {}

enum TableMode: Sendable { case on, off }

/// `@Observed` storages of every kind of value beside fields of every kind that are not
/// storages: classes, enums, optionals, tuples, functions, atomics-like structs.
///
/// `@unchecked Sendable`: each test touches its own instance on one thread.
class TableMixed: ObservableModel, @unchecked Sendable {
    var plainInt = 0
    let box = TableBox()
    var mode = TableMode.on
    var maybe: Int? = nil
    var pair = (1, "one")
    var action: () -> Void = {}
    @Observed var count = 0
    @Observed var anything: Any? = nil
    @Observed var anyObject: AnyObject? = nil
    @Observed var owner: TableMixed? = nil
    @Observed var ownerTwice: TableMixed?? = nil
    @Observed var items: [TableMixed] = []
    @Observed var tuple = (0, 0)
}

/// A subclass: its own storages come after its superclass's.
final class TableMixedChild: TableMixed, @unchecked Sendable {
    var childPlain = ""
    @Observed var childCount = 0
}

/// A model class's table of properties: its `@Observed` storages found from the class, in
/// declaration order, superclass ones first, and nothing else.
@Suite("Property table: fields of every kind")
struct PropertyTableFieldTests {
    /// Given a class with storages and plain fields of every kind of type, when its table is
    /// built, then it lists exactly the storages, and knows which can hold a model.
    @Test func tableListsOnlyObservedStoragesWhateverTheOtherFields() {
        // Given / When
        let table = PropertyTable.of(TableMixed.self)

        // Then
        #expect(
            table.entries.map(\.name) == ["count", "anything", "anyObject", "owner", "ownerTwice", "items", "tuple"])
        #expect(table.entries.map(\.mayHoldModel) == [false, true, true, true, true, false, false])
        #expect(table.synthetic.isEmpty)
    }

    /// Given a subclass, when its table is built, then the superclass's storages come first and
    /// the base class's own bookkeeping fields never appear.
    @Test func subclassTableListsSuperclassStoragesFirst() {
        // Given / When
        let table = PropertyTable.of(TableMixedChild.self)

        // Then
        #expect(
            table.entries.map(\.name) == [
                "count", "anything", "anyObject", "owner", "ownerTwice", "items", "tuple", "childCount",
            ])
        #expect(TableMixedChild().observablePropertyNames.last == "childCount")
    }

    /// Given a subclass's storage after plain fields, when a token observes it, then the change
    /// is delivered (the table found the storage and its serial).
    @Test func aTokenOnAStorageAfterPlainFieldsIsDelivered() {
        // Given
        let queue = CoalescingQueue(target: .manual)
        let model = TableMixedChild()
        let calls = CoreCounter()
        let token = model.observe(\.childCount, queue: queue) { _ in calls.increment() }

        // When
        model.childCount = 1
        queue.drain()

        // Then
        #expect(calls.value == 1)
        withExtendedLifetime(token) {}
    }

    /// The process's tables are kept by class in a hash table of their own: every class's table
    /// is found again, however many there are (the table grows past its first size twice
    /// here), and a class not built is not found.
    @Test func everyClassFindsItsOwnTableAmongMany() {
        // Given the tables of twelve classes, built into an empty hash table.
        let classes: [ObservableModelBase.Type] = [
            TableMixed.self, TableMixedChild.self, TrackPerson.self, TrackAddress.self, TrackNode.self,
            TrackSettings.self, MNode.self, MHub.self, BindPerson.self, BindCard.self, PathUser.self, PathHub.self,
        ]
        var tables = PropertyTable.Tables()
        for type in classes { tables.insert(PropertyTable.Contents(building: type)) }

        // Then each class finds its own table, and a class without one finds none.
        #expect(tables.count == classes.count)
        for type in classes { #expect(tables[ObjectIdentifier(type)]?.id == ObjectIdentifier(type)) }
        #expect(tables[ObjectIdentifier(CorePerson.self)] == nil)
    }
}
