import Flow

/// Who waits for a task's result: one engine task suspended on it, or a group's inbox that
/// collects many (``FlowBatchExecutor``).
enum TaskWaiter: Sendable {
    case continuation(CheckedContinuation<FlowTaskResult, Never>)
    /// `index` is the element's place in its group, set on every result delivered, failures too;
    /// `metrics` counts the result as finished for its op.
    case inbox(FlowResultInbox, index: Int?, metrics: (TaskMetrics, op: String)?)

    /// Hands the result over; called once per task.
    func resume(returning result: FlowTaskResult) {
        switch self {
        case .continuation(let continuation):
            continuation.resume(returning: result)
        case .inbox(let inbox, let index, let metrics):
            var result = result
            if result.groupIndex == nil { result.groupIndex = index }
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
}
