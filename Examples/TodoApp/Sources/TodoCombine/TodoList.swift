import OpenCombine

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

final class TodoItem: ObservableObject {
    @Published var title: String
    @Published var done = false

    init(title: String) {
        self.title = title
    }
}

final class TodoList: ObservableObject {
    @Published var items: [TodoItem] = []
    @Published var filter = Filter.all
    private var subscriptions = Set<AnyCancellable>()

    init() {
        $items
            .map { items in items.publisher.flatMap(\.objectWillChange) }
            .switchToLatest()
            .sink { [weak self] in self?.objectWillChange.send() }
            .store(in: &subscriptions)
    }

    var remaining: Int { items.filter { !$0.done }.count }
    var visible: [TodoItem] { items.filter(filter.includes) }
}
