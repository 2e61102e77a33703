import Flow
import FlowWire
import Foundation
import Logging

/// One flow run on a cluster: the coordinator, the local workers when there is no `--bind`, the
/// flow itself, and what the run ended as.
public final class ClusterRun: @unchecked Sendable {
    /// How to run.
    public struct Options: Sendable {
        /// The endpoint to bind for remote workers; `nil` spawns local workers on a private endpoint.
        public var bind: String?
        /// How many local workers to spawn without `bind`.
        public var workers = 2
        /// Slots per local worker.
        public var concurrency = 4
        /// How long a task waits for a worker offering its op.
        public var workerTimeout: Duration = .seconds(30)
        /// How often the coordinator checks heartbeats and liveness.
        public var heartbeatInterval: Duration = .seconds(1)
        /// Missed heartbeats before a worker is dead.
        public var liveness = 3
        /// The flow-worker binary for local workers.
        public var workerExecutable: String?
        /// With `bind`: workers that must have joined before the flow starts (0: start at once and
        /// give tasks to workers as they join).
        public var minimumWorkers = 0
        /// CURVE security for `bind`: the coordinator's key pair and the workers it admits.
        public var curve: FlowCoordinator.CurveServer?
        /// What the coordinator knows of the ops: which run on the coordinator and which prepare
        /// their input before dispatch (``FlowCoordinator/Configuration/registry``).
        public var registry = FlowOperationRegistry()
        /// Counts every task the coordinator runs; `nil` counts nothing.
        public var metrics: TaskMetrics?

        /// Default options: two local workers.
        public init() {}
    }

    /// How the run ended, as an exit status.
    public enum Outcome: Int32, Sendable {
        case succeeded = 0
        case failed = 1
        case clusterError = 3
    }

    public let flow: Flow
    private let options: Options
    private let logger: Logger
    private let onEvent: @Sendable (ClusterEvent) -> Void
    private var coordinator: FlowCoordinator?
    private var pool: LocalWorkerPool?

    /// Prepares a run.
    ///
    /// - Parameters:
    ///   - definition: the flow, with its bucket already overridden.
    ///   - options: where and how to run.
    ///   - logger: diagnostics.
    ///   - onEvent: cluster events (worker joined, lost, ...), for progress output.
    public init(definition: FlowDefinition, options: Options, logger: Logger, onEvent: @escaping @Sendable (ClusterEvent) -> Void = { _ in }) {
        self.flow = Flow(definition: definition)
        self.options = options
        var logger = logger
        logger[metadataKey: "flow.run"] = "\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        self.logger = logger
        self.onEvent = onEvent
    }

    /// Binds, starts local workers if needed, and returns the endpoint workers connect to.
    ///
    /// - Throws: ``ClusterError`` when the endpoint cannot be bound or workers cannot start.
    @discardableResult
    public func start() throws -> String {
        var configuration = FlowCoordinator.Configuration(endpoint: options.bind ?? Self.privateEndpoint())
        configuration.workerTimeout = options.workerTimeout
        configuration.heartbeatInterval = options.heartbeatInterval
        configuration.liveness = options.liveness
        configuration.registry = options.registry
        configuration.curve = options.curve
        configuration.metrics = options.metrics
        let flow = self.flow
        let onEvent = self.onEvent
        let coordinator = try FlowCoordinator(configuration: configuration, logger: logger) { event in
            if event.belongsInSummary { flow.log(message: "[Cluster] \(event)") }
            onEvent(event)
        }
        let endpoint = try coordinator.start()
        self.coordinator = coordinator
        flow.setExecutor(coordinator)
        if options.bind == nil {
            pool = try LocalWorkerPool(count: options.workers, endpoint: endpoint, concurrency: options.concurrency,
                                       executable: options.workerExecutable, logger: logger)
        }
        return endpoint
    }

    /// Waits until every local worker has said READY, so the work spreads over all of them from the
    /// first task (a no-op with `bind`, where workers come and go).
    ///
    /// - Returns: whether they all joined within `timeout`.
    @discardableResult
    public func waitForLocalWorkers(timeout: Duration = .seconds(15)) async -> Bool {
        guard pool != nil, let coordinator else { return true }
        return await coordinator.waitForWorkers(options.workers, timeout: timeout)
    }

    /// With `bind`, waits until `minimumWorkers` workers have joined.
    ///
    /// - Returns: whether they joined within the worker time-out.
    public func waitForMinimumWorkers() async -> Bool {
        guard options.bind != nil, options.minimumWorkers > 0, let coordinator else { return true }
        return await coordinator.waitForWorkers(options.minimumWorkers, timeout: max(options.workerTimeout, .milliseconds(100)))
    }

    /// Replaces the workers a CURVE coordinator admits (SIGHUP).
    public func reloadAuthorizedKeys(_ keys: AuthorizedKeys) {
        coordinator?.reloadAuthorizedKeys(keys)
    }

    /// The cluster now, for progress output.
    public var status: FlowCoordinator.Status? { coordinator?.status }

    /// Runs the flow to its end and stops the cluster.
    public func run() async -> Outcome {
        await flow.run()
        stop()
        if flow.isSuccess { return .succeeded }
        return (flow.error as? ClusterError)?.isClusterFailure == true ? .clusterError : .failed
    }

    /// Stops the coordinator and the local workers.
    public func stop() {
        if (coordinator?.status.running ?? 0) > 0 {
            // Tasks still run (the flow was cancelled): the coordinator's DISCONNECT makes the
            // workers cancel them, where a drain would wait for them.
            coordinator?.stop()
            pool?.stop()
        } else {
            // Local workers first, while the coordinator still listens: each says DISCONNECT and
            // exits at once, instead of lingering on a goodbye nobody can receive.
            pool?.stop()
            coordinator?.stop()
        }
        if let bind = options.bind, bind.hasPrefix("ipc://") { return }
        if options.bind == nil, let endpoint = coordinator?.endpoint, endpoint.hasPrefix("ipc://") {
            try? FileManager.default.removeItem(atPath: String(endpoint.dropFirst("ipc://".count)))
        }
    }

    /// A fresh ipc endpoint in the temporary directory (absolute: ZeroMQ resolves relative paths
    /// against the working directory).
    static func privateEndpoint() -> String {
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let name = "flow-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max)).sock"
        return "ipc://" + URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }
}
