import Foundation

extension FlowEngine {
    /// Runs a group: one task per element of the input array, at most `maxConcurrent` at once,
    /// each under the step's retry policy and time limit; outputs of successful elements are
    /// collected in input order. Failures beyond the step's budget (`allowFailure`, `maxFailures`)
    /// stop it.
    func runGroup(_ plan: FlowGroupPlan, id: FlowStepID) async -> Outcome? {
        guard let elements = flow.dataBucket[plan.inputKey] as? [Any], !elements.isEmpty else {
            flow.log(message: "[FlowArrayGroupDispatcher] group created: 0")
            flow.log(message: "[Group] no operation to run for group; please make sure the input data: <\(plan.inputKey)> is not empty")
            return .failed(FlowError.emptyGroupInput(key: plan.inputKey))
        }
        flow.log(message: "[FlowArrayGroupDispatcher] group created: \(elements.count)")
        let operationName = groupOperationName(plan)
        flow.progress(.groupStarted(operation: operationName, total: elements.count, maxConcurrent: plan.maxConcurrent))
        var done = 0
        var retries = 0
        var retriedElements = 0
        var failures: [(result: FlowTaskResult, tag: String?)] = []
        defer { flow.progress(.groupFinished(operation: operationName, done: done, failed: failures.count, total: elements.count)) }

        var resolvedPlan = plan
        if case .named(let name, let parameters) = plan.source {
            do {
                resolvedPlan.source = .named(name, parameters: try FlowParameterTemplate.resolve(parameters, bucket: flow.dataBucket))
            } catch {
                return reportUnresolved(error, operation: name, location: plan.location)
            }
        }
        // Tasks are made as elements start, so a million-element group holds at most
        // `maxConcurrent` of them; outputs are collected in place, a marker standing for the
        // elements that gave none.
        let total = elements.count
        let failureLimit = plan.allowFailure ? Int.max : plan.maxFailures?.limit(total: total) ?? 0
        var outputs = [Any](repeating: FlowMissingOutput.marker, count: total)
        journal?.groupStarted(at: id, total: total)
        let groupMark = (number: flow.nextGroupNumber(), size: total)

        /// Takes one finished element into the summary, the counts and the outputs; returns the
        /// group's end when it is one failure past its budget.
        func accept(_ result: FlowTaskResult, tag: String?) -> Outcome? {
            let record = flow.record(result, tag: tag, appliesBucketChanges: false, groupOutputKey: plan.outputKey,
                                     location: plan.location, group: groupMark)
            done += 1
            if !result.earlierAttempts.isEmpty {
                retries += result.earlierAttempts.count
                retriedElements += 1
            }
            if !result.state.isSuccess { failures.append((result, tag)) }
            flow.progress(.groupElementFinished(record, done: done, failed: failures.count, total: total))
            // The seed's rule (PROTOCOL.md §7.3): only a successful element's output is collected.
            if result.state.isSuccess, let index = result.groupIndex, let output = result.groupOutput { outputs[index] = output }
            guard failures.count > failureLimit else { return nil }
            if let budget = plan.maxFailures {
                flow.log(message: "[Group] \(failures.count) elements failed, more than maxFailures: \(budget) allows (\(failureLimit))")
            }
            flow.log(message: "[Group] not allow failure in group. stop immediately.")
            return .failed(result.failure)
        }

        // Elements an earlier life of this run finished are taken as they were, not run again.
        var replayed: [Bool] = []
        if let recorded = journal?.recordedResults(at: id), !recorded.isEmpty {
            replayed = [Bool](repeating: false, count: total)
            for entry in recorded {
                guard let index = entry.result.groupIndex, elements.indices.contains(index), !replayed[index] else { continue }
                replayed[index] = true
                if let stop = accept(entry.result, tag: entry.tag ?? FlowGroupTag.make()) { return stop }
            }
        }
        // Elements start in index order; the journal is told ahead, in chunks, how far they may
        // have started, so a resumed run knows which unfinished ones may have run.
        let startedBefore = journal?.startedThrough(at: id) ?? -1
        var mayStartThrough = -1
        var next = 0
        /// The next element's task (skipping those replayed), or `nil` when none is left.
        func nextTask() -> FlowTask? {
            while next < total, !replayed.isEmpty, replayed[next] { next += 1 }
            guard next < total else { return nil }
            if let journal, next > mayStartThrough {
                mayStartThrough = min(total - 1, next + max(256, 4 * plan.maxConcurrent))
                journal.mayStart(at: id, through: mayStartThrough)
            }
            var task = groupTask(resolvedPlan, index: next, element: elements[next])
            task.mayHaveRunBefore = next <= startedBefore
            next += 1
            return task
        }

        // Elements tried once go to an executor that takes batches without a Swift task each.
        let batch: (any FlowBatchExecutor)? = {
            guard let batch = executor as? any FlowBatchExecutor, plan.policy.retry.attempts <= 1 else { return nil }
            return batch.canSubmit(groupTask(resolvedPlan, index: 0, element: elements[0])) ? batch : nil
        }()
        let stop: Outcome?
        if let batch {
            stop = await runBatched(on: batch, plan: plan, id: id, nextTask: nextTask, accept: accept)
        } else {
            stop = await withTaskGroup(of: (result: FlowTaskResult, tag: String?).self) { group in
                var running = 0
                func startNext() {
                    guard let task = nextTask() else { return }
                    let renew = freshOperation(for: resolvedPlan)
                    group.addTask { (await execute(task, policy: plan.policy, renew: renew), task.groupTag) }
                    running += 1
                }
                while next < total, running < plan.maxConcurrent { startNext() }
                while let (result, tag) = await group.next() {
                    running -= 1
                    if Task.isCancelled || { if case .cancelled = result.state { return true } else { return false } }() {
                        group.cancelAll()
                        return .cancelled
                    }
                    journalAccepted(result, tag: tag, at: id)
                    if let stop = accept(result, tag: tag) {
                        group.cancelAll()
                        return stop
                    }
                    startNext()
                }
                return nil
            }
        }
        if retries > 0 {
            flow.log(message: "[Group] \(retries) retries for \(retriedElements) of \(total) elements")
        }
        if let stop { return stop }
        if !failures.isEmpty { logFailures(failures, total: total, plan: plan) }
        outputs.removeAll { $0 is FlowMissingOutput }
        flow.applyBucketChange(key: plan.outputKey, value: outputs, at: Date())
        flow.log(message: "[FlowArrayGroupDispatcher] all finished. output size: \(outputs.count)")
        return nil
    }

    /// Runs a group's elements through a batch executor: up to `maxConcurrent` handed over at
    /// once, each burst of results taken together and its freed places refilled with one call.
    /// Elements are tried once (a group with `retry` goes through ``execute(_:policy:renew:)``).
    ///
    /// - Parameters:
    ///   - nextTask: the next element's task, `nil` when none is left.
    ///   - accept: takes one finished element; returns the group's end when it must stop.
    private func runBatched(on executor: any FlowBatchExecutor, plan: FlowGroupPlan, id: FlowStepID,
                            nextTask: () -> FlowTask?, accept: (FlowTaskResult, String?) -> Outcome?) async -> Outcome? {
        let inbox = FlowResultInbox()
        var tags: [Int: String] = [:]
        var running = 0
        func refill() {
            var tasks: [FlowTask] = []
            while running + tasks.count < plan.maxConcurrent, var task = nextTask() {
                task.timeLimit = plan.policy.timeout
                task.retry = plan.policy.retry
                if let index = task.groupIndex, let tag = task.groupTag { tags[index] = tag }
                tasks.append(task)
            }
            guard !tasks.isEmpty else { return }
            running += tasks.count
            executor.submit(tasks, into: inbox)
        }
        refill()
        while running > 0 {
            let results = await inbox.next()
            if results.isEmpty || Task.isCancelled {
                executor.cancelAll(in: inbox)
                return .cancelled
            }
            for var result in results {
                running -= 1
                result.attempt = 1
                if case .cancelled = result.state {
                    executor.cancelAll(in: inbox)
                    return .cancelled
                }
                let tag = result.groupIndex.flatMap { tags.removeValue(forKey: $0) }
                journalAccepted(result, tag: tag, at: id)
                if let stop = accept(result, tag) {
                    executor.cancelAll(in: inbox)
                    return stop
                }
            }
            refill()
        }
        return nil
    }

    /// The group's closing count and one line per failed element, in input order.
    private func logFailures(_ failures: [(result: FlowTaskResult, tag: String?)], total: Int, plan: FlowGroupPlan) {
        let allowance = plan.allowFailure ? "allowFailure" : "maxFailures: \(plan.maxFailures?.description ?? "0")"
        flow.log(message: "[Group] \(failures.count) of \(total) elements failed (within \(allowance)):")
        for (result, tag) in failures.sorted(by: { ($0.result.groupIndex ?? 0) < ($1.result.groupIndex ?? 0) }) {
            let index = result.groupIndex ?? 0
            let label = FlowLabel.make(name: result.operationName, tag: tag, worker: result.worker)
            flow.log(message: "[Group]   element \(index) \(label): \(result.state.failureText)")
        }
    }

    /// For a group of op instances, a maker of fresh ones, so a retry never reuses a finished op.
    private func freshOperation(for plan: FlowGroupPlan) -> (@Sendable () -> FlowTask.Operation)? {
        guard plan.policy.retry.attempts > 1, case .creator(let creator) = plan.source else { return nil }
        return { .instance(creator.create()) }
    }

    func groupOperationName(_ plan: FlowGroupPlan) -> String {
        switch plan.source {
        case .creator(let creator): return String(describing: creator)
        case .named(let name, _): return name
        }
    }

    private func groupTask(_ plan: FlowGroupPlan, index: Int, element: Any) -> FlowTask {
        let operation: FlowTask.Operation
        let name: String
        switch plan.source {
        case .creator(let creator):
            let instance = creator.create()
            (operation, name) = (.instance(instance), instance.operationName)
        case .named(let opName, let parameters):
            (operation, name) = (.named(opName, parameters: parameters), opName)
        }
        return FlowTask(operation: operation, bucket: [:], groupTag: FlowGroupTag.make(), groupIndex: index,
                        groupElement: element, operationName: name, location: plan.location)
    }
}

/// Stands for a group element that gave no output until the group's outputs are collected.
final class FlowMissingOutput: Sendable {
    static let marker = FlowMissingOutput()
}
