import Flow
import FlowWire
import Synchronization

/// What the ops of a worker's tasks saved to continue from (``FlowOperation/saveCheckpoint(_:)``,
/// §7.9), held until the I/O thread sends them as CHECKPOINT: the latest per task, from any thread.
///
/// A checkpoint nested deeper than the protocol carries (§6.2, 64) is dropped when it is saved,
/// with a warning (§7.9): sent, it would make the coordinator drop the whole CHECKPOINT, the other
/// tasks' entries with it. The task and its RESULT go on as if it had not been saved.
final class WorkerCheckpoints: Sendable {
    private let saved = Mutex<[WireTaskReference: FlowValue]>([:])
    /// Says why a checkpoint was dropped (the worker's log).
    private let warn: @Sendable (String) -> Void

    init(warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.warn = warn
    }

    /// The keeper bound around the op of `task`, whose TASK carried `checkpoint` (flags bit 4).
    func keeper(for task: WireTask) -> any FlowCheckpointKeeper {
        Keeper(checkpoints: self, task: WireTaskReference(taskID: task.taskID, attempt: task.attempt))
    }

    /// The checkpoints saved since the last call, in task order; `nil` for none.
    func take() -> [WireCheckpoint]? {
        saved.withLock { saved in
            guard !saved.isEmpty else { return nil }
            defer { saved = [:] }
            return saved.map { WireCheckpoint(taskID: $0.key.taskID, attempt: $0.key.attempt, value: $0.value) }
                .sorted { $0.taskID < $1.taskID }
        }
    }

    /// Forgets every unsent checkpoint: the coordinator they were for is gone.
    func reset() {
        saved.withLock { $0 = [:] }
    }

    private func save(_ value: FlowValue, task: WireTaskReference) {
        let depth = value.wireNestingDepth
        guard depth <= WireLimits.maximumValueDepth else {
            warn("task \(task.taskID) (try \(task.attempt)) saved a checkpoint that nests arrays and maps \(depth) deep; the "
                 + "protocol carries at most \(WireLimits.maximumValueDepth), so it is not sent and a later try starts from the "
                 + "last one that was")
            return
        }
        saved.withLock { $0[task] = value }
    }

    /// One task's keeper: its saves go to the worker's store under the task's id and attempt.
    private final class Keeper: FlowCheckpointKeeper {
        let checkpoints: WorkerCheckpoints
        let task: WireTaskReference

        init(checkpoints: WorkerCheckpoints, task: WireTaskReference) {
            self.checkpoints = checkpoints
            self.task = task
        }

        /// Only the TASK's own checkpoint is known here (``FlowTask/checkpoint``).
        func checkpoint(element index: Int) -> FlowValue? { nil }

        func save(_ value: FlowValue, element index: Int) {
            checkpoints.save(value, task: task)
        }
    }
}
