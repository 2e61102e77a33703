import Foundation
import Testing

@testable import Flow

/// Op checkpoints in one process (``FlowOperation/saveCheckpoint(_:)``): a later try of the same
/// element reads what the earlier one saved, each element its own, and the run's journal is told
/// each save and hands journaled ones back.
@Suite struct CheckpointEngineTests {
    /// An op that saves `"<item> <try> <- <what it read>"` after it starts and fails its first try.
    private static func registry() -> FlowOperationRegistry {
        var registry = FlowOperationRegistry()
        registry.register("StepOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
            FlowClosureOperation(name: "StepOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
                let item: String = (try? op.value("item")) ?? "serial"
                let before = op.savedCheckpoint.map { "\($0)" } ?? "none"
                op.saveCheckpoint(.string("\(item) \(op.attempt) <- \(before)"))
                if op.attempt == 1 { throw Transient() }
                op.set("result", "\(item): saw \(before)")
            }
        }
        return registry
    }

    private struct Transient: FlowRetryAdvice, CustomStringConvertible {
        var isPermanent: Bool { false }
        var description: String { "try again" }
    }

    /// A journal that keeps checkpoints in memory, and gives back `earlier` as an earlier life's.
    private final class Journal: FlowJournal, @unchecked Sendable {
        let lock = NSLock()
        var saved: [String: [Int: FlowValue]] = [:]
        let earlier: [String: [Int: FlowValue]]
        init(earlier: [String: [Int: FlowValue]] = [:]) { self.earlier = earlier }
        func recordedResults(at step: FlowStepID) -> [FlowJournalRecord] { [] }
        func groupStarted(at step: FlowStepID, total: Int) {}
        func accepted(_ record: FlowJournalRecord, at step: FlowStepID) {}
        func checkpointed(_ value: FlowValue, at step: FlowStepID, element index: Int) {
            lock.withLock { saved[step.path, default: [:]][index] = value }
        }
        func checkpoints(at step: FlowStepID) -> [Int: FlowValue] { earlier[step.path] ?? [:] }
    }

    private static let retry = FlowRetryPolicy(attempts: 2, delay: .milliseconds(1), jitter: false)

    @Test func aRetryOfAGroupElementContinuesFromWhatItsFirstTrySaved() async {
        let journal = Journal()
        let flow = Flow(definition: FlowDefinition(name: "checkpoints", steps: [
            .group(FlowGroupStep(op: "StepOp", input: "items", output: "results", retry: Self.retry)),
        ]), registry: Self.registry()).setDataBucket(dataBucket: ["items": ["a", "b", "c"]]).setJournal(journal)
        await flow.run()
        #expect(flow.isSuccess)
        #expect(flow.dataBucket["results"] as? [String] == ["a: saw a 1 <- none", "b: saw b 1 <- none", "c: saw c 1 <- none"],
                "each element's second try reads its own first try's checkpoint")
        #expect(journal.lock.withLock { journal.saved["0"] } == [0: "a 2 <- a 1 <- none", 1: "b 2 <- b 1 <- none", 2: "c 2 <- c 1 <- none"],
                "the journal has each element's latest")
    }

    @Test func aSerialOpContinuesFromItsJournaledCheckpointAndWithoutAJournalFromItsEarlierTry() async {
        let journal = Journal(earlier: ["0": [0: "serial step 7"]])
        let resumed = Flow(definition: FlowDefinition(name: "checkpoints", steps: [
            .operation(FlowOperationStep(op: "StepOp", retry: Self.retry)),
        ]), registry: Self.registry()).setJournal(journal)
        await resumed.run()
        #expect(resumed.dataBucket["result"] as? String == "serial: saw serial 1 <- serial step 7",
                "the first try read the journal's checkpoint, the second the first's")

        let plain = Flow(definition: FlowDefinition(name: "checkpoints", steps: [
            .operation(FlowOperationStep(op: "StepOp", retry: Self.retry)),
        ]), registry: Self.registry())
        await plain.run()
        #expect(plain.isSuccess)
        #expect(plain.dataBucket["result"] as? String == "serial: saw serial 1 <- none")
    }

    @Test func aFirstTryOfAResumedElementReadsTheJournaledCheckpoint() async {
        var registry = FlowOperationRegistry()
        registry.register("ReadOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { _ in
            FlowClosureOperation(name: "ReadOp", primaryInputParamKey: "item", primaryOutputParamKey: "result") { op in
                op.set("result", op.savedCheckpoint.map { "\($0)" } ?? "none")
            }
        }
        let journal = Journal(earlier: ["0": [1: "from an earlier life"]])
        let flow = Flow(definition: FlowDefinition(name: "checkpoints", steps: [
            .group(FlowGroupStep(op: "ReadOp", input: "items", output: "results")),
        ]), registry: registry).setDataBucket(dataBucket: ["items": ["a", "b"]]).setJournal(journal)
        await flow.run()
        #expect(flow.dataBucket["results"] as? [String] == ["none", "from an earlier life"])
    }
}
