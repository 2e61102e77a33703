import Foundation

/// Walks a flow tree: serial ops one after another, groups fanned out under their concurrency
/// limit, cases decided on the bucket. Ops run through an executor; the engine applies their
/// bucket changes and writes their summary lines.
struct FlowEngine: Sendable {
    /// How a walk ended.
    enum Outcome: Sendable {
        case completed
        /// No case branch matched: the flow ends successfully (the seed's behaviour).
        case endedEarly
        case failed(any Error)
        case cancelled
    }

    let flow: Flow
    let executor: any FlowExecutor

    func run(_ nodes: [FlowPlanNode]) async -> Outcome {
        await runList(nodes) ?? .completed
    }

    /// Runs steps in order; returns an outcome when the walk must stop, `nil` to go on.
    private func runList(_ nodes: [FlowPlanNode]) async -> Outcome? {
        for node in nodes {
            if Task.isCancelled { return .cancelled }
            let stop: Outcome?
            switch node {
            case .operation(let reference, let location):
                stop = await runSerial(reference, location: location)
            case .group(let plan):
                stop = await runGroup(plan)
            case .cases(let branches, let defaultSteps):
                stop = await runCases(branches: branches, defaultSteps: defaultSteps)
            }
            if let stop { return stop }
        }
        return nil
    }

    private func runSerial(_ reference: FlowOperationReference, location: FlowSourceLocation?) async -> Outcome? {
        let task: FlowTask
        switch reference {
        case .instance(let operation):
            task = FlowTask(operation: .instance(operation), bucket: flow.dataBucket,
                            operationName: operation.operationName, location: location)
        case .named(let name, let parameters):
            let bucket = flow.dataBucket
            do {
                let resolved = try FlowParameterTemplate.resolve(parameters, bucket: bucket)
                task = FlowTask(operation: .named(name, parameters: resolved), bucket: bucket, operationName: name, location: location)
            } catch {
                return reportUnresolved(error, operation: name, location: location)
            }
        }
        flow.progress(.operationStarted(name: task.operationName))
        let result = await executor.execute(task)
        flow.progress(.operationFinished(flow.record(result, tag: nil, appliesBucketChanges: true, location: location)))
        if case .cancelled = result.state { return .cancelled }
        guard result.state.isSuccess else { return .failed(result.failure) }
        return Task.isCancelled ? .cancelled : nil
    }

    private func runGroup(_ plan: FlowGroupPlan) async -> Outcome? {
        guard let elements = flow.dataBucket[plan.inputKey] as? [Any], !elements.isEmpty else {
            flow.log(message: "[FlowArrayGroupDispatcher] group created: 0")
            flow.log(message: "[Group] no operation to run for group; please make sure the input data: <\(plan.inputKey)> is not empty")
            return .failed(FlowError.emptyGroupInput(key: plan.inputKey))
        }
        flow.log(message: "[FlowArrayGroupDispatcher] group created: \(elements.count)")
        let operationName = groupOperationName(plan)
        flow.progress(.groupStarted(operation: operationName, total: elements.count, maxConcurrent: plan.maxConcurrent))
        var done = 0
        var failed = 0
        defer { flow.progress(.groupFinished(operation: operationName, done: done, failed: failed, total: elements.count)) }

        var resolvedPlan = plan
        if case .named(let name, let parameters) = plan.source {
            do {
                resolvedPlan.source = .named(name, parameters: try FlowParameterTemplate.resolve(parameters, bucket: flow.dataBucket))
            } catch {
                return reportUnresolved(error, operation: name, location: plan.location)
            }
        }
        let tasks = elements.enumerated().map { index, element in groupTask(resolvedPlan, index: index, element: element) }
        var outputs = [Any?](repeating: nil, count: elements.count)
        let executor = self.executor
        let stop: Outcome? = await withTaskGroup(of: FlowTaskResult.self) { group in
            var next = 0
            while next < min(plan.maxConcurrent, tasks.count) {
                let task = tasks[next]
                group.addTask { await executor.execute(task) }
                next += 1
            }
            while let result = await group.next() {
                if Task.isCancelled || { if case .cancelled = result.state { return true } else { return false } }() {
                    group.cancelAll()
                    return .cancelled
                }
                let record = flow.record(result, tag: tasks[result.groupIndex ?? 0].groupTag, appliesBucketChanges: false,
                                         groupOutputKey: plan.outputKey, location: plan.location)
                done += 1
                if !result.state.isSuccess { failed += 1 }
                flow.progress(.groupElementFinished(record, done: done, failed: failed, total: tasks.count))
                // The seed's rule (PROTOCOL.md §7.3): only a successful element's output is collected.
                if result.state.isSuccess, let index = result.groupIndex, let output = result.groupOutput { outputs[index] = output }
                if !result.state.isSuccess && !plan.allowFailure {
                    flow.log(message: "[Group] not allow failure in group. stop immediately.")
                    group.cancelAll()
                    return .failed(result.failure)
                }
                if next < tasks.count {
                    let task = tasks[next]
                    group.addTask { await executor.execute(task) }
                    next += 1
                }
            }
            return nil
        }
        if let stop { return stop }
        let collected = outputs.compactMap { $0 }
        flow.applyBucketChange(key: plan.outputKey, value: collected, at: Date())
        flow.log(message: "[FlowArrayGroupDispatcher] all finished. output size: \(collected.count)")
        return nil
    }

    /// A parameter referenced a missing bucket key: the op fails as the seed fails a missing key.
    private func reportUnresolved(_ error: any Error, operation: String, location: FlowSourceLocation?) -> Outcome {
        let now = Date()
        let message = String(describing: error)
        let result = FlowTaskResult(operationName: operation, state: .withInsufficientInputData(message),
                                    error: FlowDataError.insufficientInputData(message), events: [], bucket: [:],
                                    startedAt: now, finishedAt: now)
        flow.progress(.operationFinished(flow.record(result, tag: nil, appliesBucketChanges: false, location: location)))
        return .failed(result.failure)
    }

    private func groupOperationName(_ plan: FlowGroupPlan) -> String {
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

    private func runCases(branches: [(FlowCase, [FlowPlanNode])], defaultSteps: [FlowPlanNode]?) async -> Outcome? {
        let bucket = flow.dataBucket
        for (flowCase, steps) in branches where (bucket[flowCase.key] as? String) == flowCase.value {
            return await runList(steps)
        }
        if let defaultSteps { return await runList(defaultSteps) }
        flow.log(message: "[Cases] no case is matached. finished in early.")
        return .endedEarly
    }
}

/// Short random ids that tell a group's ops apart in the summary (`[UploadOp 3f2a]`).
enum FlowGroupTag {
    static func make() -> String {
        let digits = Array("0123456789abcdef")
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt16
        return String((0..<4).map { digits[Int(value >> (12 - 4 * $0)) & 0xF] })
    }
}
