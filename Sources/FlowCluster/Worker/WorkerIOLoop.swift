import Flow
import FlowWire
import Foundation
import Logging
import ZeroMQ

/// The worker's I/O thread: owns the DEALER socket, reads it, feeds ``WorkerStateMachine``, and
/// performs what it returns: sends, starts and cancels tasks (Swift tasks running
/// ``WorkerTaskRunner``), reconnects, stops.
struct WorkerIOLoop {
    let configuration: FlowWorker.Configuration
    let registry: FlowOperationRegistry
    let logger: Logger
    let context: ZMQContext
    let wakeup: ZMQWakeup
    let mailbox: WorkerMailbox
    private let clock = ContinuousClock()

    init(configuration: FlowWorker.Configuration, registry: FlowOperationRegistry, logger: Logger, context: ZMQContext,
         wakeup: ZMQWakeup, mailbox: WorkerMailbox) {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        self.context = context
        self.wakeup = wakeup
        self.mailbox = mailbox
    }

    /// The features this worker keeps (§7.1): it gives a TASK's op attempt and retry policy to the
    /// op, queues tasks beyond its slots, and takes CANCEL.
    static let features = WireReady.Feature.operationAttempt | WireReady.Feature.retryPolicy | WireReady.Feature.queue
        | WireReady.Feature.cancel

    /// The READY a worker of `configuration` offering `registry`'s ops says on every connection.
    static func ready(for configuration: FlowWorker.Configuration, registry: FlowOperationRegistry) -> WireReady {
        WireReady(workerName: configuration.name, features: features, slotCount: UInt32(configuration.concurrency), ops: registry.names,
                  hostname: ProcessInfo.processInfo.hostName, processID: UInt32(ProcessInfo.processInfo.processIdentifier),
                  heartbeatIntervalMilliseconds: UInt32(max(1, (configuration.heartbeatInterval.seconds * 1000).rounded())))
    }

    private var ready: WireReady { Self.ready(for: configuration, registry: registry) }

    private func connect() throws(ClusterError) -> ZMQSocket {
        do {
            let dealer = try ZMQSocket(context: context, type: .dealer)
            // The transport retries a connection nobody answers by itself, first after 10 ms,
            // then waiting twice as long each time up to the configured interval: a standing
            // worker finds a coordinator started later within that interval.
            let longest = max(10, Int((configuration.reconnectInterval.seconds * 1000).rounded()))
            try dealer.set(.sendHighWaterMark(0), .receiveHighWaterMark(0), .reconnectInterval(milliseconds: 10),
                           .reconnectIntervalMax(milliseconds: longest))
            if let curve = configuration.curve {
                try dealer.set(.curvePublicKey(curve.keyPair.publicKey), .curveSecretKey(curve.keyPair.secretKey),
                               .curveServerKey(curve.coordinatorKey))
            }
            try dealer.connect(configuration.endpoint)
            return dealer
        } catch {
            throw .cannotConnect(endpoint: configuration.endpoint, reason: (error as? ZMQError)?.message ?? "\(error)")
        }
    }

    /// Serves until the machine says stop; returns the error that kept it from starting, if any.
    func run() -> ClusterError? {
        var dealer: ZMQSocket
        do {
            dealer = try connect()
        } catch {
            return error
        }
        logger.info("connecting to \(configuration.endpoint) as \(configuration.name) with \(configuration.concurrency) slots")
        if let problem = WorkerEndpoint.resolutionProblem(configuration.endpoint) {
            // libzmq would only retry in silence; the worker goes on trying too (the name may
            // appear later, as a service's does), but says why nothing answers.
            logger.warning("\(problem); still trying, in case the name appears later")
        }
        var machine = WorkerStateMachine(
            configuration: .init(ready: ready, slots: configuration.concurrency, heartbeatInterval: configuration.heartbeatInterval,
                                 liveness: configuration.liveness,
                                 noAnswerHint: "no answer from \(configuration.endpoint): is the coordinator running"
                                     + (configuration.curve == nil ? ", and does it use CURVE (then give --curve-key and --coordinator-key)?"
                                                                   : ", and is --coordinator-key right?"),
                                 silentAgainHint: "no answer from \(configuration.endpoint), which answered this worker before: "
                                     + "the network between them or the coordinator is down",
                                 coordinator: "the coordinator at \(configuration.endpoint)"),
            now: clock.now)
        var tasks: [UInt64: Task<Void, Never>] = [:]
        let executor = LoopExecutor(wakeup: wakeup)
        executor.attach()
        defer { executor.close() }
        let runner = WorkerTaskRunner(registry: registry, workerName: configuration.name, metrics: configuration.metrics)
        var poller = ZMQPoller()
        var dealerIndex = poller.register(dealer)
        var wakeupIndex = poller.register(wakeup)
        var pending = machine.connected(now: clock.now)
        let pollMilliseconds = Int(min(100, configuration.heartbeatInterval.seconds * 250).rounded(.up))

        while true {
            // Perform, then feed what the actions cause back, until nothing is left.
            var reconnect = false
            for action in pending {
                switch action {
                case .send(let message):
                    for frames in ResultSizeGuard.frames(for: message) { _ = try? dealer.send(frames, flags: .dontWait) }
                case .start(let run, let task):
                    tasks[run] = Task(executorPreference: executor) { [mailbox] in
                        let result = await runner.run(task)
                        if mailbox.post(run: run, result: result) { executor.wake() }
                    }
                case .cancel(let run):
                    tasks[run]?.cancel()
                case .reconnect:
                    reconnect = true
                case .stop:
                    // Give the DISCONNECT a moment to leave before the socket closes.
                    try? dealer.set(.linger(milliseconds: 500))
                    dealer.close()
                    for task in tasks.values { task.cancel() }
                    return nil
                case .log(let level, let message, let metadata):
                    logger.log(level: level, "\(message)", metadata: metadata)
                }
            }
            pending = []
            if reconnect {
                dealer.close()
                do {
                    dealer = try connect()
                } catch {
                    logger.error("reconnect failed: \(error)")
                    return error
                }
                poller = ZMQPoller()
                dealerIndex = poller.register(dealer)
                wakeupIndex = poller.register(wakeup)
                pending = machine.connected(now: clock.now)
                continue
            }

            // Ops just started on this thread (``LoopExecutor``) run at once, without a poll
            // first; the socket is still read every few turns.
            let (polled, mayWait) = executor.startTurn()
            if polled {
                do {
                    _ = try poller.poll(timeout: mayWait ? pollMilliseconds : 0)
                } catch {
                    logger.error("worker poll failed: \(error)")
                    return nil
                }
            }
            let now = clock.now
            if polled, poller.events(at: wakeupIndex).contains(.readable) { _ = try? wakeup.drain() }
            if polled, poller.events(at: dealerIndex).contains(.readable) {
                while let frames = try? dealer.receiveMultipart(dontWait: true) {
                    do {
                        pending += machine.received(try WireCodec.decode(frames), now: now)
                    } catch {
                        if error.code == .unsupportedVersion, let version = frames.first.flatMap(WireLimits.version(ofSignature:)) {
                            pending += machine.receivedOtherVersion(version, said: Self.disconnectReason(in: frames), now: now)
                        } else {
                            pending += machine.receivedMalformed(String(describing: error), now: now)
                        }
                    }
                }
            }
            executor.runPending()
            let (finished, drain) = mailbox.take()
            for (run, result) in finished {
                tasks[run] = nil
                pending += machine.finished(run: run, result: result, now: now)
            }
            if drain { pending += machine.drain(now: now, date: Date()) }
            pending += machine.tick(now: now, date: Date())
            pending += machine.flush(now: now)
        }
    }
}
