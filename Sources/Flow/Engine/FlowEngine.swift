import Foundation
import Synchronization

/// Walks a flow tree: serial ops one after another, groups fanned out under their concurrency
/// limit, cases decided on the bucket. Ops run through an executor; the engine writes their
/// results, bucket changes and summary lines to the run (``FlowRunRecorder``).
struct FlowEngine: Sendable {
    /// How a walk ended.
    enum Outcome: Sendable {
        case completed
        /// No case branch matched: the flow ends successfully (the seed's behaviour).
        case endedEarly
        case failed(any Error)
        case cancelled
    }

    /// The run the engine writes to.
    let run: any FlowRunRecorder
    let executor: any FlowExecutor
    /// Where accepted results go, and where a resumed run finds the earlier ones.
    var journal: (any FlowJournal)?

    func run(_ nodes: [FlowPlanNode]) async -> Outcome {
        await runList(nodes, in: .root, branch: nil) ?? .completed
    }

    /// Runs steps in order; returns an outcome when the walk must stop, `nil` to go on.
    private func runList(_ nodes: [FlowPlanNode], in parent: FlowStepID, branch: String?) async -> Outcome? {
        var index = 0
        while index < nodes.count {
            let node = nodes[index]
            defer { index += 1 }
            if Task.isCancelled { return .cancelled }
            let id = parent.child(index, branch: branch)
            let stop: Outcome?
            switch node {
            case .operation(let reference, let location, let policy):
                if index + 1 < nodes.count, case .group(let group) = nodes[index + 1], group.inputFile == nil, group.elements == nil,
                   !group.inputKey.isEmpty {
                    // The op may emit the group's input a page at a time (FlowElementStream).
                    index += 1
                    stop = await runFeeding(SerialStep(reference: reference, location: location, policy: policy, id: id),
                                            group, groupID: parent.child(index, branch: branch))
                    break
                }
                stop = await runSerial(reference, location: location, policy: policy, id: id)
            case .group(let plan):
                if let elements = plan.elements {
                    stop = await runGroup(plan, id: id, reading: elements)
                } else {
                    stop = await runGroup(plan, id: id)
                }
            case .cases(let branches, let defaultSteps):
                stop = await runCases(branches: branches, defaultSteps: defaultSteps, id: id)
            }
            if let stop { return stop }
        }
        return nil
    }

    /// Tells the journal about an accepted result; cancelled ones did not finish and are not kept.
    func journalAccepted(_ result: FlowTaskResult, tag: String?, at id: FlowStepID) {
        guard let journal else { return }
        if case .cancelled = result.state { return }
        journal.accepted(FlowJournalRecord(result: result, tag: tag), at: id)
    }

    func runSerial(_ reference: FlowOperationReference, location: FlowSourceLocation?, policy: FlowTaskPolicy,
                   id: FlowStepID, stream: FlowElementStream? = nil) async -> Outcome? {
        if let replayed = journal?.recordedResults(at: id).first?.result {
            if case .named(let name, _) = reference, replayed.operationName != name {
                return refuseRecorded(replayed.operationName, where: name, location: location)
            }
            // Done in an earlier life of this run: its lines and bucket writes, as they were.
            run.progress(.operationStarted(name: replayed.operationName))
            run.progress(.operationFinished(run.record(replayed, appliesBucketChanges: true, location: location)))
            return replayed.state.isSuccess ? nil : .failed(replayed.failure)
        }
        var task: FlowTask
        switch reference {
        case .instance(let operation):
            task = FlowTask(operation: .instance(operation), bucket: run.bucket,
                            operationName: operation.operationName, location: location)
        case .named(let name, let parameters):
            let bucket = run.bucket
            do {
                let resolved = try executor.resolveParameters(of: name, parameters, bucket: bucket)
                task = FlowTask(operation: .named(name, parameters: resolved), bucket: bucket, operationName: name, location: location)
            } catch {
                return reportUnresolved(error, operation: name, location: location)
            }
        }
        task.checkpoints = FlowStepCheckpoints(journal: journal, step: id)
        task.placement = policy.placement
        if policy.eachWorker, case .ran(let outcome) = await runOnEachWorker(task, policy: policy, id: id) { return outcome }
        if let journal {
            task.mayHaveRunBefore = journal.startedThrough(at: id) != nil
            guard journal.mayStart(at: id, through: 0) else { return journalRefused() }
        }
        run.progress(.operationStarted(name: task.operationName))
        let result: FlowTaskResult
        if let stream {
            result = await FlowElementStream.$current.withValue(stream) {
                await execute(task, policy: policy, retryForbidden: { stream.wasUsed })
            }
        } else {
            result = await execute(task, policy: policy)
        }
        run.progress(.operationFinished(run.record(result, appliesBucketChanges: true, location: location)))
        // An op that emitted its list to the group is not kept: a resume runs it again, and the
        // group takes back by index what its journal holds (its list is not in its result).
        if stream?.wasUsed != true { journalAccepted(result, tag: nil, at: id) }
        if case .cancelled = result.state { return .cancelled }
        guard result.state.isSuccess else { return .failed(result.failure) }
        return Task.isCancelled ? .cancelled : nil
    }

    /// The journal could not keep that a step may start (``FlowJournal/mayStart(at:through:)``):
    /// the run stops as a cancelled one does, for a resume to go on with once the journal can be
    /// written again.
    func journalRefused() -> Outcome {
        run.stop()
        return .cancelled
    }

    /// A recorded result of another op than the step's: the journal's flow was replaced, or its
    /// results edited, after they were recorded. Taking it would report a step as done by an op
    /// that never ran there (a `SleepOp`'s result once stood in for a `ShellOp`), so the step
    /// fails instead, saying so, and nothing after it starts.
    func refuseRecorded(_ recorded: String, where operation: String, location: FlowSourceLocation?) -> Outcome {
        let now = Date()
        let message = "the run's journal holds a result of \(recorded.escapingControlCharacters) for this step, where the flow runs "
            + "\(operation): the journal's flow or results were changed after they were recorded, so this run cannot be resumed "
            + "from it; start the flow again with flow-coordinator run"
        let result = FlowTaskResult(operationName: operation, state: .withError(message), events: [], bucket: [:],
                                    startedAt: now, finishedAt: now)
        run.progress(.operationFinished(run.record(result, appliesBucketChanges: false, location: location)))
        return .failed(result.failure)
    }

    /// A parameter referenced a missing bucket key: the op fails as the seed fails a missing key.
    func reportUnresolved(_ error: any Error, operation: String, location: FlowSourceLocation?) -> Outcome {
        let now = Date()
        let message = String(describing: error)
        let result = FlowTaskResult(operationName: operation, state: .withInsufficientInputData(message),
                                    error: FlowDataError.insufficientInputData(message), events: [], bucket: [:],
                                    startedAt: now, finishedAt: now)
        run.progress(.operationFinished(run.record(result, appliesBucketChanges: false, location: location)))
        return .failed(result.failure)
    }

    private func runCases(branches: [(FlowCase, [FlowPlanNode])], defaultSteps: [FlowPlanNode]?, id: FlowStepID) async -> Outcome? {
        let bucket = run.bucket
        for (branch, (flowCase, steps)) in branches.enumerated() where (bucket[flowCase.key] as? String) == flowCase.value {
            return await runList(steps, in: id, branch: String(branch))
        }
        if let defaultSteps { return await runList(defaultSteps, in: id, branch: "d") }
        run.log("[Cases] no case is matached. finished in early.")
        return .endedEarly
    }
}
