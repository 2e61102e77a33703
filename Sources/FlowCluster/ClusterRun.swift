public import Flow
import FlowWire
import Foundation
public import Logging
import Synchronization
public import ZeroMQ

/// One flow run on a cluster: the coordinator, the local workers when there is no `--bind`, the
/// flow itself, and what the run ended as.
public final class ClusterRun: Sendable {
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
        /// Run on a pool's workers (`--pool`) instead of binding or starting local workers.
        public var pool: Pool?

        /// How a run reaches a pool (docs/PROTOCOL.md §14).
        public struct Pool: Sendable {
            /// The pool's endpoint.
            public var endpoint: String
            /// The run's weight in the pool's fair share.
            public var share: UInt32 = 1
            /// CURVE: this coordinator's key pair and the pool's public key.
            public var curve: (keyPair: ZMQCurveKeyPair, poolKey: String)?

            /// Creates the settings.
            public init(endpoint: String, share: UInt32 = 1, curve: (keyPair: ZMQCurveKeyPair, poolKey: String)? = nil) {
                self.endpoint = endpoint
                self.share = share
                self.curve = curve
            }
        }

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
    /// Whether the run's tasks go to a pool (`--pool`), which holds no group's bytes budget
    /// (docs/PROTOCOL.md §15).
    package var runsOnPool: Bool { options.pool != nil }
    /// The flow's name, which a pool is told.
    private let flowName: String
    private let logger: Logger
    private let onEvent: @Sendable (ClusterEvent) -> Void
    /// Set once by ``start()``, read by other threads (the progress timer through ``status``,
    /// SIGHUP through ``reloadAuthorizedKeys(_:)``).
    private let started = Mutex<(coordinator: FlowCoordinator?, pool: LocalWorkerPool?)>((nil, nil))
    private var coordinator: FlowCoordinator? { started.withLock { $0.coordinator } }
    private var pool: LocalWorkerPool? { started.withLock { $0.pool } }

    private let localStart: LocalStart?

    /// Prepares a run.
    ///
    /// - Parameters:
    ///   - definition: the flow, with its bucket already overridden.
    ///   - options: where and how to run.
    ///   - logger: diagnostics.
    ///   - localStart: the coordinator and local workers ``startLocal(options:logger:)`` started
    ///     while the flow loaded; ``start(runID:)`` takes them over instead of starting its own.
    ///   - onEvent: cluster events (worker joined, lost, ...), for progress output.
    public init(definition: FlowDefinition, options: Options, logger: Logger, localStart: LocalStart? = nil,
                onEvent: @escaping @Sendable (ClusterEvent) -> Void = { _ in }) {
        self.flow = Flow(definition: definition)
        self.options = options
        flowName = definition.name
        self.logger = localStart?.logger ?? Self.runLogger(logger)
        self.localStart = localStart
        self.onEvent = onEvent
    }

    /// The logger with the run's id as metadata.
    static func runLogger(_ logger: Logger) -> Logger {
        var logger = logger
        logger[metadataKey: "flow.run"] = "\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        return logger
    }

    /// The coordinator's configuration for `options`, on a private endpoint without `bind` or a pool.
    ///
    /// - Parameter hello: with a pool, what the coordinator tells it of the run.
    static func coordinatorConfiguration(_ options: Options, hello: WireHello? = nil) -> FlowCoordinator.Configuration {
        var configuration = FlowCoordinator.Configuration(endpoint: options.bind ?? options.pool?.endpoint ?? PrivateEndpoint.make())
        if let pool = options.pool, let hello { configuration.pool = .init(endpoint: pool.endpoint, hello: hello, curve: pool.curve) }
        configuration.workerTimeout = options.workerTimeout
        configuration.heartbeatInterval = options.heartbeatInterval
        configuration.liveness = options.liveness
        configuration.registry = options.registry
        configuration.curve = options.curve
        configuration.metrics = options.metrics
        return configuration
    }

    /// Binds, starts local workers if needed, and returns the endpoint workers connect to.
    ///
    /// - Throws: ``ClusterError`` when the endpoint cannot be bound or workers cannot start.
    ///
    /// - Parameter runID: the run's id, which a pool is told (`--pool`).
    @discardableResult
    public func start(runID: String? = nil) async throws -> String {
        let flow = self.flow
        let onEvent = self.onEvent
        let sink: @Sendable (ClusterEvent) -> Void = { event in
            if event.belongsInSummary { flow.log(message: "[Cluster] \(event)") }
            onEvent(event)
        }
        guard options.bind != nil || options.pool != nil else {
            // Local workers: the ones started while the flow loaded, or new ones.
            let local: LocalStart
            if let localStart, localStart.take() {
                local = localStart
            } else {
                local = try await Self.launchLocal(options: options, logger: logger)
                _ = local.take()
            }
            started.withLock { $0 = (local.coordinator, local.pool) }
            local.relay.attach(sink)
            flow.setExecutor(local.coordinator)
            return local.coordinator.endpoint ?? ""
        }
        let hello = options.pool.map { pool in
            WireHello(clientName: Self.clientName, runID: runID ?? String(UInt64.random(in: 0...UInt64.max), radix: 16),
                      flowName: String(flowName.prefix(255)), origin: Self.origin, share: pool.share,
                      heartbeatIntervalMilliseconds: UInt32(max(1, (options.heartbeatInterval.seconds * 1000).rounded())))
        }
        let coordinator = try FlowCoordinator(configuration: Self.coordinatorConfiguration(options, hello: hello), logger: logger, onEvent: sink)
        let endpoint = try await coordinator.start()
        started.withLock { $0.coordinator = coordinator }
        flow.setExecutor(coordinator)
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

    /// With a pool, waits until it has accepted the run (WELCOME).
    ///
    /// - Parameter slow: called once if it takes more than a second (to say what it waits for).
    /// - Returns: whether the pool answered within the worker time-out.
    public func waitForPool(slow: @Sendable () -> Void) async -> Bool {
        guard options.pool != nil, let coordinator else { return true }
        if await coordinator.waitForWorkers(1, timeout: .seconds(1)) { return true }
        slow()
        return await coordinator.waitForWorkers(1, timeout: max(options.workerTimeout - .seconds(1), .milliseconds(100)))
    }

    /// Why the pool refused this run (its key, its role), if it did: what a run that gives up on
    /// the pool says instead of "no pool answered".
    package var poolRefusal: String? { coordinator?.configuration.pool?.refusal.value }

    /// This process as a pool's client names it: host and process id.
    static var clientName: String {
        String("\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)".prefix(255))
    }

    /// Where a run was started from: `user@host`.
    static var origin: String {
        let account = getpwuid(getuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
        let user = ProcessInfo.processInfo.environment["USER"] ?? ProcessInfo.processInfo.environment["LOGNAME"] ?? account ?? "\(getuid())"
        return String("\(user)@\(ProcessInfo.processInfo.hostName)".prefix(255))
    }

    /// Pauses the run or lets it go on (``FlowCoordinator/setPaused(_:)``).
    public func setPaused(_ paused: Bool) {
        coordinator?.setPaused(paused)
    }

    /// Holds a group to rates across the cluster and lets it back off when throttled
    /// (``FlowCoordinator/setGroupBudget(at:name:rates:maxConcurrent:adaptive:)``); a no-op
    /// before the coordinator started.
    public func setGroupBudget(at location: FlowSourceLocation, name: String, rates: FlowLimitRates, maxConcurrent: Int,
                               adaptive: Bool) {
        coordinator?.setGroupBudget(at: location, name: name, rates: rates, maxConcurrent: maxConcurrent, adaptive: adaptive)
    }

    /// The group budgets now (``FlowCoordinator/groupBudgets``).
    public var groupBudgets: [GroupBudgetStatus] { coordinator?.groupBudgets ?? [] }

    /// Replaces the workers a CURVE coordinator admits (SIGHUP).
    public func reloadAuthorizedKeys(_ keys: AuthorizedKeys) {
        coordinator?.reloadAuthorizedKeys(keys)
    }

    /// The cluster now, for progress output.
    public var status: FlowCoordinator.Status? { coordinator?.status }

    /// The workers connected now, by name, with their labels.
    public var connectedWorkers: [FlowCoordinator.ConnectedWorker] { coordinator?.connectedWorkers ?? [] }

    /// Runs the flow to its end and stops the cluster.
    ///
    /// - Parameters:
    ///   - ended: called once the flow has ended, before any worker is told to stop: progress
    ///     output stops here, so that the workers leaving, which the run itself asked for, are not
    ///     reported in the middle of the summary.
    ///   - finish: work for the end of the run (printing the summary, recording the end in the
    ///     journal) done while the local workers exit: after a clean end they are told to stop
    ///     first, and the cluster is stopped once `finish` returns. After a cancelled run the
    ///     cluster is stopped before `finish`.
    public func run(ended: () -> Void = {}, whileStopping finish: (Outcome) async -> Void = { _ in }) async -> Outcome {
        await flow.run()
        let outcome: Outcome
        if flow.isSuccess {
            outcome = .succeeded
        } else {
            outcome = (flow.error as? ClusterError)?.isClusterFailure == true ? .clusterError : .failed
        }
        ended()
        if (coordinator?.status.running ?? 0) > 0 {
            await stop()
        } else {
            // Each worker says DISCONNECT while the coordinator still listens, and takes a few
            // milliseconds to exit: the caller's `finish` runs meanwhile.
            pool?.terminate()
        }
        await finish(outcome)
        await stop()
        return outcome
    }

    /// Stops the coordinator and the local workers; returns once both have ended.
    public func stop() async {
        if (coordinator?.status.running ?? 0) > 0 {
            // Tasks still run (the flow was cancelled): the coordinator's DISCONNECT makes the
            // workers cancel them, where a drain would wait for them.
            await coordinator?.stop()
            await pool?.stop()
        } else {
            // Local workers first, while the coordinator still listens: each says DISCONNECT and
            // exits at once, instead of lingering on a goodbye nobody can receive.
            await pool?.stop()
            await coordinator?.stop()
        }
        if options.bind == nil, options.pool == nil { PrivateEndpoint.remove(coordinator?.endpoint) }
    }
}
