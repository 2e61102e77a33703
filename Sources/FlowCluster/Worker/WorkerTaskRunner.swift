import Flow
import FlowWire
import Foundation

/// Runs one TASK on this worker through the same executor an in-process flow uses
/// (`FlowLocalExecutor`), converting at the edges with the one pair of wire converters:
/// `FlowTask(wire:)` in, `WireResult(_:for:)` out.
struct WorkerTaskRunner: Sendable {
    let registry: FlowOperationRegistry
    let workerName: String
    /// Counts the tasks it runs, `nil` nothing.
    var metrics: WorkerMetrics?

    nonisolated(nonsending) func run(_ task: WireTask) async -> WireResult {
        guard let metrics else { return await execute(task) }
        metrics.slotsBusy.increment()
        let result = await execute(task)
        metrics.slotsBusy.decrement()
        metrics.tasks.finished(op: task.op, state: result.finishState, startedAt: result.startedAt, finishedAt: result.finishedAt)
        return result
    }

    nonisolated(nonsending) private func execute(_ task: WireTask) async -> WireResult {
        guard registry.contains(task.op) else {
            let now = Date()
            return WireResult(
                taskID: task.taskID, attempt: task.attempt,
                finishState: .withError("worker \(workerName) has no op named \(task.op); its ops: \(registry.names.joined(separator: ", "))"),
                startedAt: now, finishedAt: now, elementIndex: task.isGroupElement ? task.elementIndex : nil)
        }
        let result = await FlowLocalExecutor(registry: registry).execute(FlowTask(wire: task))
        return WireResult(result, for: task)
    }
}
