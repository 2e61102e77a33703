import Foundation

extension FlowEngine {
    /// How many replayed results a group takes back before it yields its thread once.
    static let replayTurn = 2_048

    /// Runs a group: one task per element of the input array, at most `maxConcurrent` at once,
    /// each under the step's retry policy and time limit; outputs of successful elements are
    /// collected in input order. Failures beyond the step's budget (`allowFailure`, `maxFailures`)
    /// stop it.
    func runGroup(_ plan: FlowGroupPlan, id: FlowStepID) async -> Outcome? {
        guard let elements = FlowGroupElements(flow.dataBucket[plan.inputKey]), !elements.isEmpty else {
            flow.log(message: "[FlowArrayGroupDispatcher] group created: 0")
            flow.log(message: "[Group] no operation to run for group; please make sure the input data: <\(plan.inputKey)> is not empty")
            return .failed(FlowError.emptyGroupInput(key: plan.inputKey))
        }
        flow.log(message: "[FlowArrayGroupDispatcher] group created: \(elements.count)")
        let operationName = groupOperationName(plan)
        flow.progress(.groupStarted(operation: operationName, total: elements.count, maxConcurrent: plan.maxConcurrent))
        let tally = FlowGroupTally(total: elements.count)
        defer { flow.progress(.groupFinished(operation: operationName, done: tally.done, failed: tally.failures.count, total: elements.count)) }

        let resolvedPlan: FlowGroupPlan
        switch resolved(plan) {
        case .plan(let plan): resolvedPlan = plan
        case .unresolved(let end): return end
        }
        // Tasks are made as elements start, so a million-element group holds at most
        // `maxConcurrent` of them; outputs are collected in place, a marker standing for the
        // elements that gave none.
        let total = elements.count
        journal?.groupStarted(at: id, total: total)
        let accept = acceptor(for: plan, tally: tally, total: total)
        // Elements an earlier life of this run finished are taken as they were, not run again.
        let replay = await replayRecorded(at: id, elements: elements, accept: accept)
        if let stop = replay.stop { return stop }
        // Elements start in index order, from a feed that tells the journal ahead how far they
        // may have started.
        let feed = FlowGroupFeed(plan: resolvedPlan, elements: elements, replayed: replay.replayed, journal: journal, id: id) { [flow] in
            // As ``journalRefused()``: the run stops as a cancelled one, which also wakes the
            // engine waiting for results of elements that will not start.
            flow.cancel()
        }
        let stop: Outcome?
        if let batch = batchDrive(for: plan, resolvedPlan: resolvedPlan, first: elements[0]) {
            stop = await runBatched(on: batch.executor, lookahead: batch.lookahead, plan: plan, id: id, feed: feed, accept: accept)
        } else {
            stop = await runPulling(from: feed, plan: plan, resolvedPlan: resolvedPlan, id: id, accept: accept)
        }
        return finishGroup(plan, tally: tally, stop: stop, feed: feed)
    }

    /// A group's plan with its parameters resolved, or the end of a group whose parameters
    /// could not be.
    private enum GroupResolution {
        case plan(FlowGroupPlan)
        case unresolved(Outcome?)
    }

    /// The plan with its named op's parameters resolved against the bucket (`${key}` templates).
    private func resolved(_ plan: FlowGroupPlan) -> GroupResolution {
        guard case .named(let name, let parameters) = plan.source else { return .plan(plan) }
        do {
            var resolvedPlan = plan
            resolvedPlan.source = .named(name, parameters: try executor.resolveParameters(of: name, parameters, bucket: flow.dataBucket))
            return .plan(resolvedPlan)
        } catch {
            return .unresolved(reportUnresolved(error, operation: name, location: plan.location))
        }
    }

    /// What takes one finished element into the summary, the counts and the outputs; it returns
    /// the group's end when the group is one failure past its budget.
    private func acceptor(for plan: FlowGroupPlan, tally: FlowGroupTally, total: Int) -> (FlowTaskResult, String?) -> Outcome? {
        let failureLimit = plan.allowFailure ? Int.max : plan.maxFailures?.limit(total: total) ?? 0
        let groupMark = (number: flow.nextGroupNumber(), size: total)
        flow.reserveSummary(forGroupOf: total)
        let reportsProgress = flow.hasProgressHandler
        let flow = flow
        return { result, tag in
            let record = flow.record(result, tag: tag, appliesBucketChanges: false, groupOutputKey: plan.outputKey,
                                     location: plan.location, group: groupMark)
            tally.done += 1
            if !result.earlierAttempts.isEmpty {
                tally.retries += result.earlierAttempts.count
                tally.retriedElements += 1
            }
            if !result.state.isSuccess { tally.failures.append((result, tag)) }
            if reportsProgress { flow.progress(.groupElementFinished(record, done: tally.done, failed: tally.failures.count, total: total)) }
            // The seed's rule (PROTOCOL.md §7.3): only a successful element's output is collected.
            if result.state.isSuccess, let index = result.groupIndex, let output = result.groupOutput { tally.collect(output, at: index) }
            guard tally.failures.count > failureLimit else { return nil }
            if let budget = plan.maxFailures {
                flow.log(message: "[Group] \(tally.failures.count) elements failed, more than maxFailures: \(budget) allows (\(failureLimit))")
            }
            flow.log(message: "[Group] not allow failure in group. stop immediately.")
            return .failed(result.failure)
        }
    }

    /// Takes back the results an earlier life of this run recorded for the group.
    ///
    /// - Returns: which elements were taken back (empty when none were), and the group's end if
    ///   one of them ends it.
    private func replayRecorded(at id: FlowStepID, elements: FlowGroupElements,
                                accept: (FlowTaskResult, String?) -> Outcome?) async -> (replayed: [Bool], stop: Outcome?) {
        guard let recorded = journal?.recordedResults(at: id), !recorded.isEmpty else { return ([], nil) }
        var replayed = [Bool](repeating: false, count: elements.count)
        for (offset, entry) in recorded.enumerated() {
            // A resumed run may take back a million results: the thread is given back now and
            // then. On a cluster it is the coordinator's I/O thread, whose heartbeats tell the
            // workers it is alive (they reconnect after 3 s without).
            if offset % Self.replayTurn == Self.replayTurn - 1 { await Task.yield() }
            guard let index = entry.result.groupIndex, elements.indices.contains(index), !replayed[index] else { continue }
            replayed[index] = true
            if let stop = accept(entry.result, entry.tag ?? FlowGroupTag.make()) { return (replayed, stop) }
        }
        return (replayed, nil)
    }

    /// The batch drive (``runBatched(on:lookahead:plan:id:feed:accept:)``), chosen when the
    /// executor takes batches (a ``FlowBatchExecutor``, as the coordinator), the step does not
    /// retry, and the executor accepts the group's tasks as they are; `nil` otherwise, for the
    /// pulling drive (``runPulling(from:plan:resolvedPlan:id:accept:)``).
    private func batchDrive(for plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan,
                            first: Any) -> (executor: any FlowBatchExecutor, lookahead: Int)? {
        guard let batch = executor as? any FlowBatchExecutor, plan.policy.retry.attempts <= 1 else { return nil }
        let task = FlowGroupFeed.task(resolvedPlan, index: 0, element: first)
        guard batch.canSubmit(task) else { return nil }
        return (batch, max(0, batch.lookahead(for: task, maxConcurrent: plan.maxConcurrent)))
    }

    /// The group's end once its drive returned: the drive's own stop, `.cancelled` when the
    /// journal refused more starts, or the collected outputs written to the bucket.
    private func finishGroup(_ plan: FlowGroupPlan, tally: FlowGroupTally, stop: Outcome?, feed: FlowGroupFeed) -> Outcome? {
        let total = tally.total
        if tally.retries > 0 {
            flow.log(message: "[Group] \(tally.retries) retries for \(tally.retriedElements) of \(total) elements")
        }
        if let stop { return stop }
        // The feed ran dry because the journal refused, not because every element ran.
        if feed.wasRefused { return .cancelled }
        if !tally.failures.isEmpty { logFailures(tally.failures, total: total, plan: plan) }
        let outputs = tally.takeOutputs()
        flow.applyBucketChange(key: plan.outputKey, value: outputs, at: Date())
        flow.log(message: "[FlowArrayGroupDispatcher] all finished. output size: \(outputs.count)")
        return nil
    }

    /// Runs a group's elements through a batch executor: up to `maxConcurrent` handed over at
    /// once, each burst of results taken together and its freed places refilled with one call.
    /// Elements are tried once (a group with `retry` goes through ``execute(_:policy:renew:)``).
    ///
    /// - Parameters:
    ///   - feed: the elements' tasks.
    ///   - accept: takes one finished element; returns the group's end when it must stop.
    private func runBatched(on executor: any FlowBatchExecutor, lookahead: Int, plan: FlowGroupPlan, id: FlowStepID,
                            feed: FlowGroupFeed, accept: (FlowTaskResult, String?) -> Outcome?) async -> Outcome? {
        // With a lookahead the executor holds a few tasks more than may run, and keeps to
        // `maxConcurrent` itself.
        let inbox = FlowResultInbox(concurrencyLimit: lookahead > 0 ? plan.maxConcurrent : nil)
        var tags: [Int: String] = [:]
        // The try each element's op sees, where it is not the first: an element of a resumed run
        // that may have run before (its op sees attempt 2, and so must the report).
        var laterAttempts: [Int: Int] = [:]
        var running = 0
        func refill() {
            var tasks: [FlowTask] = []
            // Sized at once: grown by appends, the array of these large values was copied at
            // each doubling (callgrind: the most copied bytes of a coordinator's group).
            tasks.reserveCapacity(max(0, plan.maxConcurrent + lookahead - running))
            while running + tasks.count < plan.maxConcurrent + lookahead, var task = feed.next() {
                task.timeLimit = plan.policy.timeout
                task.retry = plan.policy.retry
                if let index = task.groupIndex, let tag = task.groupTag { tags[index] = tag }
                if task.mayHaveRunBefore, let index = task.groupIndex { laterAttempts[index] = task.operationAttempt }
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
            var judgedFailure = false
            for var result in results {
                running -= 1
                result.attempt = result.groupIndex.flatMap { laterAttempts.removeValue(forKey: $0) } ?? 1
                result.groupTag = result.groupIndex.flatMap { tags.removeValue(forKey: $0) }
                if let stop = settle(result, at: id, accept: accept) {
                    executor.cancelAll(in: inbox)
                    return stop
                }
                if !result.state.isSuccess { judgedFailure = true }
            }
            // The failures did not end the group: the tasks held ahead may start.
            if judgedFailure, lookahead > 0 { executor.resume(inbox) }
            refill()
        }
        return nil
    }

    /// Runs a group's elements on `maxConcurrent` child tasks that each take the next element from
    /// the feed as soon as theirs is done (under the step's retry policy and time limit), and
    /// deliver its result to an inbox the engine empties a burst at a time. No Swift task is made
    /// per element, and the engine wakes once per burst of results, not once per result: what
    /// makes an in-process group of small ops fast.
    ///
    /// With `maxConcurrent` 1 the engine runs each element itself: no child task to hand results
    /// over, and no thread to wake for each one.
    ///
    /// - Parameters:
    ///   - feed: the elements' tasks.
    ///   - accept: takes one finished element; returns the group's end when it must stop.
    private func runPulling(from feed: FlowGroupFeed, plan: FlowGroupPlan, resolvedPlan: FlowGroupPlan, id: FlowStepID,
                            accept: (FlowTaskResult, String?) -> Outcome?) async -> Outcome? {
        let expected = feed.count
        guard expected > 0 else { return nil }
        let renew = freshOperation(for: resolvedPlan)
        let policy = plan.policy
        let runElement: @Sendable (FlowTask) async -> FlowTaskResult = { task in
            var result = await execute(task, policy: policy, renew: renew)
            result.groupTag = task.groupTag
            return result
        }
        if plan.maxConcurrent == 1 {
            while true {
                if Task.isCancelled { return .cancelled }
                guard let task = feed.next() else { return nil }
                let result = await runElement(task)
                if Task.isCancelled { return .cancelled }
                if let stop = settle(result, at: id, accept: accept) { return stop }
            }
        }
        let inbox = FlowResultInbox()
        return await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(plan.maxConcurrent, expected) {
                group.addTask {
                    while !Task.isCancelled, let task = await feed.nextWhenJudged() {
                        let result = await runElement(task)
                        if result.state.isSuccess {
                            inbox.deliver(result)
                        } else {
                            // No element starts until the engine has judged this one: it may
                            // end the group.
                            feed.judging { inbox.deliver(result) }
                        }
                    }
                }
            }
            /// Stops handing out elements and stops the running ones.
            func stopAll() {
                feed.close()
                group.cancelAll()
            }
            var received = 0
            while received < expected {
                let results = await inbox.next()
                if results.isEmpty || Task.isCancelled {
                    stopAll()
                    return .cancelled
                }
                for result in results {
                    received += 1
                    if let stop = settle(result, at: id, accept: accept) {
                        stopAll()
                        return stop
                    }
                    if !result.state.isSuccess { feed.judged() }
                }
            }
            return nil
        }
    }

    /// Takes one element's result: `.cancelled` for a cancelled one (which is not recorded), the
    /// group's end when `accept` says so, `nil` to go on. The result reaches the journal first.
    private func settle(_ result: FlowTaskResult, at id: FlowStepID, accept: (FlowTaskResult, String?) -> Outcome?) -> Outcome? {
        if case .cancelled = result.state { return .cancelled }
        journalAccepted(result, tag: result.groupTag, at: id)
        return accept(result, result.groupTag)
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
}
