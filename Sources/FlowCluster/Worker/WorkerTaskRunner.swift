import Flow
import FlowWire
import Foundation
import Metrics

/// Runs one TASK on this worker through the same executor an in-process flow uses
/// (`FlowLocalExecutor`), converting at the edges with the one pair of wire converters:
/// `FlowTask(wire:)` in, `WireResult(_:for:)` out.
struct WorkerTaskRunner: Sendable {
    let registry: FlowOperationRegistry
    let workerName: String
    /// Counts the tasks it runs, `nil` nothing.
    var metrics: WorkerMetrics?
    /// The group bytes budgets a task's op reports its progress to (§15).
    var byteBudgets: WorkerByteBudgets?
    /// Where the ops' checkpoints go, for tasks whose TASK carried one (§7.9).
    var checkpoints: WorkerCheckpoints?

    /// Runs the task; `cause` says, if it is cancelled, why.
    nonisolated(nonsending) func run(_ task: WireTask, cause: FlowCancellationCause) async -> WireResult {
        let result = await FlowProgress.$cancellation.withValue(cause) { await measured(task) }
        guard result.tailReaches(WireResult.encodeAheadThreshold) else { return result }
        // A large result is encoded here, off the worker's I/O thread, which this task prefers:
        // there its encoding held up heartbeats for seconds (§8.5).
        return await Task.detached { result.encodingTailAhead() }.value
    }

    nonisolated(nonsending) private func measured(_ task: WireTask) async -> WireResult {
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
        let executor = FlowLocalExecutor(registry: registry)
        var flowTask = FlowTask(wire: task)
        if task.checkpoint != nil, let checkpoints { flowTask.checkpoints = checkpoints.keeper(for: task) }
        guard let budget = task.budget, let byteBudgets else { return WireResult(await executor.execute(flowTask), for: task) }
        // Only a task of a group with a budget reports its progress: an unlimited run's ops find
        // no sink and pay one task-local read.
        let sink = WorkerProgressSink(budgets: byteBudgets, task: WireTaskReference(taskID: task.taskID, attempt: task.attempt), budget: budget)
        let result = await FlowProgress.$sink.withValue(sink) { await executor.execute(flowTask) }
        return WireResult(result, for: task)
    }
}
