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
    /// Tasks of the current registration that are running, and those waiting for a slot.
    private var running: [UInt64: Task<Void, Never>] = [:]
    private var backlog: [WireTask] = []
    /// Bumped at every new registration: tasks of an older one are cancelled and their results
    /// dropped, since the coordinator has already given them to other workers (PROTOCOL.md 8.7).
    private var generation = 0
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
        var lastReceived = Self.uptime()
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
            let now = Self.uptime()
            if poller.events(at: wakeupIndex).contains(.readable) { _ = try? wakeup.drain() }
            if poller.events(at: dealerIndex).contains(.readable) {
                while let frames = try? dealer.receiveMultipart(dontWait: true) {
                    lastReceived = now
                    handle(frames, dealer: dealer, runner: runner, lastSent: &lastSent, now: now)
                }
            }
            let (results, isDraining, runningNow) = lock.withLock {
                defer { outbox.removeAll(keepingCapacity: true) }
                return (outbox, draining, running.count)
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
                startNewRegistration()
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
            startNewRegistration()
            _ = try? dealer.send(WireCodec.encode(ready), flags: .dontWait)
            lastSent = now
        case .ready, .result:
            logger.warning("unexpected \(message.command) from the coordinator: dropped")
        }
    }

    /// Forgets the tasks of the previous registration: cancels the running ones and drops their
    /// results and the waiting ones.
    private func startNewRegistration() {
        let abandoned = lock.withLock {
            generation += 1
            defer {
                running = [:]
                backlog = []
                outbox = []
            }
            return Array(running.values)
        }
        if !abandoned.isEmpty { logger.warning("re-registering: cancelled \(abandoned.count) task(s) the coordinator has given to other workers") }
        for task in abandoned { task.cancel() }
    }

    private func accept(_ task: WireTask, runner: WorkerTaskRunner) {
        let outcome: String? = lock.withLock {
            if draining { return "draining" }
            if running.count >= configuration.concurrency {
                // Not expected (the coordinator respects the slot count), but never dropped.
                backlog.append(task)
                return nil
            }
            startLocked(task, runner: runner)
            return nil
        }
        if let outcome {
            // The coordinator gives the task to another worker when this one says DISCONNECT.
            logger.warning("refused task \(task.taskID) (\(task.op)): \(outcome)")
        }
    }

    /// Starts a task; call with the lock held.
    private func startLocked(_ task: WireTask, runner: WorkerTaskRunner) {
        let registration = generation
        running[task.taskID] = Task.detached { [self] in
            let result = await runner.run(task)
            // Results travel in batches: only the result that finds the outbox empty wakes the
            // I/O thread, which sends the whole outbox as one RESULT.
            let mustSignal = lock.withLock {
                guard registration == generation else { return false }
                let wasEmpty = outbox.isEmpty
                outbox.append(result)
                running[task.taskID] = nil
                if !draining, !backlog.isEmpty { startLocked(backlog.removeFirst(), runner: runner) }
                return wasEmpty
            }
            if mustSignal { wakeup.signal() }
        }
    }
}

extension FlowWorker {
    static func uptime() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
