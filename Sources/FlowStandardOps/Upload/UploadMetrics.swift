import Metrics

/// What uploads report through swift-metrics (a worker with `--metrics` serves it to Prometheus).
enum UploadMetrics {
    /// `flow_worker_uploaded_bytes_total`: request bodies sent by `UploadFileOp`, file uploads
    /// counted as each part goes out (so a scrape during a big upload sees it move), bodies from
    /// memory once the server has answered. Made on first use: the program bootstraps its backend
    /// before any op runs.
    static let bytesSent = Counter(label: "flow_worker_uploaded_bytes_total")
}
