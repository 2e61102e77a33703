import Flow
import FlowWire
import Foundation
import Logging
import ZeroMQ

/// Runs a flow's ops on workers: binds a ZeroMQ ROUTER, admits workers that say READY, and
/// hands each task the engine gives it (``FlowExecutor/execute(_:)``) to a worker that offers the
/// op and has a free slot.
///
/// One dedicated I/O thread owns the socket and runs ``CoordinatorStateMachine``; async callers
/// queue work for it and wake it through an `inproc://` pair. Use it as a flow's executor:
///
/// ```swift
/// let coordinator = FlowCoordinator(configuration: .init(endpoint: "tcp://0.0.0.0:5555"), logger: logger)
/// try coordinator.start()
/// let flow = Flow(definition: definition).setExecutor(coordinator)
/// await flow.run()
/// coordinator.stop()
/// ```
public final class FlowCoordinator: FlowExecutor, @unchecked Sendable {
    /// How the coordinator listens and how patient it is.
    public struct Configuration: Sendable {
        /// The endpoint to bind, for example `tcp://0.0.0.0:5555` or `ipc:///tmp/flow.sock`.
        public var endpoint: String
        /// The coordinator heartbeats each worker at the interval the worker announces in READY;
        /// this sets how often it checks (a quarter of it, at most every 50 ms).
        public var heartbeatInterval: Double = 1
        /// Missed heartbeat intervals before a worker is declared dead.
        public var liveness: Int = 3
        /// Seconds a task waits for a worker offering its op before it fails.
        public var workerTimeout: Double = 30
        /// Workers that may die running one task before it is quarantined.
        public var maxAttempts: UInt32 = 3
        /// Changes a task before it is sent, by op name: for example, reads the file an
        /// `UploadFileOp` with `source: coordinator` uploads, so workers that share no disk with
        /// the coordinator get its bytes. Runs only for tasks about to be in flight, so memory holds
        /// no more than the in-flight tasks' data. A thrown error fails the task.
        public var taskPreparers: [String: @Sendable (inout WireTask) throws -> Void] = [:]
        /// Ops the coordinator runs itself instead of sending them to a worker, for ops about the
        /// coordinator's own machine: `ListFilesOp` lists the folder the coordinator sees, which
        /// is what `UploadFileOp` with `source: coordinator` then reads. Built from
        /// ``localRegistry``; their summary tag says `@ coordinator`.
        public var localOperations: Set<String> = []
        /// Builds the ``localOperations``.
        public var localRegistry = FlowOperationRegistry()

        /// Creates a configuration.
        public init(endpoint: String) {
            self.endpoint = endpoint
        }
    }

    /// A snapshot of the cluster, for progress output.
    public struct Status: Sendable {
        /// Connected workers.
        public var workers: Int
        /// Slots of all connected workers.
        public var slots: Int
        /// Tasks running on workers.
        public var running: Int
        /// Tasks waiting for a worker.
        public var queued: Int
    }

    private enum Command {
        case submit(WireTask)
        case cancel(UInt64)
    }

    private struct Waiter {
        var continuation: CheckedContinuation<FlowTaskResult, Never>
        var operationName: String
        var groupIndex: Int?
    }

    public let configuration: Configuration
    private let logger: Logger
    private let onEvent: @Sendable (ClusterEvent) -> Void
    private let context: ZMQContext
    private let wakeup: ZMQWakeup
    private let lock = NSLock()
    private var commands: [Command] = []
    private var waiters: [UInt64: Waiter] = [:]
    private var nextTaskID: UInt64 = 0
    private var stopping = false
    private var thread: Thread?
    private var threadFinished = DispatchSemaphore(value: 0)
    private var currentStatus = Status(workers: 0, slots: 0, running: 0, queued: 0)
    private var boundEndpoint: String?

    /// Creates a coordinator; ``start()`` binds it.
    ///
    /// - Parameters:
    ///   - configuration: where to listen and the time limits.
    ///   - logger: diagnostics, with `worker.name` and `task.id` metadata.
    ///   - onEvent: called on the I/O thread for every ``ClusterEvent`` (keep it short).
    public init(configuration: Configuration, logger: Logger, onEvent: @escaping @Sendable (ClusterEvent) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
        context = try ZMQContext()
        wakeup = try ZMQWakeup(context: context)
    }

    deinit {
        stop()
    }

    /// The endpoint as bound (with the real port when the configuration asked for `*`).
    public var endpoint: String? { lock.withLock { boundEndpoint } }

    /// The cluster now.
    public var status: Status { lock.withLock { currentStatus } }

    /// Binds the endpoint and starts the I/O thread.
    ///
    /// - Returns: the bound endpoint.
    /// - Throws: ``ClusterError/cannotBind(endpoint:reason:)``.
    @discardableResult
    public func start() throws -> String {
        let ready = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        let thread = Thread { [self] in
            ioThread(ready: ready, outcome: outcome)
            threadFinished.signal()
        }
        thread.name = "flow-coordinator-io"
        thread.start()
        ready.wait()
        if let error = outcome.error {
            threadFinished.wait()
            throw error
        }
        lock.withLock { self.thread = thread }
        return outcome.endpoint ?? configuration.endpoint
    }

    /// Waits until at least `count` workers are connected.
    ///
    /// - Returns: whether they were there before `timeout` seconds passed.
    public func waitForWorkers(_ count: Int, timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if status.workers >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return status.workers >= count
    }

    /// Tells every worker goodbye, stops the I/O thread and closes the socket. Tasks still waiting
    /// finish as cancelled.
    public func stop() {
        let (thread, alreadyStopping) = lock.withLock {
            defer { stopping = true }
            return (self.thread, stopping)
        }
        guard !alreadyStopping else { return }
        if thread != nil {
            wakeup.signal()
            threadFinished.wait()
        }
        let left = lock.withLock {
            defer { waiters = [:] }
            return waiters
        }
        for (_, waiter) in left {
            waiter.continuation.resume(returning: Self.cancelledResult(waiter))
        }
        wakeup.close()
        context.close()
    }

    // MARK: FlowExecutor

    public func execute(_ task: FlowTask) async -> FlowTaskResult {
        if case .named(let name, _) = task.operation, configuration.localOperations.contains(name) {
            var result = await FlowLocalExecutor(registry: configuration.localRegistry).execute(task)
            result.worker = "coordinator"
            return result
        }
        let wire: WireTask
        switch makeWireTask(task) {
        case .success(let made): wire = made
        case .failure(let error):
            var result = FlowTaskResult.failure(error, operationName: task.operationName)
            result.groupIndex = task.groupIndex
            return result
        }
        let taskID = wire.taskID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FlowTaskResult, Never>) in
                let waiter = Waiter(continuation: continuation, operationName: task.operationName, groupIndex: task.groupIndex)
                // One wake-up per batch, not per task: only the command that finds the queue empty
                // signals; the I/O thread takes the whole queue when it wakes.
                let (refused, mustSignal) = lock.withLock {
                    if stopping || Task.isCancelled { return (true, false) }
                    waiters[taskID] = waiter
                    let wasEmpty = commands.isEmpty
                    commands.append(.submit(wire))
                    return (false, wasEmpty)
                }
                if refused {
                    continuation.resume(returning: Self.cancelledResult(waiter))
                } else if mustSignal {
                    wakeup.signal()
                }
            }
        } onCancel: {
            let waiter = lock.withLock {
                commands.append(.cancel(taskID))
                return waiters.removeValue(forKey: taskID)
            }
            wakeup.signal()
            if let waiter { waiter.continuation.resume(returning: Self.cancelledResult(waiter)) }
        }
    }

    private func makeWireTask(_ task: FlowTask) -> Result<WireTask, ClusterError> {
        let name: String
        let parameters: [String: FlowValue]
        switch task.operation {
        case .named(let opName, let opParameters):
            (name, parameters) = (opName, opParameters)
        case .instance(let operation):
            name = operation.operationName
            parameters = (operation as? any FlowRemoteOperation)?.remoteParameters ?? [:]
        }
        let taskID = lock.withLock {
            nextTaskID += 1
            return nextTaskID
        }
        var wire: WireTask
        if task.groupIndex != nil {
            guard let element = FlowValue(any: task.groupElement as Any) else {
                return .failure(.unsendableValue(
                    "group element \(task.groupIndex ?? 0) of type \(type(of: task.groupElement as Any)) cannot be sent to a worker: use strings, numbers, bools, bytes, dates, arrays or maps"))
            }
            wire = WireTask(taskID: taskID, op: name, displayTag: task.groupTag ?? "", parameters: parameters, groupElement: element)
        } else {
            switch task.bucket.flowValues() {
            case .success(let bucket):
                wire = WireTask(taskID: taskID, op: name, parameters: parameters, bucket: bucket)
            case .failure(let error):
                return .failure(.unsendableValue(error.description))
            }
        }
        if let prepare = configuration.taskPreparers[name] {
            do {
                try prepare(&wire)
            } catch {
                return .failure(.preparationFailed(op: name, reason: String(describing: error)))
            }
        }
        return .success(wire)
    }

    private static func cancelledResult(_ waiter: Waiter) -> FlowTaskResult {
        let now = Date()
        var result = FlowTaskResult(operationName: waiter.operationName, state: .cancelled, error: CancellationError(),
                                    events: [], bucket: [:], startedAt: now, finishedAt: now)
        result.groupIndex = waiter.groupIndex
        return result
    }

    // MARK: I/O thread

    private final class OutcomeBox: @unchecked Sendable {
        var error: ClusterError?
        var endpoint: String?
    }

    private func ioThread(ready: DispatchSemaphore, outcome: OutcomeBox) {
        let router: ZMQSocket
        do {
            router = try ZMQSocket(context: context, type: .router)
            try router.set(.routerMandatory(true), .sendHighWaterMark(0), .receiveHighWaterMark(0))
            try router.bind(configuration.endpoint)
            let endpoint = (try? router.lastEndpoint) ?? configuration.endpoint
            outcome.endpoint = endpoint
            lock.withLock { boundEndpoint = endpoint }
        } catch {
            outcome.error = .cannotBind(endpoint: configuration.endpoint, reason: String(describing: (error as? ZMQError)?.message ?? "\(error)"))
            ready.signal()
            return
        }
        ready.signal()
        defer { router.close() }

        var machine = CoordinatorStateMachine(configuration: .init(
            liveness: configuration.liveness,
            workerTimeout: configuration.workerTimeout, maxAttempts: configuration.maxAttempts))
        let poller = ZMQPoller()
        let routerIndex = poller.register(router)
        let wakeupIndex = poller.register(wakeup.receiver)
        let tickInterval = min(0.05, configuration.heartbeatInterval / 4)
        var nextTick = Self.now()

        while true {
            let wait = max(0, Int((nextTick - Self.now()) * 1000))
            do {
                _ = try poller.poll(timeout: wait)
            } catch {
                logger.error("coordinator poll failed: \(error)")
                break
            }
            let now = Self.now()
            var actions: [CoordinatorStateMachine.Action] = []
            if poller.events(at: wakeupIndex).contains(.readable) {
                _ = try? wakeup.drain()
                let (queued, stop) = lock.withLock {
                    defer { commands.removeAll(keepingCapacity: true) }
                    return (commands, stopping)
                }
                if stop {
                    perform(machine.shutdown(reason: "coordinator stopping"), on: router)
                    break
                }
                for command in queued {
                    switch command {
                    case .submit(let task): actions += machine.submit(task, now: now)
                    case .cancel(let taskID): actions += machine.cancel(taskID: taskID)
                    }
                }
            }
            if poller.events(at: routerIndex).contains(.readable) {
                actions += receiveAll(from: router, into: &machine, now: now)
            }
            if now >= nextTick {
                actions += machine.tick(now: now)
                nextTick = now + tickInterval
            }
            perform(actions, on: router)
            let snapshot = Status(
                workers: machine.workerCount, slots: machine.workers.values.reduce(0) { $0 + $1.slots },
                running: machine.runningCount, queued: machine.pending.count)
            lock.withLock { currentStatus = snapshot }
        }
    }

    private func receiveAll(from router: ZMQSocket, into machine: inout CoordinatorStateMachine, now: Double) -> [CoordinatorStateMachine.Action] {
        var actions: [CoordinatorStateMachine.Action] = []
        for _ in 0..<10_000 {
            let frames: [Data]
            do {
                guard let received = try router.receiveMultipart(dontWait: true) else { break }
                frames = received
            } catch {
                logger.warning("coordinator receive failed: \(error)")
                break
            }
            guard let peer = frames.first else { continue }
            do {
                let message = try WireCodec.decode(Array(frames.dropFirst()))
                actions += machine.receive(message, from: peer, now: now)
            } catch {
                let name = machine.workers[peer]?.name ?? "peer " + peer.map { String(format: "%02x", $0) }.joined()
                actions.append(.report(.malformedMessage(peer: name, reason: String(describing: error))))
            }
        }
        return actions
    }

    private func perform(_ actions: [CoordinatorStateMachine.Action], on router: ZMQSocket) {
        for action in actions {
            switch action {
            case .send(let peer, let message):
                do {
                    _ = try router.send([peer] + WireCodec.encode(message), flags: .dontWait)
                } catch let error as ZMQError where error.isHostUnreachable {
                    logger.debug("worker gone before \(message): dropped")
                } catch {
                    logger.warning("send \(message) failed: \(error)")
                }
            case .complete(let taskID, let result, let worker):
                guard let waiter = lock.withLock({ waiters.removeValue(forKey: taskID) }) else { continue }
                waiter.continuation.resume(returning: Self.flowResult(result, worker: worker, waiter: waiter))
            case .fail(let taskID, let error):
                guard let waiter = lock.withLock({ waiters.removeValue(forKey: taskID) }) else { continue }
                var result = FlowTaskResult.failure(error, operationName: waiter.operationName)
                result.groupIndex = waiter.groupIndex
                waiter.continuation.resume(returning: result)
            case .report(let event):
                if case .dispatched = event { logger.debug("\(event)") } else { logger.info("\(event)") }
                onEvent(event)
            }
        }
    }

    private static func flowResult(_ result: WireResult, worker: String, waiter: Waiter) -> FlowTaskResult {
        let events = result.events.map { event -> FlowRecordedEvent in
            switch event.kind {
            case .log(let text): return FlowRecordedEvent(time: event.time, kind: .log(text))
            case .set(let key, let value): return FlowRecordedEvent(time: event.time, kind: .set(key: key, value: value.anyValue))
            }
        }
        var converted = FlowTaskResult(operationName: waiter.operationName, state: result.finishState, error: nil,
                                       events: events, bucket: [:], startedAt: result.startedAt,
                                       finishedAt: result.finishedAt, worker: worker)
        converted.groupIndex = waiter.groupIndex
        converted.groupOutput = result.output?.anyValue
        return converted
    }

    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
