import Observation

final class TodoViewModel {
    let list: TodoList

    init(list: TodoList) {
        self.list = list
        render()
    }

    private func render() {
        withObservationTracking {
            print(summary)
        } onChange: {
            Task { @MainActor [weak self] in
                self?.render()
            }
        }
    }

    private var summary: String {
        let titles = list.visible.map(\.title).joined(separator: ", ")
        return "\(list.filter): \(list.remaining) left — [\(titles)]"
    }
}
