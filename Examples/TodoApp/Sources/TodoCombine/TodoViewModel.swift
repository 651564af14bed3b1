import Dispatch
import OpenCombine
import OpenCombineDispatch

final class TodoViewModel {
    let list: TodoList
    private var subscriptions = Set<AnyCancellable>()

    init(list: TodoList) {
        self.list = list
        list.objectWillChange
            .receive(on: DispatchQueue.main.ocombine)
            .compactMap { [weak self] in self?.summary }
            .prepend(summary)
            .removeDuplicates()
            .sink { print($0) }
            .store(in: &subscriptions)
    }

    private var summary: String {
        let titles = list.visible.map(\.title).joined(separator: ", ")
        return "\(list.filter): \(list.remaining) left — [\(titles)]"
    }
}
