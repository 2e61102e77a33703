import Flow
import Foundation
import Synchronization
import Testing

/// `FlowDryRunExecutor`: which ops a dry run runs (by their ``FlowOperation/dryRunRole``), what
/// the ops that write leave undone, and how the plan counts.
@Suite struct DryRunExecutorTests {
    /// Counts the ops that really ran, by name.
    // `@unchecked`: `counts` is read and written only under `lock`, an NSLock (a pthread mutex, which
    // ThreadSanitizer sees; Synchronization's Mutex is a futex on Linux, and ops adding side by side
    // under it were reported as an access race).
    final class Effects: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [String: Int] = [:]
        func add(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }
        subscript(_ name: String) -> Int { lock.withLock { counts[name] ?? 0 } }
    }

    /// Lists: sets `items` to three names. Reads only.
    final class Lister: FlowOperation, @unchecked Sendable {
        let effects: Effects
        init(_ effects: Effects) { self.effects = effects }
        override var dryRunRole: FlowDryRunRole { .readsOnly }
        override func mainLogic() {
            effects.add("Lister")
            setData(name: "items", value: ["a", "bb", "ccc"])
            finishSuccessfully()
        }
    }

    /// Writes, and says nothing about dry runs: the default.
    final class Writer: FlowOperation, @unchecked Sendable {
        let effects: Effects
        init(_ effects: Effects) { self.effects = effects }
        override var primaryInputParamKey: String { "item" }
        override var primaryOutputParamKey: String { "done" }
        override func mainLogic() {
            effects.add("Writer")
            setData(name: "done", value: true)
            finishSuccessfully()
        }
    }

    /// Sends each item unless it is `bb`; in a dry run only notes what it would do.
    final class Sender: FlowOperation, @unchecked Sendable {
        let effects: Effects
        init(_ effects: Effects) { self.effects = effects }
        override var primaryInputParamKey: String { "item" }
        override var primaryOutputParamKey: String { "sent" }
        override var dryRunRole: FlowDryRunRole { .rehearses }
        override func mainLogic() {
            guard let item: String = getData(name: "item") else { return }
            if isDryRun {
                effects.add("Sender.head")
                let action: FlowDryRunNote.Action = item == "bb" ? .skip(reason: "there already") : .send
                noteDryRun(FlowDryRunNote(item: item, action: action, bytes: Int64(item.count), requestsMade: ["HEAD": 1],
                                          requestsNotMade: item == "bb" ? [:] : ["PUT": 1]))
            } else {
                effects.add("Sender.put")
            }
            setData(name: "sent", value: item)
            finishSuccessfully()
        }
    }

    static func registry(_ effects: Effects) -> FlowOperationRegistry {
        var registry = FlowOperationRegistry()
        registry.register("Lister") { _ in Lister(effects) }
        registry.register("Writer", primaryInputParamKey: "item", primaryOutputParamKey: "done") { _ in Writer(effects) }
        registry.register("Sender", primaryInputParamKey: "item", primaryOutputParamKey: "sent") { _ in Sender(effects) }
        return registry
    }

    static let text = """
        flow: plan
        steps:
          - op: Lister
          - group: {op: Sender, input: items, output: sent}
          - group: {op: Writer, input: items, output: written}
          - op: Writer
          - op: Elsewhere
        """

    /// Runs ``text`` as a dry run with `registry`, and returns the flow and the plan.
    static func dryRun(_ registry: FlowOperationRegistry) async throws -> (Flow, FlowDryRunPlan) {
        let definition = try FlowFileLoader().load(text: text, file: "plan.yaml")
        let executor = FlowDryRunExecutor(registry: registry)
        let flow = Flow(definition: definition, registry: registry).setExecutor(executor)
        await flow.run()
        return (flow, executor.plan)
    }

    @Test func readersRunRehearsersRehearseAndWritersDoNotRun() async throws {
        let effects = Effects()
        let (flow, plan) = try await Self.dryRun(Self.registry(effects))

        #expect(flow.isSuccess, "\(String(describing: flow.error))")
        #expect(effects["Lister"] == 1)
        #expect(effects["Sender.head"] == 3 && effects["Sender.put"] == 0)
        #expect(effects["Writer"] == 0, "a writer ran in a dry run")
        #expect(flow.dataBucket["sent"] as? [String] == ["a", "bb", "ccc"], "a rehearsal gives its output for the steps after it")
        #expect(flow.dataBucket["written"] == nil || (flow.dataBucket["written"] as? [Any])?.isEmpty == true)

        #expect(plan.steps.map(\.operationName) == ["Lister", "Sender", "Writer", "Writer", "Elsewhere"])
        #expect(plan.steps.map(\.role) == [.readsOnly, .rehearses, .writes, .writes, .writes])
        #expect(plan.steps.map(\.tasks) == [1, 3, 3, 1, 1])
        #expect(plan.steps.map(\.ran) == [true, true, false, false, false])
        #expect(plan.steps.map(\.location?.line) == [3, 4, 5, 6, 7])
        #expect(plan.itemsToSend == 2 && plan.bytesToSend == 4 && plan.itemsSkipped == 1)
        #expect(plan.steps[1].skipped.map(\.item) == ["bb"])
        #expect(plan.requestsMade == ["HEAD": 3] && plan.requestsNotMade == ["PUT": 2])
        #expect(plan.stepsNotRun.count == 3)
        #expect(flow.generateSummary().contains("not run: dry run (the op writes)"))
        #expect(flow.generateSummary().contains("not run: dry run (the op is not known here, so it may write)"))
    }

    @Test func thePlanTextNamesEachStepTheSkippedAndTheTotals() async throws {
        let (_, plan) = try await Self.dryRun(Self.registry(Effects()))
        let lines = plan.text().split(separator: "\n").map(String.init)

        #expect(lines.contains("step 1 Lister (plan.yaml:3:5): ran (reads only)"), "\(lines)")
        #expect(lines.contains("step 2 Sender ×3 (plan.yaml:4:5): rehearsed: would send 2 (4 bytes), skip 1"), "\(lines)")
        #expect(lines.contains("    skipped bb: there already"), "\(lines)")
        #expect(lines.contains("    requests: made HEAD 3; not made PUT 2"), "\(lines)")
        #expect(lines.contains("step 3 Writer ×3 (plan.yaml:5:5): not run (writes)"), "\(lines)")
        #expect(lines.last == "Dry run: to send 2 files, 4 bytes; skipped 1; requests made HEAD 3, not made PUT 2; "
                + "steps not run 3: Writer at line 5, Writer at line 6, Elsewhere at line 7. Nothing was written.", "\(lines)")
    }

    /// The real run of the same flow: the writers run, the sender sends, nothing is noted.
    @Test func aRealRunIgnoresDryRunNotes() async throws {
        let effects = Effects()
        var registry = Self.registry(effects)
        registry.register("Elsewhere") { _ in FlowClosureOperation(name: "Elsewhere") { _ in } }
        let flow = Flow(definition: try FlowFileLoader().load(text: Self.text, file: "plan.yaml"), registry: registry)
        await flow.run()

        #expect(flow.isSuccess, "\(String(describing: flow.error))")
        #expect(effects["Sender.put"] == 3 && effects["Sender.head"] == 0 && effects["Writer"] == 4)
    }

    /// A writer whose rehearsal is added in an extension (``Mailer/rehearse(in:)`` below).
    final class Mailer: FlowAsyncOperation, @unchecked Sendable {
        let effects: Effects
        init(_ effects: Effects) { self.effects = effects }
        override func run() async throws { effects.add("Mailer.send") }
    }

    @Test func anOpRehearsingInAnExtensionRunsItsRehearsalUnderItsOwnName() async throws {
        let effects = Effects()
        var registry = FlowOperationRegistry()
        registry.register("Mailer") { _ in Mailer(effects) }
        let definition = try FlowFileLoader().load(text: "flow: m\nsteps:\n  - op: Mailer\n", file: "m.yaml")
        let executor = FlowDryRunExecutor(registry: registry)
        let flow = Flow(definition: definition, registry: registry).setExecutor(executor)
        await flow.run()

        #expect(flow.isSuccess, "\(String(describing: flow.error))")
        #expect(effects["Mailer.send"] == 0 && effects["Mailer.check"] == 1)
        #expect(flow.dataBucket["checked"] as? String == "yes")
        #expect(flow.generateSummary().contains("[Mailer] would mail 10 bytes"), "\(flow.generateSummary())")
        #expect(executor.plan.steps.map(\.role) == [.rehearses] && executor.plan.itemsToSend == 1 && executor.plan.bytesToSend == 10)
    }

    @Test func anOpSaysItWritesUnlessItSaysOtherwise() {
        #expect(FlowOperation().dryRunRole == .writes)
        #expect(FlowOperation().isDryRun == false)
    }
}

extension DryRunExecutorTests.Mailer: FlowDryRunRehearsing {
    func rehearse(in rehearsal: FlowAsyncOperation) async throws {
        effects.add("Mailer.check")
        #expect(rehearsal.isDryRun)
        rehearsal.log(message: "would mail 10 bytes")
        rehearsal.set("checked", "yes")
        rehearsal.noteDryRun(FlowDryRunNote(item: "mail", action: .send, bytes: 10))
    }
}
