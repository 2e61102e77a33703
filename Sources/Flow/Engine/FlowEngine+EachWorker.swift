import Foundation

extension FlowEngine {
    /// What became of a step with `each: worker`.
    enum EachWorkerOutcome {
        /// The executor has no workers (a run in one process): the step runs once, as any other.
        case notOnWorkers
        case ran(Outcome?)
    }

    /// Runs a serial step once on every worker its placement allows, at once (`each: worker`).
    ///
    /// Each worker's run is placed on that worker by its name and writes its own summary lines.
    /// What they put in the bucket is joined in worker-name order: lists are concatenated, and a
    /// map element gains `worker` and `host` (unless it has them) and a text element becomes
    /// `{path: TEXT, worker, host}`, so that each element keeps where it came from (a group with
    /// `affinity: source` sends it back there); any other value is the last worker's. The step
    /// fails when one of them does, after all have ended. Its journal record is the joined
    /// result: a resumed run takes it as it was (``runSerial`` replays it), and runs every worker
    /// again if it was not done.
    func runOnEachWorker(_ task: FlowTask, policy: FlowTaskPolicy, id: FlowStepID) async -> EachWorkerOutcome {
        let workers: [FlowWorkerIdentity]
        do {
            guard let found = try await executor.workers(for: policy.placement) else { return .notOnWorkers }
            workers = found
        } catch {
            return .ran(fail(task, "each: worker: \(error)"))
        }
        guard !workers.isEmpty else {
            let which = policy.placement.map { "with the labels \($0)" } ?? "connected"
            return .ran(fail(task, "each: worker found no worker \(which): start one (flow-worker --label KEY=VALUE gives a worker labels)"))
        }
        if let journal, !journal.mayStart(at: id, through: 0) { return .ran(journalRefused()) }
        let results = await withTaskGroup(of: (Int, FlowTaskResult).self) { group in
            for (index, worker) in workers.enumerated() {
                var pinned = task
                var labels = policy.placement?.labels ?? [:]
                labels["name"] = worker.name
                pinned.placement = FlowPlacement(labels)
                run.progress(.operationStarted(name: task.operationName))
                group.addTask { (index, await self.execute(pinned, policy: policy)) }
            }
            var results = [FlowTaskResult?](repeating: nil, count: workers.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
        for result in results {
            run.progress(.operationFinished(run.record(result, appliesBucketChanges: false, location: task.location)))
        }
        let joined = Self.joined(results, from: workers)
        for key in joined.keys.sorted() { run.setBucketValue(joined[key]!, forKey: key) }
        let failed = results.first { !$0.state.isSuccess }
        let cancelled = results.contains { if case .cancelled = $0.state { true } else { false } }
        // Its bucket writes are the joined values: a resumed run that replays it sets them again.
        let writes = joined.keys.sorted().map { FlowRecordedEvent(time: Date(), kind: .set(key: $0, value: joined[$0]!)) }
        var combined = FlowTaskResult(operationName: task.operationName, state: failed?.state ?? .successfully, events: writes, bucket: joined,
                                      startedAt: results.map(\.startedAt).min() ?? Date(), finishedAt: results.map(\.finishedAt).max() ?? Date())
        combined.error = failed?.error
        if !cancelled { journalAccepted(combined, tag: nil, at: id) }
        if cancelled { return .ran(.cancelled) }
        if let failed { return .ran(.failed(failed.failure)) }
        return .ran(Task.isCancelled ? .cancelled : nil)
    }

    /// The failure of a step that could not run on each worker, recorded as its result.
    private func fail(_ task: FlowTask, _ message: String) -> Outcome {
        let now = Date()
        let result = FlowTaskResult(operationName: task.operationName, state: .withError(message), events: [], bucket: [:],
                                    startedAt: now, finishedAt: now)
        run.progress(.operationFinished(run.record(result, appliesBucketChanges: false, location: task.location)))
        return .failed(result.failure)
    }

    /// What the workers' runs put in the bucket (their last write of each key), joined in
    /// worker order (``runOnEachWorker``).
    static func joined(_ results: [FlowTaskResult], from workers: [FlowWorkerIdentity]) -> [String: Any] {
        var joined: [String: Any] = [:]
        var lists: [String: [Any]] = [:]
        var notLists: Set<String> = []
        for (result, worker) in zip(results, workers) where result.state.isSuccess {
            var written: [String: Any] = [:]
            var order: [String] = []
            for event in result.events {
                guard case .set(let key, let value) = event.kind else { continue }
                if written[key] == nil { order.append(key) }
                written[key] = value
            }
            for key in order {
                let value = written[key]!
                if let list = value as? [Any], !notLists.contains(key) {
                    lists[key, default: []] += list.map { Self.sourced($0, by: worker) }
                } else {
                    notLists.insert(key)
                    lists[key] = nil
                    joined[key] = value
                }
            }
        }
        for (key, list) in lists { joined[key] = list }
        return joined
    }

    /// A list element that says which worker put it out.
    static func sourced(_ element: Any, by worker: FlowWorkerIdentity) -> Any {
        if var map = element as? [String: Any] {
            if map["worker"] == nil { map["worker"] = worker.name }
            if map["host"] == nil { map["host"] = worker.host }
            return map
        }
        if let text = element as? String { return ["path": text, "worker": worker.name, "host": worker.host] as [String: Any] }
        return element
    }
}
