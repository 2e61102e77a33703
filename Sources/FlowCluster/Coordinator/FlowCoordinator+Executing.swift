public import Flow
import FlowWire
import Foundation

/// The coordinator as the flow's executor: a task the engine hands over (``execute(_:)``) or a
/// group's batch (``submit(_:into:)``) is made a TASK and queued for the I/O thread, which sends
/// it to a worker and hands the result back.
extension FlowCoordinator {
    // MARK: FlowExecutor

    public func execute(_ task: FlowTask) async -> FlowTaskResult {
        guard let metrics = configuration.metrics else { return await dispatch(task) }
        let op = task.registeredOperation.name
        metrics.started(op: op, attempt: task.attempt)
        let result = await dispatch(task)
        metrics.finished(op: op, state: result.state, startedAt: result.startedAt, finishedAt: result.finishedAt)
        return result
    }

    /// The workers a step with `each: worker` runs on (`FlowExecutor.workers(for:)`): those
    /// connected that `placement` allows, by name, once every connected worker's labels are known;
    /// when none is, it waits for one up to the worker time-out, then gives none. Through a pool,
    /// the pool's workers, as it lists them (`STATUS-REPLY`).
    ///
    /// - Throws: ``EachWorkerThroughPool`` for a run through a pool that cannot place a task on
    ///   one of its workers (a release before placement).
    public func workers(for placement: FlowPlacement?) async throws -> [FlowWorkerIdentity]? {
        let deadline = ContinuousClock.now + configuration.workerTimeout
        if configuration.pool != nil { return try await poolWorkers(for: placement, until: deadline) }
        while true {
            let (connected, generation) = mailbox.connectedWorkersAndGeneration
            let matching = connected.filter { placement?.matches($0.allLabels) ?? true }
            let settled = connected.allSatisfy(\.labelsKnown)
            if (settled && !matching.isEmpty) || ContinuousClock.now >= deadline { return Self.identities(matching) }
            // Labels come a round trip after a worker joins, and workers join as they start:
            // looked at again when the I/O thread shows a new list, or at the deadline.
            await workerListChange(after: generation, until: deadline)
            try Task.checkCancellation()
        }
    }

    /// Through a pool (`run --pool`): the pool's workers that `placement` allows, as its
    /// STATUS-REPLY lists them (§14.6), asked for afresh; the pool places each worker's task by
    /// the worker's name (§14.4). A list with none of them is asked for again a moment later,
    /// up to `deadline`.
    private func poolWorkers(for placement: FlowPlacement?, until deadline: ContinuousClock.Instant) async throws -> [FlowWorkerIdentity] {
        while true {
            let asked = mailbox.poolWorkers.generation
            switch mailbox.post(.askPoolWorkers) {
            case .queued(let first): if first { loopExecutor.wake() }
            case .notRunning, .stopping: return []
            }
            await workerListChange(after: asked, until: deadline)
            try Task.checkCancellation()
            switch mailbox.poolWorkers.workers {
            case .placesNoTasks?:
                throw EachWorkerThroughPool()
            case .listed(let workers)?:
                let matching = workers.filter { placement?.matches($0.allLabels) ?? true }
                if !matching.isEmpty { return Self.identities(matching) }
            case nil:
                break
            }
            if ContinuousClock.now >= deadline { return [] }
            // A round trip each: asked again after a pause, not at once, while none is there.
            try? await Task.sleep(until: min(deadline, .now + .milliseconds(250)))
        }
    }

    private static func identities(_ workers: [ConnectedWorker]) -> [FlowWorkerIdentity] {
        workers.map { FlowWorkerIdentity(name: $0.name, host: $0.allLabels["host"] ?? $0.host) }
    }

    /// Returns when the I/O thread shows a newer list of workers than `generation`, or at `deadline`.
    private func workerListChange(after generation: UInt64, until deadline: ContinuousClock.Instant) async {
        let mailbox = mailbox
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await mailbox.workerListChange(after: generation) }
            group.addTask { try? await Task.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Runs `task` on the coordinator (ops placed there) or sends it to a worker.
    private func dispatch(_ task: FlowTask) async -> FlowTaskResult {
        let entry = configuration.registry.entry(named: task.registeredOperation.name)
        // An op that runs on the coordinator by default (`ListFilesOp`) goes to a worker when its
        // step is placed on workers (`on:`, `each: worker`).
        if entry?.placement == .coordinator, task.placement == nil {
            var result = await FlowLocalExecutor(registry: configuration.registry).execute(task)
            result.worker = "coordinator"
            return result
        }
        let made: Result<WireTask, Unsendable>
        if Self.preparesInput(task, entry) {
            // Preparing reads whole files (`source: coordinator`): not on the I/O thread, where
            // the engine runs and where it would hold up every worker's results and heartbeats.
            made = await withTaskExecutorPreference(globalConcurrentExecutor) { wireTask(for: task) }
        } else {
            made = wireTask(for: task)
        }
        let wire: WireTask
        switch made {
        case .success(let made): wire = made
        case .failure(let failed): return failed.result
        }
        let taskID = wire.taskID
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FlowTaskResult, Never>) in
                switch Task.isCancelled ? .stopping : mailbox.post(.submit(wire, .continuation(continuation, checkpoints: task.checkpoints), avoid: Set(task.previousWorkers),
                                                                                   budget: mailbox.budgets.id(for: task.location))) {
                case .notRunning: continuation.resume(returning: .failure(ClusterError.notRunning, for: task))
                case .stopping: continuation.resume(returning: .cancelled(task))
                case .queued(let first): if first { loopExecutor.wake() }
                }
            }
        } onCancel: {
            if case .queued(true) = mailbox.post(.cancel(taskID)) { loopExecutor.wake() }
        }
    }

    /// A task that cannot go on the wire, as its failed result.
    private struct Unsendable: Error {
        var result: FlowTaskResult
    }

    /// The task as it goes to a worker, with its input prepared; or its failed result.
    private func wireTask(for task: FlowTask) -> Result<WireTask, Unsendable> {
        let (name, parameters) = task.registeredOperation
        do {
            var wire = try WireTask(task, taskID: mailbox.nextTaskID())
            if let entry = configuration.registry.entry(named: name), let prepare = entry.prepareInput, Self.preparesInput(task, entry) {
                try Self.prepare(&wire, with: prepare, inputKey: entry.primaryInputParamKey, parameters: parameters)
            }
            return .success(wire)
        } catch let error as WireEncodingError {
            return .failure(Unsendable(result: .failure(ClusterError.unsendableValue(error.description), for: task)))
        } catch {
            return .failure(Unsendable(result: .failure(ClusterError.preparationFailed(op: name, reason: String(describing: error)), for: task)))
        }
    }

    // MARK: FlowBatchExecutor

    /// Group elements of ops that run on workers, except those whose input the coordinator
    /// prepares: ``submit(_:into:)`` runs on the engine's thread, which is the I/O thread, and
    /// preparing reads whole files; ``execute(_:)`` prepares them on another thread.
    package func canSubmit(_ task: FlowTask) -> Bool {
        guard task.groupIndex != nil else { return false }
        let entry = configuration.registry.entry(named: task.registeredOperation.name)
        return entry?.placement != .coordinator && !Self.preparesInput(task, entry)
    }

    /// Whether the coordinator prepares the task's input (``FlowOperationRegistry/InputPreparer``,
    /// `UploadFileOp`'s `source: coordinator`): not for an element of a group with `affinity:`,
    /// which its own host reads.
    private static func preparesInput(_ task: FlowTask, _ entry: FlowOperationRegistry.Entry?) -> Bool {
        entry?.prepareInput != nil && task.affinity == nil
    }

    /// Queues the tasks for workers with one wake-up of the I/O thread; each result, the failure
    /// to encode one too, goes into `inbox`.
    package func submit(_ tasks: [FlowTask], into inbox: FlowResultInbox) {
        var commands: [CoordinatorMailbox.Command] = []
        commands.reserveCapacity(tasks.count)
        // Positions, not copies of the tasks: they are needed only if the loop is not running.
        var queued: [Int] = []
        queued.reserveCapacity(tasks.count)
        // One group's elements (one inbox): its budget looked up once.
        let budget = tasks.first.map { mailbox.budgets.id(for: $0.location) } ?? -1
        for (position, task) in tasks.enumerated() {
            switch wireTask(for: task) {
            case .success(let wire):
                let op = task.registeredOperation.name
                configuration.metrics?.started(op: op, attempt: task.attempt)
                commands.append(.submit(wire, .inbox(inbox, metrics: configuration.metrics.map { ($0, op) }, checkpoints: task.checkpoints),
                                        avoid: Set(task.previousWorkers), budget: budget))
                queued.append(position)
            case .failure(let failed):
                inbox.deliver(failed.result)
            }
        }
        guard !commands.isEmpty else { return }
        switch mailbox.post(contentsOf: commands) {
        case .notRunning: for position in queued { inbox.deliver(.failure(ClusterError.notRunning, for: tasks[position])) }
        case .stopping: for position in queued { inbox.deliver(.cancelled(tasks[position])) }
        case .queued(let first): if first { loopExecutor.wake() }
        }
    }

    /// Up to 16 tasks of a group handed over ahead (at most `maxConcurrent`), so that the I/O
    /// thread starts the next one the moment a worker returns one, without waiting for the engine
    /// to take the result and submit: that wait was a third of a freed slot's idle time, 0.23-0.27
    /// ms of 0.75 (400 × 25 ms tasks on 16 slots). None for ops whose input the coordinator
    /// prepares (`source: coordinator` reads whole files), which would then sit in memory early.
    package func lookahead(for task: FlowTask, maxConcurrent: Int) -> Int {
        guard !Self.preparesInput(task, configuration.registry.entry(named: task.registeredOperation.name)) else { return 0 }
        // With affinity, each host's elements come in a block (a listing with each: worker joins
        // them in worker order): a window of 16 would hold one host's block while the other hosts'
        // workers idle (four hosts ran at 0.53x four times one). Tasks that wait here cost the
        // coordinator a look each dispatch turn, and nothing on the workers.
        if task.affinity != nil { return Self.affinityLookahead }
        return min(maxConcurrent, 16)
    }

    /// How far ahead a group with `affinity:` is handed over (``lookahead(for:maxConcurrent:)``).
    static var affinityLookahead: Int { 2_048 }

    /// Lets the tasks of `inbox` held after a failure start again.
    package func resume(_ inbox: FlowResultInbox) {
        if case .queued(true) = mailbox.post(.resumeGroup(inbox.id)) { loopExecutor.wake() }
    }

    /// Cancels every task handed over with `inbox` that has no result yet.
    package func cancelAll(in inbox: FlowResultInbox) {
        if case .queued(true) = mailbox.post(.cancelInbox(inbox)) { loopExecutor.wake() }
    }

    /// Runs an op's ``FlowOperationRegistry/InputPreparer`` on its primary input: the element of a
    /// group task, or the bucket value at `inputKey` of a serial one.
    private static func prepare(_ wire: inout WireTask, with prepare: FlowOperationRegistry.InputPreparer, inputKey: String,
                                parameters: [String: FlowValue]) throws {
        if let element = wire.groupElement {
            wire.groupElement = try prepare(parameters, element)
        } else if let input = wire.bucket[inputKey] {
            wire.bucket[inputKey] = try prepare(parameters, input)
        }
    }
}

/// `each: worker` in a run through a pool that cannot place a task on one of its workers (a
/// release before placement, WELCOME without bit 3).
public struct EachWorkerThroughPool: Error, CustomStringConvertible {
    public var description: String {
        "a step with each: worker runs once on each of the pool's workers, and this pool cannot place a task on one of them "
            + "(a release before placement): upgrade the pool, or run this flow with its own workers (run --bind, or --workers)"
    }
}
