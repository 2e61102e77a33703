import Flow
import FlowWire
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

/// A worker process's engine: connects a DEALER to the coordinator, says READY with its ops and
/// slots, runs up to `concurrency` tasks at once, heartbeats, and reconnects when the coordinator
/// goes silent or restarts.
///
/// It is a `Service`: on graceful shutdown (SIGTERM or SIGINT in a `ServiceGroup`) it stops taking
/// tasks, finishes the running ones, sends their RESULTs, says DISCONNECT and returns.
///
/// ```swift
/// var registry = FlowOperationRegistry.standard
/// registry.register("ResizeOp") { params in ResizeOp(width: try params.integer("width")) }
/// let worker = FlowWorker(configuration: .init(endpoint: "tcp://coordinator:5555"), registry: registry, logger: logger)
/// try await ServiceGroup(services: [worker], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
/// ```
public final class FlowWorker: Service, @unchecked Sendable {
    /// Where to connect and how to behave.
    public struct Configuration: Sendable {
        /// The coordinator's endpoint, for example `tcp://10.0.0.5:5555`.
        public var endpoint: String
        /// The name shown in summaries (`[Op abcd @ NAME]`); host and process id by default.
        public var name: String
        /// How many tasks run at once.
        public var concurrency: Int
        /// Seconds between heartbeats.
        public var heartbeatInterval: Double = 1
        /// Missed heartbeat intervals before the worker reconnects.
        public var liveness: Int = 3

        /// Creates a configuration.
        public init(endpoint: String, name: String? = nil, concurrency: Int = ProcessInfo.processInfo.activeProcessorCount) {
            self.endpoint = endpoint
            self.name = name ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
            self.concurrency = max(1, concurrency)
        }
    }

    public let configuration: Configuration
    private let registry: FlowOperationRegistry
    private let logger: Logger
    private let context: ZMQContext
    private let wakeup: ZMQWakeup
    private let lock = NSLock()
    private var outbox: [WireResult] = []
    private var running = 0
    private var draining = false
    private var exited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []
    private var startError: ClusterError?

    /// Creates a worker; ``run()`` connects it.
    ///
    /// - Parameters:
    ///   - configuration: the coordinator endpoint, name and concurrency.
    ///   - registry: the ops this worker offers.
    ///   - logger: diagnostics.
    public init(configuration: Configuration, registry: FlowOperationRegistry, logger: Logger) throws {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        context = try ZMQContext()
        wakeup = try ZMQWakeup(context: context)
    }

    /// Connects and serves tasks until graceful shutdown, then drains and returns.
    ///
    /// - Throws: ``ClusterError/cannotConnect(endpoint:reason:)`` for a bad endpoint.
    public func run() async throws {
        let thread = Thread { [self] in
            ioThread()
            let waiters = lock.withLock {
                exited = true
                defer { exitWaiters = [] }
                return exitWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = "flow-worker-io"
        thread.start()
        await withGracefulShutdownHandler {
            await waitForExit()
        } onGracefulShutdown: {
            self.drain()
        }
        wakeup.close()
        context.close()
        if let error = lock.withLock({ startError }) { throw error }
    }

    /// Stops taking tasks; the worker finishes the running ones, says DISCONNECT and ``run()``
    /// returns.
    public func drain() {
        lock.withLock { draining = true }
        wakeup.signal()
    }

    private func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock {
                if exited { return true }
                exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: I/O thread

    private var ready: WireMessage {
        .ready(WireReady(workerName: configuration.name, slotCount: UInt32(configuration.concurrency), ops: registry.names,
                         hostname: ProcessInfo.processInfo.hostName, processID: UInt32(ProcessInfo.processInfo.processIdentifier),
                         heartbeatIntervalMilliseconds: UInt32(max(1, (configuration.heartbeatInterval * 1000).rounded()))))
    }

    private func connect() throws -> ZMQSocket {
        let dealer = try ZMQSocket(context: context, type: .dealer)
        try dealer.set(.sendHighWaterMark(0), .receiveHighWaterMark(0), .reconnectInterval(milliseconds: 100), .reconnectIntervalMax(milliseconds: 1000))
        try dealer.connect(configuration.endpoint)
        _ = try dealer.send(WireCodec.encode(ready), flags: .dontWait)
        return dealer
    }

    private func ioThread() {
        var dealer: ZMQSocket
        do {
            dealer = try connect()
        } catch {
            let reason = (error as? ZMQError)?.message ?? "\(error)"
            lock.withLock { startError = .cannotConnect(endpoint: configuration.endpoint, reason: reason) }
            return
        }
        logger.info("connecting to \(configuration.endpoint) as \(configuration.name) with \(configuration.concurrency) slots")
        let runner = WorkerTaskRunner(registry: registry, workerName: configuration.name)
        let interval = configuration.heartbeatInterval
        var lastReceived = FlowCoordinator.now()
        var lastSent = lastReceived
        var announcedDrain = false

        var poller = ZMQPoller()
        var dealerIndex = poller.register(dealer)
        var wakeupIndex = poller.register(wakeup.receiver)
        while true {
            do {
                _ = try poller.poll(timeout: Int(min(100, interval * 250)))
            } catch {
                logger.error("worker poll failed: \(error)")
                break
            }
            let now = FlowCoordinator.now()
            if poller.events(at: wakeupIndex).contains(.readable) { _ = try? wakeup.drain() }
            if poller.events(at: dealerIndex).contains(.readable) {
                while let frames = try? dealer.receiveMultipart(dontWait: true) {
                    lastReceived = now
                    handle(frames, dealer: dealer, runner: runner, lastSent: &lastSent, now: now)
                }
            }
            let (results, isDraining, runningNow) = lock.withLock {
                defer { outbox.removeAll(keepingCapacity: true) }
                return (outbox, draining, running)
            }
            if !results.isEmpty {
                _ = try? dealer.send(WireCodec.encode(.result(results)), flags: .dontWait)
                lastSent = now
            }
            if isDraining {
                if !announcedDrain {
                    logger.info("draining: finishing \(runningNow) running task(s), taking no more")
                    announcedDrain = true
                }
                if runningNow == 0 {
                    _ = try? dealer.send(WireCodec.encode(.disconnect(reason: "worker stopping")), flags: .dontWait)
                    // Give the DISCONNECT a moment to leave before the socket closes (linger 0).
                    try? dealer.set(.linger(milliseconds: 500))
                    dealer.close()
                    logger.info("stopped")
                    return
                }
            }
            if now - lastSent >= interval {
                _ = try? dealer.send(WireCodec.encode(.heartbeat), flags: .dontWait)
                lastSent = now
            }
            if now - lastReceived > interval * Double(configuration.liveness) {
                logger.warning("coordinator silent for \(String(format: "%.1f", now - lastReceived)) s: reconnecting to \(configuration.endpoint)")
                dealer.close()
                do {
                    dealer = try connect()
                } catch {
                    logger.error("reconnect failed: \(error)")
                    return
                }
                poller = ZMQPoller()
                dealerIndex = poller.register(dealer)
                wakeupIndex = poller.register(wakeup.receiver)
                lastReceived = now
                lastSent = now
            }
        }
        dealer.close()
    }

    private func handle(_ frames: [Data], dealer: ZMQSocket, runner: WorkerTaskRunner, lastSent: inout Double, now: Double) {
        let message: WireMessage
        do {
            message = try WireCodec.decode(frames)
        } catch {
            logger.warning("dropped a malformed message from the coordinator: \(error)")
            return
        }
        switch message {
        case .task(let tasks):
            for task in tasks { accept(task, runner: runner) }
        case .heartbeat:
            break
        case .disconnect(let reason):
            logger.info("coordinator said DISCONNECT (\(reason)): registering again")
            _ = try? dealer.send(WireCodec.encode(ready), flags: .dontWait)
            lastSent = now
        case .ready, .result:
            logger.warning("unexpected \(message.command) from the coordinator: dropped")
        }
    }

    private func accept(_ task: WireTask, runner: WorkerTaskRunner) {
        let refused: String? = lock.withLock {
            if draining { return "draining" }
            if running >= configuration.concurrency { return "all \(configuration.concurrency) slots busy" }
            running += 1
            return nil
        }
        if let refused {
            // The coordinator gives the task to another worker when this one disconnects.
            logger.warning("refused task \(task.taskID) (\(task.op)): \(refused)")
            return
        }
        Task.detached { [self] in
            let result = await runner.run(task)
            lock.withLock {
                outbox.append(result)
                running -= 1
            }
            wakeup.signal()
        }
    }
}
