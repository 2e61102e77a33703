public import Flow
import FlowWire
public import Foundation
public import Logging
public import ServiceLifecycle
public import ZeroMQ

/// A worker process's engine: connects a DEALER to the coordinator, says READY with its ops and
/// slots, runs up to `concurrency` tasks at once, heartbeats, and reconnects when the coordinator
/// goes silent or restarts. Every protocol rule lives in `WorkerStateMachine`; this is the thin
/// ZeroMQ shell around it.
///
/// It is a `Service`: on graceful shutdown (SIGTERM or SIGINT in a `ServiceGroup`) it stops taking
/// tasks, finishes the running ones, sends their RESULTs, says DISCONNECT and returns.
///
/// ```swift
/// var registry = FlowOperationRegistry.standard
/// registry.register("ResizeOp") { params in ResizeOp(width: try params.integer("width")) }
/// let worker = try FlowWorker(configuration: .init(endpoint: "tcp://coordinator:5555"), registry: registry, logger: logger)
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class FlowWorker: Service, Sendable {
    /// Where to connect and how to behave.
    public struct Configuration: Sendable {
        /// The coordinator's endpoint, for example `tcp://10.0.0.5:5555`.
        public var endpoint: String
        /// The name shown in summaries (`[Op abcd @ NAME]`); host and process id by default.
        public var name: String
        /// How many tasks run at once.
        public var concurrency: Int
        /// How often the worker heartbeats; it announces this in READY, and it governs the
        /// connection on both sides.
        public var heartbeatInterval: Duration = .seconds(1)
        /// Missed heartbeat intervals before the worker reconnects.
        public var liveness: Int = 3
        /// The longest wait between two attempts to reach a coordinator that does not answer
        /// (libzmq's `ZMQ_RECONNECT_IVL_MAX`): the first retry comes after 10 ms, each wait is
        /// twice the last up to this one. A standing worker finds a coordinator started later
        /// within this interval; a shorter one costs connection attempts while none runs.
        public var reconnectInterval: Duration = .milliseconds(100)
        /// CURVE security: the worker's key pair and the coordinator's public key; `nil` is
        /// plaintext.
        public var curve: CurveClient?
        /// Counts the tasks it runs and its busy slots (``WorkerMetrics``); `nil` counts nothing.
        public var metrics: WorkerMetrics?
        /// Its labels (`--label KEY=VALUE`), which a step's `on:` matches. Every worker also has
        /// `host` (its host name) and `name` (its name); a label given here with one of those keys
        /// wins over it (a pod's `host` set to its node's name). At most 64; a key is 1 to 63
        /// letters, digits and `. _ - /` starting with a letter or digit, a value at most 255
        /// bytes without control characters (``Labels/problem(with:)``).
        public var labels: [String: String] = [:]

        /// Creates a configuration.
        public init(endpoint: String, name: String? = nil, concurrency: Int = ProcessInfo.processInfo.activeProcessorCount) {
            self.endpoint = endpoint
            self.name = name ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
            self.concurrency = max(1, concurrency)
        }
    }

    /// What a CURVE worker needs: its own key pair, and the coordinator's public key, which it
    /// checks in the handshake.
    public struct CurveClient: Sendable {
        /// The worker's long-term key pair; the coordinator's authorised keys list its public key.
        public var keyPair: ZMQCurveKeyPair
        /// The coordinator's public key, 40 Z85 characters.
        public var coordinatorKey: String

        /// Creates the settings.
        public init(keyPair: ZMQCurveKeyPair, coordinatorKey: String) {
            self.keyPair = keyPair
            self.coordinatorKey = coordinatorKey
        }
    }

    /// Where it connects and how it behaves, as given to ``init(configuration:registry:logger:)``.
    public let configuration: Configuration
    private let registry: FlowOperationRegistry
    private let logger: Logger
    private let context: ZMQContext
    private let wakeup: ZMQWakeup
    private let mailbox = WorkerMailbox()

    /// Creates a worker; ``run()`` connects it.
    ///
    /// - Parameters:
    ///   - configuration: the coordinator endpoint, name and concurrency.
    ///   - registry: the ops this worker offers; at least one.
    ///   - logger: diagnostics, with `task.id`, `task.attempt` and `task.op` metadata.
    /// - Throws: ``ClusterError/invalidWorker(_:)`` for an empty registry, and for a name or ops
    ///   past what a READY may carry (`WireLimits`), which a coordinator would refuse in silence.
    public init(configuration: Configuration, registry: FlowOperationRegistry, logger: Logger) throws {
        guard !registry.names.isEmpty else {
            throw ClusterError.invalidWorker("a worker needs at least one op: register ops in its FlowOperationRegistry")
        }
        if configuration.name.utf8.count > WireLimits.maximumReadyNameBytes {
            throw ClusterError.invalidWorker("the worker name is \(configuration.name.utf8.count) bytes long; "
                                             + "a coordinator takes at most \(WireLimits.maximumReadyNameBytes): choose a shorter --name")
        }
        if registry.names.count > WireLimits.maximumReadyOperations {
            throw ClusterError.invalidWorker("the worker offers \(registry.names.count) ops; a coordinator takes at most "
                                             + "\(WireLimits.maximumReadyOperations) from one worker: split them among workers")
        }
        if let long = registry.names.first(where: { $0.utf8.count > WireLimits.maximumOperationNameBytes }) {
            throw ClusterError.invalidWorker("the op name '\(long.prefix(40))…' is \(long.utf8.count) bytes long; "
                                             + "a coordinator takes at most \(WireLimits.maximumOperationNameBytes): register it under a shorter name")
        }
        if let problem = Labels.problem(with: configuration.labels) { throw ClusterError.invalidWorker(problem) }
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        context = try ZMQContext()
        wakeup = try ZMQWakeup()
    }

    /// Connects and serves tasks until graceful shutdown, then drains and returns.
    ///
    /// - Throws: ``ClusterError/cannotConnect(endpoint:reason:)`` for a bad endpoint.
    public func run() async throws {
        let loop = WorkerIOLoop(configuration: configuration, registry: registry, logger: logger, context: context,
                                wakeup: wakeup, mailbox: mailbox)
        let thread = Thread { [mailbox] in
            ThreadName.set("flow-worker-io")
            let error = loop.run()
            mailbox.exit(error)
        }
        thread.name = "flow-worker-io"
        thread.start()
        await withGracefulShutdownHandler {
            await mailbox.waitForExit()
        } onGracefulShutdown: {
            self.drain()
        }
        wakeup.close()
        context.close()
        if let error = mailbox.exitError { throw error }
    }

    /// Stops taking tasks; the worker finishes the running ones, says DISCONNECT and ``run()``
    /// returns.
    public func drain() {
        mailbox.requestDrain()
        wakeup.signal()
    }
}
