import Foundation

extension FlowEngine {
    /// How many replayed results a group takes back before it yields its thread once.
    static let replayTurn = 2_048

    /// Runs a group: one task per element of the input array, at most `maxConcurrent` at once,
    /// each under the step's retry policy and time limit; outputs of successful elements are
    /// collected in input order. Failures beyond the step's budget (`allowFailure`, `maxFailures`)
    /// stop it.
    func runGroup(_ plan: FlowGroupPlan, id: FlowStepID) async -> Outcome? {
        guard let elements = FlowGroupElements(run.bucket[plan.inputKey]), !elements.isEmpty else {
            run.log("[FlowArrayGroupDispatcher] group created: 0")
            run.log("[Group] no operation to run for group; please make sure the input data: <\(plan.inputKey)> is not empty")
            return .failed(FlowError.emptyGroupInput(key: plan.inputKey))
        }
        run.log("[FlowArrayGroupDispatcher] group created: \(elements.count)")
        let operationName = groupOperationName(plan)
        run.progress(.groupStarted(operation: operationName, total: elements.count, maxConcurrent: plan.maxConcurrent))
        let tally = FlowGroupTally(total: elements.count)
        defer { run.progress(.groupFinished(operation: operationName, done: tally.done, failed: tally.failures.count, total: elements.count)) }

        let resolvedPlan: FlowGroupPlan
        switch resolved(plan, elementCount: elements.count) {
        case .plan(let plan): resolvedPlan = plan
        case .unresolved(let end): return end
        }
        // Tasks are made as elements start, so a million-element group holds at most
        // `maxConcurrent` of them; outputs are collected in place, a marker standing for the
        // elements that gave none.
        journal?.groupStarted(at: id, total: elements.count)
        let accept = acceptor(for: plan, tally: tally, total: elements.count)
        // Elements an earlier life of this run finished are taken as they were, not run again.
        let recordedAs: String? = if case .named(let name, _) = plan.source { name } else { nil }
        let replay = await replayRecorded(at: id, elements: elements, operation: recordedAs, location: plan.location, accept: accept)
        if let stop = replay.stop { return stop }
        // Elements start in index order, from a feed that tells the journal ahead how far they
        // may have started.
        let tags = FlowGroupTags()
        let feed = FlowGroupFeed(plan: resolvedPlan, elements: elements, tags: tags, replayed: replay.replayed,
                                 journal: journal, id: id) { [run] in
            // As ``journalRefused()``: the run stops as a cancelled one, which also wakes the
            // engine waiting for results of elements that will not come.
            run.stop()
        }
        let elementsAt = FlowGroupElementsAt(id: id, tags: tags, accept: accept)
        let stop: Outcome?
        switch drive(for: plan, resolvedPlan: resolvedPlan, first: elements[0], tags: tags) {
        case .batched(let executor, let lookahead):
            stop = await runBatched(on: executor, lookahead: lookahead, plan: plan, feed: feed, results: elementsAt)
        case .oneAtATime:
            stop = await runOneAtATime(from: feed, plan: plan, resolvedPlan: resolvedPlan, results: elementsAt)
        case .pulling:
            stop = await runPulling(from: feed, plan: plan, resolvedPlan: resolvedPlan, results: elementsAt)
        }
        return finishGroup(plan, tally: tally, stop: stop, feed: feed)
    }

    /// A group's plan with its parameters resolved, or the end of a group whose parameters
    /// could not be.
    private enum GroupResolution {
        case plan(FlowGroupPlan)
        case unresolved(Outcome?)
    }

    /// The plan with its named op's parameters resolved against the bucket (`${key}` templates)
    /// and prepared for a group of `elementCount` elements.
    private func resolved(_ plan: FlowGroupPlan, elementCount: Int) -> GroupResolution {
        guard case .named(let name, let parameters) = plan.source else { return .plan(plan) }
        do {
            var resolvedPlan = plan
            resolvedPlan.source = .named(name, parameters: try executor.resolveGroupParameters(of: name, parameters, bucket: run.bucket,
                                                                                                elementCount: elementCount))
            return .plan(resolvedPlan)
        } catch {
            return .unresolved(reportUnresolved(error, operation: name, location: plan.location))
        }
    }

    /// The group's end once its drive returned: the drive's own stop, `.cancelled` when the
    /// journal refused more starts, or the collected outputs written to the bucket.
    private func finishGroup(_ plan: FlowGroupPlan, tally: FlowGroupTally, stop: Outcome?, feed: FlowGroupFeed) -> Outcome? {
        let total = tally.total
        if tally.retries > 0 {
            run.log("[Group] \(tally.retries) retries for \(tally.retriedElements) of \(total) elements")
        }
        if let stop { return stop }
        // The feed ran dry because the journal refused, not because every element ran.
        if feed.wasRefused { return .cancelled }
        if !tally.failures.isEmpty { logFailures(tally.failures, total: total, plan: plan) }
        let outputs = tally.takeOutputs()
        run.setBucketValue(outputs, forKey: plan.outputKey)
        run.log("[FlowArrayGroupDispatcher] all finished. output size: \(outputs.count)")
        return nil
    }

    /// The group's closing count and one line per failed element, in input order.
    private func logFailures(_ failures: [(result: FlowTaskResult, tag: String?)], total: Int, plan: FlowGroupPlan) {
        let allowance = plan.allowFailure ? "allowFailure" : "maxFailures: \(plan.maxFailures?.description ?? "0")"
        run.log("[Group] \(failures.count) of \(total) elements failed (within \(allowance)):")
        for (result, tag) in failures.sorted(by: { ($0.result.groupIndex ?? 0) < ($1.result.groupIndex ?? 0) }) {
            let index = result.groupIndex ?? 0
            let label = FlowLabel.make(name: result.operationName, tag: tag, worker: result.worker)
            run.log("[Group]   element \(index) \(label): \(result.state.failureText)")
        }
    }

    func groupOperationName(_ plan: FlowGroupPlan) -> String {
        switch plan.source {
        case .creator(let creator): return String(describing: creator)
        case .named(let name, _): return name
        }
    }
}
