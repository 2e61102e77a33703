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
    /// The group bytes budgets of this registration (RATE in, PROGRESS out).
    private let byteBudgets = WorkerByteBudgets()
    private let checkpoints: WorkerCheckpoints
    private let clock = ContinuousClock()

    init(configuration: FlowWorker.Configuration, registry: FlowOperationRegistry, logger: Logger, context: ZMQContext,
         wakeup: ZMQWakeup, mailbox: WorkerMailbox) {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        self.context = context
        self.wakeup = wakeup
        self.mailbox = mailbox
        checkpoints = WorkerCheckpoints { [logger] in logger.warning("\($0)") }
    }

    /// The features this worker keeps (§7.1): it gives a TASK's op attempt and retry policy to the
    /// op, queues tasks beyond its slots, takes CANCEL, holds its ops to RATE's bytes and
    /// requests rates (§15), and gives a TASK's checkpoint to the op and sends what it saves (§7.9).
    static let features = WireReady.Feature.operationAttempt | WireReady.Feature.retryPolicy | WireReady.Feature.queue
        | WireReady.Feature.cancel | WireReady.Feature.progress | WireReady.Feature.requests | WireReady.Feature.checkpoint

    /// The READY a worker of `configuration` offering `registry`'s ops says on every connection.
    static func ready(for configuration: FlowWorker.Configuration, registry: FlowOperationRegistry) -> WireReady {
        // Bit 7 only with labels to say: a worker without any saves the coordinator its question.
        let labels = configuration.labels.isEmpty ? 0 : WireReady.Feature.labels
        return WireReady(workerName: configuration.name, features: features | labels, slotCount: UInt32(configuration.concurrency), ops: registry.names,
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

    /// The DEALER socket of one connection, with the poller that watches it and the loop's wake-up.
    private struct Connection {
        let dealer: ZMQSocket
        let poller: ZMQPoller
        let dealerIndex: Int
        let wakeupIndex: Int
    }

    private func open() throws(ClusterError) -> Connection {
        let dealer = try connect()
        let poller = ZMQPoller()
        let dealerIndex = poller.register(dealer)
        return Connection(dealer: dealer, poller: poller, dealerIndex: dealerIndex, wakeupIndex: poller.register(wakeup))
    }

    /// Swift tasks running the worker's tasks, with what tells their ops why they are cancelled,
    /// by the machine's run id.
    private typealias RunningTasks = [UInt64: (task: Task<Void, Never>, cause: FlowCancellationCause)]

    /// Serves until the machine says stop; returns the error that kept it from starting, if any.
    func run() -> ClusterError? {
        var connection: Connection
        do {
            connection = try open()
        } catch {
            return error
        }
        logger.info("connecting to \(configuration.endpoint) as \(configuration.name) with \(configuration.concurrency) slots")
        if let problem = WorkerEndpoint.resolutionProblem(configuration.endpoint) {
            // libzmq would only retry in silence; the worker goes on trying too (the name may
            // appear later, as a service's does), but says why nothing answers.
            logger.warning("\(problem); still trying, in case the name appears later")
        }
        var machine = makeMachine()
        var tasks: RunningTasks = [:]
        let executor = LoopExecutor(wakeup: wakeup)
        executor.attach()
        defer { executor.close() }
        let runner = WorkerTaskRunner(registry: registry, workerName: configuration.name, metrics: configuration.metrics,
                                      byteBudgets: byteBudgets, checkpoints: checkpoints)
        var pending = machine.connected(now: clock.now)
        let pollMilliseconds = Int(min(100, configuration.heartbeatInterval.seconds * 250).rounded(.up))

        while true {
            // Perform, then feed what the actions cause back, until nothing is left.
            switch perform(pending, on: connection.dealer, tasks: &tasks, executor: executor, runner: runner) {
            case .stop:
                return nil
            case .reconnect:
                // Rates, budget ids and unsent checkpoints are the old coordinator's.
                forgetCoordinator()
                connection.dealer.close()
                do {
                    connection = try open()
                } catch {
                    logger.error("reconnect failed: \(error)")
                    return error
                }
                pending = machine.connected(now: clock.now)
                continue
            case .goOn:
                pending = []
            }
            // Ops just started on this thread (``LoopExecutor``) run at once, without a poll
            // first; the socket is still read every few turns.
            let (polled, mayWait) = executor.startTurn()
            if polled {
                do {
                    _ = try connection.poller.poll(timeout: mayWait ? pollMilliseconds : 0)
                } catch {
                    logger.error("worker poll failed: \(error)")
                    return nil
                }
            }
            let now = clock.now
            if polled { receive(on: connection, machine: &machine, now: now, into: &pending) }
            executor.runPending()
            advance(&machine, tasks: &tasks, now: now, into: &pending)
        }
    }

    /// Forgets what belonged to the coordinator this worker leaves: its rates and budget ids, and
    /// checkpoints not sent to it.
    private func forgetCoordinator() {
        byteBudgets.reset()
        checkpoints.reset()
    }

    /// Feeds the machine the tasks that finished, a drain asked for, and the time.
    private func advance(_ machine: inout WorkerStateMachine, tasks: inout RunningTasks, now: ContinuousClock.Instant,
                         into pending: inout [WorkerStateMachine.Action]) {
        let (finished, drain) = mailbox.take()
        // Taken after the results: whatever an op saved or sent before it returned is here, and
        // goes before its RESULT (a coordinator counts no progress of a task that ended): its
        // checkpoints now, its progress as the RESULT goes (``WorkerStateMachine/flush(now:progress:)``),
        // which covers too the tasks the tick answers without their op.
        if let saved = checkpoints.take() { pending += machine.report(saved, now: now) }
        for (run, result) in finished {
            tasks[run] = nil
            pending += machine.finished(run: run, result: result, now: now)
        }
        if drain { pending += machine.drain(now: now, date: Date()) }
        pending += machine.tick(now: now, date: Date())
        pending += machine.flush(now: now) { byteBudgets.takeProgress(now: now, force: true) }
        if let progress = byteBudgets.takeProgress(now: now) { pending += machine.report(progress, now: now) }
    }

    /// The worker's state machine, with the hints it gives when the coordinator does not answer.
    private func makeMachine() -> WorkerStateMachine {
        let endpoint = configuration.endpoint
        let noAnswerHint = "no answer from \(endpoint): is the coordinator running"
            + (configuration.curve == nil ? ", and does it use CURVE (then give --curve-key and --coordinator-key)?"
                                          : ", and is --coordinator-key right?")
        return WorkerStateMachine(
            configuration: .init(ready: ready, labels: configuration.labels.map { WireLabel(key: $0.key, value: $0.value) }.sorted(),
                                 slots: configuration.concurrency, heartbeatInterval: configuration.heartbeatInterval,
                                 liveness: configuration.liveness, noAnswerHint: noAnswerHint,
                                 silentAgainHint: "no answer from \(endpoint), which answered this worker before: "
                                     + "the network between them or the coordinator is down",
                                 coordinator: "the coordinator at \(endpoint)"),
            now: clock.now)
    }

    /// What the loop does once a turn's actions are performed.
    private enum AfterActions {
        case goOn
        case reconnect
        case stop
    }

    /// Performs the machine's actions: sends, starts and cancels tasks, logs; a `stop` closes the
    /// socket and cancels every task at once.
    private func perform(_ actions: [WorkerStateMachine.Action], on dealer: ZMQSocket, tasks: inout RunningTasks,
                         executor: LoopExecutor, runner: WorkerTaskRunner) -> AfterActions {
        var after = AfterActions.goOn
        for action in actions {
            switch action {
            case .send(let message):
                for frames in ResultSizeGuard.frames(for: message) { _ = try? dealer.send(frames, flags: .dontWait) }
            case .start(let run, let task):
                let cause = FlowCancellationCause()
                tasks[run] = (Task(executorPreference: executor) { [mailbox] in
                    let result = await runner.run(task, cause: cause)
                    if mailbox.post(run: run, result: result) { executor.wake() }
                }, cause)
            case .cancel(let run):
                tasks[run]?.task.cancel()
            case .coordinatorLost(let runs):
                for run in runs { tasks[run]?.cause.coordinatorLost() }
            case .setRates(let rates):
                byteBudgets.set(rates)
            case .reconnect:
                after = .reconnect
            case .stop:
                // Give the DISCONNECT a moment to leave before the socket closes.
                try? dealer.set(.linger(milliseconds: 500))
                dealer.close()
                for running in tasks.values { running.task.cancel() }
                return .stop
            case .log(let level, let message, let metadata):
                logger.log(level: level, "\(message)", metadata: metadata)
            }
        }
        return after
    }

    /// Drains the wake-up and reads every message waiting on the socket into the machine.
    private func receive(on connection: Connection, machine: inout WorkerStateMachine, now: ContinuousClock.Instant,
                         into pending: inout [WorkerStateMachine.Action]) {
        if connection.poller.events(at: connection.wakeupIndex).contains(.readable) { _ = try? wakeup.drain() }
        guard connection.poller.events(at: connection.dealerIndex).contains(.readable) else { return }
        while let frames = try? connection.dealer.receiveMultipart(dontWait: true) {
            do {
                pending += machine.received(try WireCodec.decode(frames), now: now)
            } catch {
                if error.code == .unsupportedVersion, let version = frames.first.flatMap(WireLimits.version(ofSignature:)) {
                    pending += machine.receivedOtherVersion(version, said: Self.disconnectReason(in: frames), now: now)
                } else {
                    // Only a FLOW02 message is a sign of life (§8.5): not one that is not FLOW at all.
                    pending += machine.receivedMalformed(String(describing: error), signOfLife: error.code != .wrongProtocol, now: now)
                }
            }
        }
    }
}
