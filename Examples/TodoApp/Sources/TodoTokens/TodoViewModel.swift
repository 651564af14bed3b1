import ObservationTokens

final class TodoViewModel {
    let list: TodoList
    private let token: ObservationToken

    init(list: TodoList) {
        self.list = list
        token = list.observe(\.summary, options: .initial, isolation: MainActor.shared) { print($0.summary) }
    }
}

extension TodoList {
    var summary: String {
        let titles = visible.map(\.title).joined(separator: ", ")
        return "\(filter): \(remaining) left — [\(titles)]"
    }
}
