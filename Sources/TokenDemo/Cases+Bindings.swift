import ObservationTokens

// Bindings and pipelines: one line keeps two objects in step, and that line is a token.

/// A view's state: a plain class, not a model.
///
/// `@unchecked Sendable`: bindings write it while a manual queue drains on the main thread, the
/// only thread that reads it.
private final class BindingLabel: @unchecked Sendable {
    var text = ""
}

/// A setting shared by a model and a control, for the two-way case.
private final class Volume: ObservableModel {
    @Observed var level = 0
}

/// A value that is not `Equatable`: every set is a change, so a cycle of bindings that copied
/// it back would never stop.
private struct Tint {
    var red = 0
}

/// A member of a ring of bindings, for the cycle case.
private final class Swatch: ObservableModel {
    @Observed var tint = Tint()
}

extension DemoCase {
    static let bindingCases: [DemoCase] = [bindingPipeline, twoWayWinner, bindingCycle, bindingLifetime]

    static let bindingPipeline = DemoCase(
        "binding-pipeline",
        group: .bindings,
        summary: "A one-way binding with filter and map: the label follows the name.",
        shows: """
            `pipeline(of:)` starts a pipeline; `filter` and `map` run in declaration order, and a failing \
            filter stops the push. `bind(to:_:)` writes the current value at once, then at most once per \
            tick. `now()` pushes again through this pipeline only, without setting the source.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let person = Person(name: "Ada Lovelace")
        let label = BindingLabel()

        let token = person.pipeline(of: \.name)
            .filter { $0.count > 3 }
            .map { $0.uppercased() }
            .bind(to: label, \.text, queue: queue)
        timeline.step(
            #"let token = person.pipeline(of: \.name).filter { $0.count > 3 }.map { $0.uppercased() }.bind(to: label, \.text)"#
        )
        timeline.note("label.text = \(quoted(label.text)) — taken at creation, through the pipeline")
        timeline.expect("the label took the current value at creation", label.text, equals: "ADA LOVELACE")

        person.name = "Bo"
        timeline.step(#"person.name = "Bo"  — too short: the filter will stop it"#)
        timeline.endTick(draining: queue)
        timeline.expect("a failing filter leaves the label alone", label.text, equals: "ADA LOVELACE")

        person.name = "Grace"
        person.name = "Grace Hopper"
        timeline.step(#"person.name = "Grace", then "Grace Hopper" in the same tick"#)
        timeline.endTick(draining: queue)
        timeline.note("label.text = \(quoted(label.text))")
        timeline.expect("one push per tick, with the last value", label.text, equals: "GRACE HOPPER")

        label.text = "scribbled"
        token.now()
        timeline.step(#"label.text = "scribbled"; token.now()"#)
        timeline.expect("now() pushed the current value again", label.text, equals: "GRACE HOPPER")
        withExtendedLifetime(token) {}
    }

    static let twoWayWinner = DemoCase(
        "two-way-binding",
        group: .bindings,
        summary: "A two-way binding: no echo, and the later change wins a same-tick tie.",
        shows: """
            `a.bindTwoWay(\\.level, with: b, \\.level)` gives b a's value at once; then either side's \
            change reaches the other once per tick, and the binding never echoes its own writes. When \
            both sides change in the same tick, the later change wins, whichever side it was made on.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let model = Volume()
        let slider = Volume()
        model.level = 3

        let token = model.bindTwoWay(\.level, with: slider, \.level, queue: queue)
        timeline.step(#"let token = model.bindTwoWay(\.level, with: slider, \.level)"#)
        timeline.expect("the slider took the model's value", slider.level, equals: 3)

        slider.level = 7
        timeline.step("slider.level = 7")
        let delivered = timeline.endTick(draining: queue)
        timeline.expect("the model followed the slider", model.level, equals: 7)
        timeline.expect("one delivery, no echo back", delivered, equals: 1)
        timeline.expect("nothing left for the next tick", queue.drain(), equals: 0)

        model.level = 9
        slider.level = 1
        timeline.step("model.level = 9, then slider.level = 1, in the same tick")
        timeline.endTick(draining: queue)
        timeline.note("model.level = \(model.level), slider.level = \(slider.level)")
        timeline.expect("the later change wins: both are 1", [model.level, slider.level], equals: [1, 1])
        withExtendedLifetime(token) {}
    }

    static let bindingCycle = DemoCase(
        "binding-cycle",
        group: .bindings,
        summary: "A ring of bindings settles in one tick, even for values that are not Equatable.",
        shows: """
            `a → b → c → a`: a change crosses each binding once and never comes back to where it \
            started, so a ring of a value that is not `Equatable` (every set is a change) stops. When two \
            members change in one tick, the later change wins everywhere, in the same drain.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let a = Swatch()
        let b = Swatch()
        let c = Swatch()
        let ring = [
            a.bind(\.tint, to: b, \.tint, options: [], queue: queue),
            b.bind(\.tint, to: c, \.tint, options: [], queue: queue),
            c.bind(\.tint, to: a, \.tint, options: [], queue: queue),
        ]
        timeline.step(#"a.bind(\.tint, to: b, \.tint); b.bind(\.tint, to: c, \.tint); c.bind(\.tint, to: a, \.tint)"#)

        a.tint = Tint(red: 1)
        timeline.step("a.tint = Tint(red: 1)  — Tint is not Equatable: every set is a change")
        let first = timeline.endTick(draining: queue)
        timeline.expect("b and c took it: two pushes, none back to a", first, equals: 2)
        timeline.expect("the next tick has nothing to do", timeline.endTick(draining: queue), equals: 0)

        a.tint = Tint(red: 2)
        c.tint = Tint(red: 3)
        timeline.step("a.tint = Tint(red: 2), then c.tint = Tint(red: 3), in the same tick")
        timeline.endTick(draining: queue)
        let reds = [a.tint.red, b.tint.red, c.tint.red]
        timeline.note("a, b, c: \(reds)")
        timeline.expect("the later change wins everywhere, in one drain", reds, equals: [3, 3, 3])
        timeline.expect("settled", timeline.endTick(draining: queue), equals: 0)
        withExtendedLifetime(ring) {}
    }

    static let bindingLifetime = DemoCase(
        "binding-lifetime",
        group: .bindings,
        summary: "A binding ends with its token, or with either object.",
        shows: """
            a binding is a token: it holds both objects weakly, and ends when it is dropped, when the \
            source deinitializes, or when the destination model deinitializes — at once, inside that deinit.
            """
    ) { timeline in
        let queue = CoalescingQueue(target: .manual)
        let source = Volume()
        var destination: Volume? = Volume()
        weak let weakDestination = destination

        let token = source.bind(\.level, to: destination!, \.level, queue: queue)
        timeline.step(#"let token = source.bind(\.level, to: destination, \.level)"#)
        timeline.note("token.isValid = \(token.isValid)")

        destination = nil
        timeline.step("destination = nil  — the binding holds it weakly, so it deinitializes")
        timeline.expect("the destination is gone", weakDestination == nil, got: "still alive")
        timeline.expect("its deinit ended the token", token.isValid, equals: false)

        source.level = 5
        timeline.step("source.level = 5")
        timeline.expect("nothing is pending for an ended binding", timeline.endTick(draining: queue), equals: 0)
    }
}
