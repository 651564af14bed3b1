import Observation

enum Filter {
    case all, active, done

    func includes(_ item: TodoItem) -> Bool {
        switch self {
        case .all: true
        case .active: !item.done
        case .done: item.done
        }
    }
}

@Observable final class TodoItem {
    var title: String
    var done = false

    init(title: String) {
        self.title = title
    }
}

@Observable final class TodoList {
    var items: [TodoItem] = []
    var filter = Filter.all

    var remaining: Int { items.filter { !$0.done }.count }
    var visible: [TodoItem] { items.filter(filter.includes) }
}
