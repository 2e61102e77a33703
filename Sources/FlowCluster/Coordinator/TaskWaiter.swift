import Flow

/// Who waits for a task's result: one engine task suspended on it, or a group's inbox that
/// collects many (``FlowBatchExecutor``).
enum TaskWaiter: Sendable {
    /// `checkpoints` keeps what its op saves (§7.9).
    case continuation(CheckedContinuation<FlowTaskResult, Never>, checkpoints: (any FlowCheckpointKeeper)?)
    /// `metrics` counts the result as finished for its op. A result carries its element's index
    /// itself (from the RESULT, or from the TASK for a result made here). `checkpoints` keeps
    /// what the group's ops save (§7.9).
    case inbox(FlowResultInbox, metrics: (TaskMetrics, op: String)?, checkpoints: (any FlowCheckpointKeeper)?)

    /// Hands the result over; called once per task.
    func resume(returning result: FlowTaskResult) {
        switch self {
        case .continuation(let continuation, _):
            continuation.resume(returning: result)
        case .inbox(let inbox, let metrics, _):
            if let (counter, op) = metrics {
                counter.finished(op: op, state: result.state, startedAt: result.startedAt, finishedAt: result.finishedAt)
            }
            inbox.deliver(result)
        }
    }

    /// The group limit of an inbox whose tasks are handed over ahead of need.
    var groupLimit: TaskGroupLimit? {
        guard case .inbox(let inbox, _, _) = self, let limit = inbox.concurrencyLimit else { return nil }
        return TaskGroupLimit(id: inbox.id, limit: limit)
    }

    /// Whether this waiter is `inbox`.
    func belongs(to inbox: FlowResultInbox) -> Bool {
        if case .inbox(let own, _, _) = self { return own === inbox }
        return false
    }

    /// Hands what element `index`'s op saved to continue from to the step's keeper (the engine's,
    /// which writes it to the run's journal).
    func checkpointed(_ value: FlowValue, element index: Int) {
        switch self {
        case .continuation(_, let checkpoints), .inbox(_, _, let checkpoints):
            checkpoints?.save(value, element: index)
        }
    }
}
