let app = TodoViewModel(list: TodoList())
let write = TodoItem(title: "write")
let test = TodoItem(title: "test")
let ship = TodoItem(title: "ship")

// Each change is followed by one turn of the main queue, where the view model renders.
let script: [() -> Void] = [
    { app.list.items.append(write) },
    { app.list.items.append(test) },
    { app.list.items.append(ship) },
    { write.done = true },
    { app.list.filter = .active },
    { test.title = "review" },
    { ship.done = true },
    { app.list.filter = .active },  // the filter it has: no render
    { app.list.filter = .done },
    { test.title = "proofread" },  // a title the filter hides: no render
    { app.list.items.removeAll { $0 === write } },
    { app.list.filter = .all },
]

for change in script {
    change()
    await Task.yield()
}
