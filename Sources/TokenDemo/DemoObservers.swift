import ObservationTokens

// Objects that observe the models the way app code would: they keep their own tokens and
// receive themselves as the callback's first argument, so no closure captures `self`.

/// A label that shows a person's name and keeps its token in a `Set` it owns.
final class NameLabel {
    private(set) var text = ""
    private var tokens = Set<ObservationToken>()

    /// The label's only token, for the case to watch.
    var token: ObservationToken? { tokens.first }

    init(showing person: Person, queue: CoalescingQueue, timeline: Timeline, seen: Recorder<String>) {
        person.observe(\.name, observer: self, queue: queue) { label, person in
            label.text = person.name
            seen.append(person.name)
            timeline.callback("callback: label.text = \(quoted(person.name))")
        }
        .store(in: &tokens)
    }
}

/// A screen that wants to know when the person it shows goes away.
final class ProfileScreen: ObservedObjectDeinitObserver {
    var token: ObservationToken?
    private let timeline: Timeline
    private let notices: Recorder<String>

    init(timeline: Timeline, notices: Recorder<String>) {
        self.timeline = timeline
        self.notices = notices
    }

    func observedObjectDidDeinit(_ notice: ObservedObjectDeinitNotice) {
        notices.append(notice.typeName)
        timeline.callback("screen.observedObjectDidDeinit: \(quoted(notice.description))")
        token = nil  // already ended; the screen just lets go of it
    }
}

/// Captured by a callback closure so a case can see when the library releases that closure.
final class ClosureWitness: Sendable {}
