import Metrics

/// What a worker reports through swift-metrics: the tasks it runs (``TaskMetrics``) and
/// `flow_worker_slots_busy`, its slots that run a task now, beside `flow_worker_slots`, all it has.
public struct WorkerMetrics: Sendable {
    /// Its tasks: completed by op and state, and their durations.
    public let tasks = TaskMetrics()
    let slotsBusy = Meter(label: "flow_worker_slots_busy")

    /// Metrics for a worker with `slots` slots.
    public init(slots: Int) {
        Gauge(label: "flow_worker_slots").record(slots)
        slotsBusy.set(0)
    }
}
