import Flow
import FlowWire
import Synchronization
import Testing
@testable import FlowCluster

/// A checkpoint nested deeper than the protocol carries (§6.2: 64) is never sent (§7.9): the
/// worker drops it when the op saves it, with a warning, and a coordinator sends `null` in its
/// place. Sent, it made the receiver drop the whole CHECKPOINT, the other tasks' entries with it.
@Suite struct DeepCheckpointTests {
    /// A value nested `depth` deep (an array of an array … of 1).
    static func nested(_ depth: Int) -> FlowValue {
        var value = FlowValue.integer(1)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    @Test func aWorkerDropsACheckpointTooDeepToSendAndSaysSo() {
        let warnings = Mutex<[String]>([])
        let checkpoints = WorkerCheckpoints { line in warnings.withLock { $0.append(line) } }
        let deep = WireTask(taskID: 7, op: "SleepOp", parameters: [:])
        let fine = WireTask(taskID: 8, op: "SleepOp", parameters: [:])
        #expect(Self.nested(64).wireNestingDepth == 64)
        checkpoints.keeper(for: deep).save(Self.nested(65), element: 0)
        checkpoints.keeper(for: fine).save(Self.nested(64), element: 0)
        let sent = checkpoints.take() ?? []
        #expect(sent.map(\.taskID) == [8], "only the checkpoint the protocol carries goes")
        #expect(warnings.withLock { $0 }.count == 1)
        #expect(warnings.withLock { $0 }.first?.contains("task 7 (try 1) saved a checkpoint that nests arrays and maps 65 deep") == true)
    }

    @Test func aCoordinatorSendsNullForAStartingCheckpointTooDeepToSend() throws {
        var task = FlowTask(operation: .named("SleepOp", parameters: [:]), bucket: [:], operationName: "SleepOp")
        task.checkpoints = Keeper(saved: Self.nested(65))
        #expect(try WireTask(task, taskID: 1).checkpoint == .some(.null))
        task.checkpoints = Keeper(saved: Self.nested(3))
        #expect(try WireTask(task, taskID: 2).checkpoint == .some(Self.nested(3)))
    }

    /// A keeper that holds one saved checkpoint.
    final class Keeper: FlowCheckpointKeeper {
        let saved: FlowValue
        init(saved: FlowValue) { self.saved = saved }
        func checkpoint(element index: Int) -> FlowValue? { saved }
        func save(_ value: FlowValue, element index: Int) {}
    }
}
