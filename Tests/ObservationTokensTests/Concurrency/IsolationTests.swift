import Testing
import ObservationTokens

final class IsoPerson: ObservableModel {
    @Observed var name = ""
}

@MainActor final class IsoViewModel {
    var title = ""
}

@MainActor @Suite struct IsolationTests {
    @Test func mainActorCallback() {
        let queue = CoalescingQueue(target: .manual)
        let person = IsoPerson()
        let viewModel = IsoViewModel()
        let token = person.observe(\.name, observer: viewModel, queue: queue, isolation: MainActor.shared) { vm, person in
            vm.title = person.name
        }
        person.name = "a"
        queue.drain()
        #expect(viewModel.title == "a")
        withExtendedLifetime(token) {}
    }
}
