import ObservationTokens

nonisolated enum Filter {
    case all, active, done

    func includes(_ item: TodoItem) -> Bool {
        switch self {
        case .all: true
        case .active: !item.done
        case .done: item.done
        }
    }
}

final class TodoItem: ObservableModel {
    @Observed var title: String
    @Observed var done = false

    init(title: String) {
        self.title = title
    }
}

final class TodoList: ObservableModel {
    @Observed var items: [TodoItem] = []
    @Observed var filter = Filter.all
    @Computed({ (list: TodoList) in list.items.filter { !$0.done }.count }) var remaining: Int
    @Computed({ (list: TodoList) in list.items.filter(list.filter.includes) }) var visible: [TodoItem]
}
