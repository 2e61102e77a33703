public import Flow
import FlowWire
import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization
import ZeroMQ

/// Runs a flow's ops on workers: binds a ZeroMQ ROUTER, admits workers that say READY, and
/// hands each task the engine gives it (`FlowExecutor.execute(_:)`) to a worker that offers the
/// op and has a free slot.
///
/// One dedicated I/O thread owns the socket and runs `DispatchCore`; async callers
/// queue work for it and wake it through an `inproc://` pair. Use it as a flow's executor:
///
/// ```swift
/// let coordinator = try FlowCoordinator(configuration: .init(endpoint: "tcp://0.0.0.0:5555"), logger: logger)
/// try await coordinator.start()
/// let flow = Flow(definition: definition).setExecutor(coordinator)
/// await flow.run()
/// await coordinator.stop()
/// ```
///
/// or as a `Service` in a `ServiceGroup`, which binds it in ``run()`` and stops it on graceful
/// shutdown.
public final class FlowCoordinator: FlowBatchExecutor, Service, Sendable {
    public let configuration: Configuration
    private let logger: Logger
    private let onEvent: @Sendable (ClusterEvent) -> Void
    /// The I/O thread's start and end, the context, the wake-up and the ZAP handler.
    private let shell: IOThreadShell
    let mailbox = CoordinatorMailbox()
    let loopExecutor: LoopExecutor
    private let lifecycle = Mutex<(started: Bool, endpoint: String?)>((false, nil))

    /// Creates a coordinator; ``start()`` binds it.
    ///
    /// - Parameters:
    ///   - configuration: where to listen, the time limits, and what it knows of ops.
    ///   - logger: diagnostics, with `worker.name`, `task.id` and `task.attempt` metadata.
    ///   - onEvent: called on the I/O thread for every ``ClusterEvent`` (keep it short).
    public init(configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (ClusterEvent) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
        shell = try IOThreadShell()
        loopExecutor = LoopExecutor(wakeup: shell.wakeup)
    }

    deinit {
        // Nobody waits here: the I/O thread closes the sockets and the context as it ends.
        requestStop()
    }

    /// The coordinator's I/O thread, which runs tasks between its polls: a flow with this
    /// coordinator as its executor runs its engine there, and hands over each task and takes each
    /// result without a wake-up of another thread (a serial step made two). Before ``start()``
    /// and after ``stop()`` its jobs run on the global concurrent executor.
    public var preferredTaskExecutor: (any TaskExecutor)? { loopExecutor }

    /// The I/O thread's name as `top -H` and `perf` show it (the kernel keeps 15 bytes).
    static let ioThreadName = "flow-coord-io"

    /// The endpoint as bound (with the real port when the configuration asked for `*`).
    public var endpoint: String? { lifecycle.withLock { $0.endpoint } }

    /// The cluster now.
    public var status: Status { mailbox.status }

    /// The workers connected now, by name, with their labels.
    public var connectedWorkers: [ConnectedWorker] { mailbox.connectedWorkers }

    /// Binds the endpoint and starts the I/O thread; returns once the socket is bound, without
    /// blocking a thread meanwhile.
    ///
    /// - Returns: the bound endpoint.
    /// - Throws: ``ClusterError/cannotBind(endpoint:reason:)``; ``ClusterError/notRunning`` when
    ///   already started or stopped.
    @discardableResult
    public func start() async throws -> String {
        var zap: (@Sendable (ZMQContext) throws -> ZAPHandler)?
        var admits: (@Sendable (String) -> Bool)?
        if let curve = configuration.curve {
            // Started on the I/O thread before the socket is bound: it must answer before the
            // first peer finishes its handshake.
            let (onEvent, logger) = (self.onEvent, self.logger)
            zap = { context in
                try ZAPHandler(context: context, keys: curve.authorizedKeys, logger: logger) { address, key in
                    let event = ClusterEvent.peerRefused(address: address, key: key)
                    logger.log(level: event.logLevel, "\(event)", metadata: event.metadata)
                    onEvent(event)
                }
            }
            admits = { @Sendable [shell] key in shell.zap?.admits(key) ?? false }
        }
        let loop = CoordinatorIOLoop(configuration: configuration, mailbox: mailbox, wakeup: shell.wakeup, executor: loopExecutor, logger: logger,
                                     admits: admits, onEvent: onEvent)
        let endpoint = try await shell.start(name: Self.ioThreadName, endpoint: configuration.endpoint, zap: zap) {
            [context = shell.context, configuration, mailbox, logger] ready in
            if let pool = configuration.pool {
                // A client of a pool: one DEALER to it, no socket of its own to bind.
                let link: PoolLink
                do {
                    link = try PoolLink(connection: pool, context: context, logger: logger)
                } catch {
                    return ready(.failure(.cannotConnect(endpoint: pool.endpoint, reason: (error as? ZMQError)?.message ?? "\(error)")))
                }
                defer { link.close() }
                link.onWorkers = { [mailbox] in mailbox.showPoolWorkers($0) }
                mailbox.open()
                ready(.success(pool.endpoint))
                loop.run(on: link.socket, link: link)
                return
            }
            BoundRouter.serve(configuration.endpoint, context: context, curveSecretKey: configuration.curve?.keyPair.secretKey,
                              maximumInboundFrameSize: configuration.maximumInboundFrameSize, ready: ready, opened: mailbox.open) {
                loop.run(on: $0, monitor: $1)
            }
        }
        lifecycle.withLock { $0 = (true, endpoint) }
        return endpoint
    }

    /// Binds (unless ``start()`` already did) and serves until graceful shutdown or cancellation,
    /// then stops.
    public func run() async throws {
        if !lifecycle.withLock({ $0.started }) { try await start() }
        try? await gracefulShutdown()
        await stop()
    }

    /// Waits until at least `count` workers are connected.
    ///
    /// - Returns: whether they were there before `timeout` passed.
    public func waitForWorkers(_ count: Int, timeout: Duration) async -> Bool {
        // Woken by the I/O thread the moment the count is reached (a local run waits here for
        // its workers, and every millisecond counts), or by the time-out.
        let reached = await withTaskGroup(of: Bool.self) { group in
            group.addTask { [mailbox] in await mailbox.workers(atLeast: count) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        return reached || status.workers >= count
    }

    /// Tells every worker goodbye, stops the I/O thread and closes the socket; returns once the
    /// thread has ended, resumed by it (no thread waits meanwhile). Tasks still waiting finish as
    /// cancelled. Safe to call more than once, and before ``start()``.
    public func stop() async {
        requestStop()
        await shell.waitForEnd()
    }

    /// Asks the I/O thread to end and returns at once; the thread says goodbye and closes the
    /// socket and the context by itself. For `deinit`, where nothing waits: ``stop()`` otherwise.
    func requestStop() {
        _ = mailbox.close()
        shell.requestStop()
    }

    /// Pauses the run (no task starts; running ones finish, and ones waiting in workers' queues
    /// come back) or lets it go on.
    public func setPaused(_ paused: Bool) {
        if case .queued(true) = mailbox.post(.setPaused(paused)) { loopExecutor.wake() }
    }

    /// Replaces the workers a CURVE coordinator admits (on SIGHUP): peers that connect from now
    /// on are judged by `keys`. A no-op for a plaintext coordinator.
    public func reloadAuthorizedKeys(_ keys: AuthorizedKeys) {
        shell.zap?.reload(keys)
    }
}
