import Flow
import FlowCluster
import Metrics
import Synchronization

/// The coordinator's gauges, read from the cluster's status and the flow's progress at each
/// scrape: `flow_workers_connected`, `flow_cluster_slots`, `flow_tasks_in_flight` (on workers now),
/// `flow_tasks_queued` (waiting for a slot), and `flow_group_elements` (labels `flow`, `state`:
/// `pending`, `running`, `done`, `failed`) for the group that runs now or ran last; for each group
/// with a budget (labels `flow`, `step`): `flow_group_limit` (label `rate`: `requests_per_second`,
/// `bytes_per_second`; 0 is unlimited), `flow_group_concurrency` (the adaptive concurrency now),
/// `flow_group_max_concurrent`, `flow_group_throttled_answers`, `flow_group_started`,
/// `flow_group_bytes_sent` (what its ops reported sending, docs/PROTOCOL.md §15) and
/// `flow_group_requests_reported` (the requests its ops reported beyond their starts: parts).
final class CoordinatorMetrics: Sendable {
    /// One group's budget gauges.
    private struct BudgetGauges {
        let requests: Gauge
        let bytes: Gauge
        let concurrency: Gauge
        let maxConcurrent: Gauge
        let throttled: Gauge
        let started: Gauge
        let bytesSent: Gauge
        let requestsReported: Gauge

        init(flow: String, step: String) {
            let labels = [("flow", flow), ("step", step)]
            requests = Gauge(label: "flow_group_limit", dimensions: labels + [("rate", "requests_per_second")])
            bytes = Gauge(label: "flow_group_limit", dimensions: labels + [("rate", "bytes_per_second")])
            concurrency = Gauge(label: "flow_group_concurrency", dimensions: labels)
            maxConcurrent = Gauge(label: "flow_group_max_concurrent", dimensions: labels)
            throttled = Gauge(label: "flow_group_throttled_answers", dimensions: labels)
            started = Gauge(label: "flow_group_started", dimensions: labels)
            bytesSent = Gauge(label: "flow_group_bytes_sent", dimensions: labels)
            requestsReported = Gauge(label: "flow_group_requests_reported", dimensions: labels)
        }

        func record(_ budget: GroupBudgetStatus) {
            requests.record(budget.rates.requestsPerSecond ?? 0)
            bytes.record(budget.rates.bytesPerSecond ?? 0)
            if let concurrency = budget.concurrency { self.concurrency.record(concurrency) }
            if let maximum = budget.maxConcurrent { maxConcurrent.record(maximum) }
            throttled.record(budget.throttledAnswers)
            started.record(budget.started)
            bytesSent.record(budget.bytesSent)
            requestsReported.record(budget.requestsReported)
        }
    }

    private let flow: String
    private let budgetGauges = Mutex<[String: BudgetGauges]>([:])
    private struct GroupCounts {
        /// The elements known: all of them, or those read so far of a group's input file.
        var total = 0
        var finished = 0
        var failed = 0
        /// Whether the group's input file is still being read.
        var listing = false
    }

    private let group = Mutex(GroupCounts())
    private let workers = Gauge(label: "flow_workers_connected")
    private let slots = Gauge(label: "flow_cluster_slots")
    private let inFlight = Gauge(label: "flow_tasks_in_flight")
    private let queued = Gauge(label: "flow_tasks_queued")
    private let pending: Gauge
    private let running: Gauge
    private let done: Gauge
    private let failed: Gauge
    /// 1 while the running group's input file is still being read (its `pending` count grows).
    private let listing: Gauge

    /// Gauges for the run of the flow named `flow`.
    init(flow: String) {
        self.flow = flow
        func elements(_ state: String) -> Gauge { Gauge(label: "flow_group_elements", dimensions: [("flow", flow), ("state", state)]) }
        (pending, running, done, failed) = (elements("pending"), elements("running"), elements("done"), elements("failed"))
        listing = Gauge(label: "flow_group_listing", dimensions: [("flow", flow)])
        update(status: nil)
    }

    /// Follows the flow's groups.
    func record(_ event: FlowProgressEvent) {
        switch event {
        case .groupStarted(_, let total, _):
            group.withLock { $0 = GroupCounts(total: total ?? 0, listing: total == nil) }
        case .groupListed(_, let listed, let complete):
            group.withLock { counts in
                counts.total = listed
                counts.listing = !complete
            }
        case .groupElementFinished(_, let done, let failed, _), .groupFinished(_, let done, let failed, _):
            group.withLock { counts in
                counts.finished = done
                counts.failed = failed
            }
        case .operationStarted, .operationFinished:
            break
        }
    }

    /// Sets every gauge from the cluster's status now (`nil`: not started) and the groups'
    /// budgets.
    func update(status: FlowCoordinator.Status?, budgets: [GroupBudgetStatus] = []) {
        for budget in budgets {
            budgetGauges.withLock { gauges in
                if gauges[budget.name] == nil { gauges[budget.name] = BudgetGauges(flow: flow, step: budget.name) }
                return gauges[budget.name]!
            }.record(budget)
        }
        let (connected, slotCount, onWorkers, waiting) = status.map { ($0.workers, $0.slots, $0.running, $0.queued) } ?? (0, 0, 0, 0)
        workers.record(connected)
        slots.record(slotCount)
        inFlight.record(onWorkers)
        queued.record(waiting)
        let counts = group.withLock { $0 }
        // While a group runs, the engine's tasks are its elements: on a worker, or waiting for a slot.
        let open = counts.total - counts.finished
        let active = min(open, onWorkers + waiting)
        pending.record(open - active)
        running.record(active)
        done.record(counts.finished - counts.failed)
        failed.record(counts.failed)
        listing.record(counts.listing ? 1 : 0)
    }
}
