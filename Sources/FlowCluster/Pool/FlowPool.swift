import Flow
import FlowWire
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization
public import ZeroMQ

/// A standing pool of workers for many runs at once (docs/PROTOCOL.md §14): workers connect to
/// it as to a coordinator, and coordinators started with `--pool` register their runs with it
/// and submit their tasks; the pool shares its workers' slots among the runs by weight.
///
/// One I/O thread owns the ROUTER socket and runs `PoolStateMachine`. Use it as a `Service`
/// (``run()`` binds and serves until graceful shutdown) or with ``start()`` and ``stop()``.
public final class FlowPool: Service, Sendable {
    /// Where the pool listens and how patient it is.
    public struct Configuration: Sendable {
        /// The endpoint to bind, for example `tcp://0.0.0.0:5555`.
        public var endpoint: String
        /// How often the pool checks liveness (a quarter of it, at most every 50 ms); workers and
        /// clients announce their own heartbeat intervals.
        public var heartbeatInterval: Duration = .seconds(1)
        /// Missed intervals before a worker or client is declared gone.
        public var liveness = 3
        /// How long a task waits for a worker that offers its op before it fails.
        public var workerTimeout: Duration = .seconds(30)
        /// CURVE: the pool's key pair and the keys of its workers and clients; `nil` is plaintext.
        public var curve: (keyPair: ZMQCurveKeyPair, keys: PoolKeys)?
        /// Tasks a client may have submitted and unanswered (WELCOME's slot count); the pool
        /// answers each task past it with a failure (§14.4).
        public var clientCredit: UInt32 = 1_024
        /// The largest share a run is granted (§14.5): a run that asks for more gets this, unless
        /// its key's line in the clients file gives its own (`share=N`). At least 1.
        public var maxShare: UInt32 = 4
        /// How many runs one client (its CURVE key; without CURVE, its HELLO's `user@host`) may
        /// have running at once; the pool holds more until one of them ends. At least 1.
        public var maxRunsPerClient = 16
        /// How many bytes of tasks one client may have waiting at the pool (§14.4); a task past
        /// it is answered with a failure. At least 1.
        public var maxQueuedBytes = 256 << 20
        /// The name the pool gives clients (default: host name and endpoint).
        public var name: String?
        /// The largest frame the pool takes; a peer that sends a larger one is disconnected
        /// (`ZMQ_MAXMSGSIZE`, §10). A client must keep its SUBMITs under it.
        public var maximumInboundFrameSize = WireLimits.maximumInboundFrameSize

        /// Creates a configuration.
        public init(endpoint: String) {
            self.endpoint = endpoint
        }

        var machine: PoolStateMachine.Configuration {
            var configuration = PoolStateMachine.Configuration()
            configuration.name = String((name ?? "\(ProcessInfo.processInfo.hostName) \(endpoint)").prefix(255))
            configuration.clientCredit = max(1, clientCredit)
            configuration.maxShare = max(1, maxShare)
            configuration.maxRunsPerClient = max(1, maxRunsPerClient)
            configuration.maxQueuedBytes = max(1, maxQueuedBytes)
            configuration.liveness = liveness
            configuration.machine.workerTimeout = workerTimeout
            configuration.machine.liveness = liveness
            return configuration
        }
    }

    public let configuration: Configuration
    private let logger: Logger
    private let onEvent: @Sendable (ClusterEvent) -> Void
    /// The I/O thread's start and end, the context, the wake-up and the ZAP handler.
    private let shell: IOThreadShell
    private let shared: Shared

    /// What the I/O thread and callers both touch, each behind its lock.
    private final class Shared: Sendable {
        let stopRequested = Atomic<Bool>(false)
        let state = Mutex<(started: Bool, endpoint: String?, status: PoolStatus)>((false, nil, PoolStatus(pool: "", workers: [], runs: [])))
        let keys: Mutex<PoolKeys?>

        init(keys: PoolKeys?) {
            self.keys = Mutex(keys)
        }
    }

    /// Creates a pool; ``start()`` binds it.
    public init(configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (ClusterEvent) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
        shared = Shared(keys: configuration.curve?.keys)
        shell = try IOThreadShell()
    }

    deinit {
        // Nobody waits here: the I/O thread closes the sockets and the context as it ends.
        requestStop()
    }

    /// The endpoint as bound (with the real port when the configuration asked for `*`).
    public var endpoint: String? { shared.state.withLock { $0.endpoint } }

    /// The workers and runs, as of the I/O thread's last report (at most 100 ms old).
    public var status: PoolStatus { shared.state.withLock { $0.status } }

    /// Binds the endpoint and starts the I/O thread; returns once the socket is bound, without
    /// blocking a thread meanwhile.
    ///
    /// - Returns: the bound endpoint.
    /// - Throws: ``ClusterError/cannotBind(endpoint:reason:)``; ``ClusterError/notRunning`` when
    ///   already started or stopped.
    @discardableResult
    public func start() async throws -> String {
        var roles: (@Sendable (String) -> (PoolStateMachine.Roles, PoolStateMachine.PeerKey))?
        var zap: (@Sendable (ZMQContext) throws -> ZAPHandler)?
        if let curve = configuration.curve {
            let (onEvent, logger) = (self.onEvent, self.logger)
            // Started on the I/O thread before the socket is bound.
            zap = { context in
                try ZAPHandler(context: context, keys: curve.keys.union, logger: logger) { address, key in
                    let event = ClusterEvent.peerRefused(address: address, key: key)
                    // A pool has two lists: the line says which one a key goes in.
                    let text = key.map {
                        "refused a peer at \(address) with key \($0): in neither list (add it to --authorized-keys for a worker "
                            + "or to --authorized-clients for a run, then send SIGHUP)"
                    } ?? "\(event)"
                    logger.log(level: event.logLevel, "\(text.escapingControlCharacters)", metadata: event.metadata)
                    onEvent(event)
                }
            }
            let shared = self.shared
            roles = { key in
                shared.keys.withLock { keys in (keys?.roles(of: key) ?? [], keys?.peerKey(key) ?? PoolStateMachine.PeerKey(text: key)) }
            }
        }
        let loop = PoolIOLoop(configuration: configuration, wakeup: shell.wakeup, isStopping: { [shared] in shared.stopRequested.load(ordering: .acquiring) },
                              logger: logger, roles: roles, onStatus: { [shared] status in shared.state.withLock { $0.status = status } },
                              onEvent: onEvent)
        let endpoint = try await shell.start(name: "flow-pool-io", endpoint: configuration.endpoint, zap: zap) {
            [context = shell.context, configuration] ready in
            BoundRouter.serve(configuration.endpoint, context: context, curveSecretKey: configuration.curve?.keyPair.secretKey,
                              maximumInboundFrameSize: configuration.maximumInboundFrameSize, ready: ready) {
                loop.run(on: $0, monitor: $1)
            }
        }
        shared.state.withLock {
            $0.started = true
            $0.endpoint = endpoint
        }
        return endpoint
    }

    /// Binds (unless ``start()`` already did) and serves until graceful shutdown or cancellation,
    /// then stops.
    public func run() async throws {
        if !shared.state.withLock({ $0.started }) { try await start() }
        try? await gracefulShutdown()
        await stop()
    }

    /// Says goodbye to every worker and client, stops the I/O thread and closes the socket;
    /// returns once the thread has ended, resumed by it (no thread waits meanwhile). Safe to call
    /// more than once, and before ``start()``.
    public func stop() async {
        requestStop()
        await shell.waitForEnd()
    }

    /// Asks the I/O thread to end and returns at once; the thread says goodbye and closes the
    /// socket and the context by itself. For `deinit`, where nothing waits: ``stop()`` otherwise.
    func requestStop() {
        shared.stopRequested.store(true, ordering: .releasing)
        shell.requestStop()
    }

    /// Replaces the keys a CURVE pool admits (SIGHUP): a key taken off both lists ends its peer's
    /// registration at its next message. A no-op for a plaintext pool.
    public func reloadKeys(_ keys: PoolKeys) {
        guard configuration.curve != nil else { return }
        shared.keys.withLock { $0 = keys }
        shell.zap?.reload(keys.union)
    }
}
