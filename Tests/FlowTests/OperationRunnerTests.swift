import Foundation
import Testing
@testable import Flow

/// Notes which Swift task its `run()` ran in, then writes its input doubled; with `waits`, sleeps
/// until cancelled first (600 s at most: a cap for a broken cancel, never reached by a working
/// one; it was 10 s, and a main phase that held the test's own task back for longer than that
/// saw the sleep end before the cancel came).
final class TaskNotingOp: FlowAsyncOperation, @unchecked Sendable {
    private let notes = NSLock()
    private var runTask: Int?
    private var sawCancellation = false
    let waits: Bool
    /// Told when `run()` starts.
    let changes = Changes()

    init(waits: Bool = false) {
        self.waits = waits
    }

    var runTaskHash: Int? { notes.withLock { runTask } }
    var observedCancellation: Bool { notes.withLock { sawCancellation } }

    override var primaryInputParamKey: String { "in" }
    override var primaryOutputParamKey: String { "out" }

    override func run() async throws {
        let hash = withUnsafeCurrentTask { $0?.hashValue }
        notes.withLock { runTask = hash }
        changes.changed()
        let input: Int = try value("in")
        if waits {
            do {
                try await Task.sleep(for: .seconds(600))
            } catch {
                notes.withLock { sawCancellation = true }
                throw error
            }
        }
        set("out", input * 2)
    }
}

/// Writes its input to two keys, the second one its output, and logs a line.
final class TwoWritesOp: FlowOperation, @unchecked Sendable {
    override var primaryInputParamKey: String { "in" }
    override var primaryOutputParamKey: String { "out" }
    override var runsMainLogicInline: Bool { true }

    override func mainLogic() {
        guard let input: Int = getData(name: "in") else { return }
        setData(name: "scratch", value: input)
        log(message: "wrote \(input)")
        setData(name: "out", value: input + 1)
        finishSuccessfully()
    }
}

@Suite struct OperationRunnerTests {
    @Test func anAsyncOpsRunRunsInTheCallersOwnTaskAndFinishesByItsReturn() async {
        let operation = TaskNotingOp()
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let result = await FlowOperationRunner.run(operation, bucket: ["in": 21], groupTag: nil)
        #expect(result.state == .successfully)
        #expect(result.bucket["out"] as? Int == 42)
        #expect(caller != nil)
        #expect(operation.runTaskHash == caller)
    }

    @Test func anAsyncOpsMissingInputEndsItWithTheSeedsDataState() async {
        let result = await FlowOperationRunner.run(TaskNotingOp(), bucket: [:], groupTag: nil)
        guard case .withInsufficientInputData(let text) = result.state else {
            Issue.record("state \(result.state)")
            return
        }
        #expect(text.contains("in"))
    }

    @Test func cancellingTheCallerCancelsAnAsyncOpAtOnceAndItsRunSeesIt() async {
        let operation = TaskNotingOp(waits: true)
        let running = Task { await FlowOperationRunner.run(operation, bucket: ["in": 1], groupTag: nil) }
        let started = await operation.changes.wait(timeout: .seconds(30)) { operation.runTaskHash != nil }
        #expect(started, "the op's run() never started within 30 s")
        running.cancel()
        let result = await running.value
        #expect(result.state == .cancelled)
        #expect(operation.isCancelled)
        #expect(operation.observedCancellation)
        // Its sleep threw: the op's own work was stopped, not just left behind.
        #expect(result.bucket["out"] == nil)
    }

    @Test func anAsyncOpWhoseCallerIsAlreadyCancelledDoesNotRun() async {
        let operation = TaskNotingOp()
        let running = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await FlowOperationRunner.run(operation, bucket: ["in": 1], groupTag: nil)
        }
        let result = await running.value
        #expect(result.state == .cancelled)
        #expect(operation.runTaskHash == nil)
    }

    @Test func aGroupElementsWritesStayInItsBucketWhileASerialOpsAreEvents() async {
        let element = await FlowOperationRunner.runGroupElement(TwoWritesOp(), element: 5, index: 3, groupTag: "ab12")
        #expect(element.state == .successfully)
        #expect(element.groupIndex == 3)
        #expect(element.groupOutput as? Int == 6)
        #expect(element.bucket["scratch"] as? Int == 5)
        #expect(element.events.count == 1)
        #expect(element.events.allSatisfy { if case .log("wrote 5") = $0.kind { true } else { false } })

        let serial = await FlowOperationRunner.run(TwoWritesOp(), bucket: ["in": 5], groupTag: nil)
        let writes = serial.events.compactMap { event -> String? in
            if case .set(let key, let value) = event.kind { return "\(key)=\(value)" }
            return nil
        }
        #expect(writes == ["scratch=5", "out=6"])
        #expect(serial.events.count == 3)
    }
}
