import Flow

/// Who waits for a task's result: one engine task suspended on it, or a group's inbox that
/// collects many (``FlowBatchExecutor``).
enum TaskWaiter: Sendable {
    case continuation(CheckedContinuation<FlowTaskResult, Never>)
    /// `metrics` counts the result as finished for its op. A result carries its element's index
    /// itself (from the RESULT, or from the TASK for a result made here).
    case inbox(FlowResultInbox, metrics: (TaskMetrics, op: String)?)

    /// Hands the result over; called once per task.
    func resume(returning result: FlowTaskResult) {
        switch self {
        case .continuation(let continuation):
            continuation.resume(returning: result)
        case .inbox(let inbox, let metrics):
            if let (counter, op) = metrics {
                counter.finished(op: op, state: result.state, startedAt: result.startedAt, finishedAt: result.finishedAt)
            }
            inbox.deliver(result)
        }
    }

    /// The group limit of an inbox whose tasks are handed over ahead of need.
    var groupLimit: TaskGroupLimit? {
        guard case .inbox(let inbox, _) = self, let limit = inbox.concurrencyLimit else { return nil }
        return TaskGroupLimit(id: inbox.id, limit: limit)
    }

    /// Whether this waiter is `inbox`.
    func belongs(to inbox: FlowResultInbox) -> Bool {
        if case .inbox(let own, _) = self { return own === inbox }
        return false
    }
}
