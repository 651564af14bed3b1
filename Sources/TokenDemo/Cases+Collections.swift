import ObservationTokens

// Observed collections: an `ObservedArray` held in an `@Observed` property, observed by its
// count, by index, by object, and as a change list for a table view.

/// A row of a table.
final class Row: ObservableModel, CustomStringConvertible {
    @Observed var title: String

    init(_ title: String) {
        _title = Observed(wrappedValue: title)
    }

    var description: String { title }
}

/// A screen's model: its rows.
final class Inbox: ObservableModel {
    @Observed var rows: ObservedArray<Row> = []
}

extension DemoCase {
    static let collectionCases: [DemoCase] = [objectVersusIndexFollowing, tableViewChanges]

    static let objectVersusIndexFollowing = DemoCase(
        "object-vs-index-following",
        group: .collections,
        summary: "Follow the object that is at index 1, or whatever is at index 1.",
        shows: """
            two ways to watch an array element. Object-following (`.object(at: 1)`, path \
            `rows.1`) follows the object as it moves and fires once, when it leaves; then the token \
            ends. Index-following (`.element(at: 1)`, path `rows.#1`) fires whenever the \
            element at index 1 changes, and never for changes after it.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let inbox = Inbox()
        let (a, b, c) = (Row("a"), Row("b"), Row("c"))
        inbox.rows.append(contentsOf: [a, b, c])
        let seen = Recorder<String>()
        timeline.step("inbox.rows = [a, b, c]")

        let objectToken = inbox.rows.observe(.object(at: 1), queue: queue) { _, row in
            seen.append("object: \(row?.title ?? "?") left")
            timeline.callback("object-following: \(row?.title ?? "?") left the array")
        }
        let indexToken = inbox.rows.observe(.element(at: 1), queue: queue) { rows in
            let now = rows[ifPresent: 1]?.title ?? "nothing"
            seen.append("index: \(now)")
            timeline.callback("index-following: rows[1] is now \(now)")
        }
        timeline.step(".object(at: 1) follows b; .element(at: 1) watches index 1")

        inbox.rows.insert(Row("new"), at: 0)
        timeline.step("rows.insert(new, at: 0)  → [new, a, b, c]: b moved to 2, a is at 1")
        timeline.endTick(draining: queue)

        inbox.rows.append(Row("d"))
        timeline.step("rows.append(d)  — after index 1, and b is still there: nothing fires")
        timeline.endTick(draining: queue)

        inbox.rows.move(from: 2, to: 3)
        timeline.step("rows.move(from: 2, to: 3)  → [new, a, c, b, d]: a move of b does not fire")
        timeline.endTick(draining: queue)

        inbox.rows.removeAll { $0 === b }
        timeline.step("rows.removeAll { $0 === b }  — b leaves")
        timeline.endTick(draining: queue)
        timeline.note("object-following token valid: \(objectToken.isValid)")

        inbox.rows.remove(at: 0)
        timeline.step("rows.remove(at: 0)  → [a, c, d]: index 1 changes again")
        timeline.endTick(draining: queue)

        timeline.expect(
            "index-following fired for the insert and the removal before it; object-following once, when b left",
            seen.values, equals: ["index: a", "object: b left", "index: c"])
        timeline.expect("the object-following token ended after it fired", objectToken.isValid, equals: false)
        withExtendedLifetime((indexToken, c)) {}
    }

    static let tableViewChanges = DemoCase(
        "table-view-changes",
        group: .collections,
        summary: "One callback per tick with the removed, inserted and replaced indexes.",
        shows: """
            `.mutations` delivers what changed since its last callback, folded over the tick, \
            in UIKit's batch-update shape: removed and replaced indexes as they were, inserted \
            indexes as they are now. Feed it to `performBatchUpdates` or a diffable snapshot.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let inbox = Inbox()
        inbox.rows.append(contentsOf: ["a", "b", "c", "d"].map(Row.init))
        let seen = Recorder<ArrayChanges>()
        timeline.step("inbox.rows = [a, b, c, d]")
        let token = inbox.rows.observe(.mutations, queue: queue) { rows, changes in
            seen.append(changes)
            timeline.callback(
                "rows are \(rows.map(\.title)); delete \(changes.removed), insert \(changes.inserted), reload \(changes.replaced)"
            )
        }
        timeline.step("let token = inbox.rows.observe(.mutations) { rows, changes in tableView.performBatchUpdates … }")

        inbox.rows.remove(at: 1)
        inbox.rows.append(Row("e"))
        inbox.rows[2] = Row("D")
        inbox.rows.insert(Row("x"), at: 0)
        inbox.rows.append(Row("temp"))
        inbox.rows.removeLast()
        // one callback: ArrayChanges(removed: [1], inserted: [0, 4], replaced: [3])
        timeline.step("remove b; append e; rows[2] = D (was d); insert x at 0; append and remove temp")
        timeline.endTick(draining: queue)

        timeline.expect(
            "one callback: b deleted (old 1), d reloaded (old 3), x and e inserted (new 0 and 4)",
            seen.values, equals: [ArrayChanges(removed: [1], inserted: [0, 4], replaced: [3])])
        withExtendedLifetime(token) {}
    }
}
