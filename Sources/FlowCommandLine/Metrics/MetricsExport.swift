import FlowCluster
import Metrics
import Prometheus

/// `--metrics HOST:PORT` in both programs: swift-metrics bootstrapped with the Prometheus backend
/// (once per process), served by a ``MetricsServer``.
enum MetricsExport {
    /// The registry everything the program counts through swift-metrics lands in.
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        // Tasks last from a millisecond (a no-op) to many minutes (a video upload).
        let taskBuckets: [Duration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
            .seconds(60), .seconds(120), .seconds(300), .seconds(600),
        ]
        MetricsSystem.bootstrap(DescribedPrometheusFactory(registry: registry, help: help,
                                                           durationBuckets: [TaskMetrics.durationName: taskBuckets]))
        return registry
    }()

    /// What each metric means, for its `# HELP` line.
    static let help: [String: String] = [
        "flow_tasks_completed_total": "Op tasks that finished, by op and state (succeeded, failed, cancelled).",
        TaskMetrics.durationName: "How long op tasks ran, from the op's start to its end, by op.",
        "flow_task_retries_total": "Op tasks started again after a failed try, by op.",
        "flow_tasks_in_flight": "Tasks running on workers now.",
        "flow_tasks_queued": "Tasks waiting for a free worker slot.",
        "flow_workers_connected": "Workers registered with the coordinator now.",
        "flow_cluster_slots": "Task slots of all connected workers.",
        "flow_group_elements": "Elements of the group that runs now (or ran last), by flow and state (pending, running, done, failed).",
        "flow_group_bytes_sent": "Bytes the ops of a group with a budget reported sending, by flow and step.",
        "flow_group_requests_reported": "Requests beyond op starts (multipart parts) the ops of a group with a budget reported, by flow and step.",
        "flow_worker_slots": "Task slots this worker has.",
        "flow_worker_slots_busy": "Task slots of this worker that run a task now.",
        "flow_worker_uploaded_bytes_total": "Request body bytes UploadFileOp sent from this worker.",
        "flow_pool_workers": "Workers registered with the pool now.",
        "flow_pool_slots": "Task slots of all the pool's workers.",
        "flow_pool_slots_busy": "Slots of the pool's workers that run a task now.",
        "flow_pool_runs": "Runs registered with the pool now.",
        "flow_pool_tasks_queued": "Tasks of all runs waiting at the pool for a slot (scale workers on this).",
        "flow_pool_run_tasks_queued": "Tasks of one run waiting at the pool for a slot, by run id.",
    ]

    /// Bootstraps swift-metrics with the Prometheus backend: call it before making any metric, or
    /// that metric counts into swift-metrics' no-op backend.
    static func bootstrap() {
        _ = registry
    }

    /// Bootstraps the metrics system and serves it at `text` (`HOST:PORT`), saying where on stderr.
    ///
    /// - Parameter beforeScrape: sets the gauges read at scrape time.
    /// - Returns: the server, to stop when the program ends.
    /// - Throws: a message for a bad `--metrics` value or an address that cannot be bound.
    static func start(_ text: String, program: String, beforeScrape: @escaping @Sendable () -> Void = {}) async throws(MetricsEndpointError)
        -> MetricsServer {
        let endpoint = try MetricsEndpoint(parsing: text)
        let registry = Self.registry
        do {
            let server = try await MetricsServer.start(endpoint, registry: registry, beforeScrape: beforeScrape)
            let reach = endpoint.isLoopback ? "" : " (reachable from other machines: you chose \(endpoint.host))"
            CommandLineLogging.printDiagnostic("\(program): metrics on http://\(server.address)/metrics\(reach)")
            return server
        } catch {
            throw MetricsEndpointError(text: text, reason: "cannot listen there: \(error); choose another port")
        }
    }
}
