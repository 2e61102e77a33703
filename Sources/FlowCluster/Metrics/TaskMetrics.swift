public import Flow
public import Foundation
import Metrics
import Synchronization

/// Counts the tasks a coordinator hands out or a worker runs, through swift-metrics: whatever
/// backend the program bootstrapped (the Flow programs: Prometheus, with `--metrics`) sees them.
///
/// Handlers are made once per op and state and kept, so a task costs a dictionary look-up and a
/// few atomic adds, not a factory call.
///
/// Metrics (the names are the contract with dashboards):
/// - `flow_tasks_completed_total` (labels `op`, `state`: `succeeded`, `failed`, `cancelled`)
/// - `flow_task_duration_seconds` (histogram, label `op`): from the op's start to its end, as the
///   machine that ran it measured
/// - `flow_task_retries_total` (label `op`): tries after an op's first
public final class TaskMetrics: Sendable {
    /// The name of the task-duration histogram, for backends that take buckets per metric.
    public static let durationName = "flow_task_duration_seconds"

    private struct Handles {
        var succeeded: Counter
        var failed: Counter
        var cancelled: Counter
        var duration: Metrics.Timer
        var retries: Counter
    }

    private let handles = Mutex<[String: Handles]>([:])

    /// Metrics that report to the bootstrapped swift-metrics backend.
    public init() {}

    /// Counts a task that starts: a retry when it is not its op's first try.
    public func started(op: String, attempt: Int) {
        guard attempt > 1 else { return }
        handles(for: op).retries.increment()
    }

    /// Counts a task that finished, with how it finished and how long it ran.
    public func finished(op: String, state: FlowFinishState, startedAt: Date, finishedAt: Date) {
        let handles = handles(for: op)
        switch state {
        case .successfully: handles.succeeded.increment()
        case .cancelled: handles.cancelled.increment()
        case .withError, .withInsufficientInputData, .withMismatchInputDataType: handles.failed.increment()
        }
        let nanoseconds = max(0, finishedAt.timeIntervalSince(startedAt)) * 1e9
        handles.duration.recordNanoseconds(Int64(nanoseconds.rounded()))
    }

    private func handles(for op: String) -> Handles {
        handles.withLock { all in
            if let known = all[op] { return known }
            func completed(_ state: String) -> Counter {
                Counter(label: "flow_tasks_completed_total", dimensions: [("op", op), ("state", state)])
            }
            let made = Handles(succeeded: completed("succeeded"), failed: completed("failed"), cancelled: completed("cancelled"),
                               duration: Metrics.Timer(label: Self.durationName, dimensions: [("op", op)]),
                               retries: Counter(label: "flow_task_retries_total", dimensions: [("op", op)]))
            all[op] = made
            return made
        }
    }
}
