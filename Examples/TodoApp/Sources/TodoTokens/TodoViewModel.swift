import ObservationTokens

final class TodoViewModel {
    let list: TodoList
    private var tokens = Set<ObservationToken>()

    init(list: TodoList) {
        self.list = list
        list.observe(\.summary, options: .initial, isolation: MainActor.shared) { list in
            print(list.summary)
        }
        .store(in: &tokens)
    }
}

extension TodoList {
    var summary: String {
        let titles = visible.map(\.title).joined(separator: ", ")
        return "\(filter): \(remaining) left — [\(titles)]"
    }
}
