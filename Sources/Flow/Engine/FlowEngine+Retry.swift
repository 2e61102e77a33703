import Foundation

extension FlowEngine {
    /// Runs a task under its step's time limit and retry policy: a transient failure is tried
    /// again after the policy's wait, elsewhere when the executor can; a permanent one, a
    /// cancellation, or the last try ends it. Each failed try writes one summary line, and the
    /// result carries every earlier try for reports.
    ///
    /// - Parameters:
    ///   - task: the first try.
    ///   - policy: the step's retry policy and time limit.
    ///   - renew: makes a fresh op for each further try, for ops given as instances.
    func execute(_ task: FlowTask, policy: FlowTaskPolicy, renew: (@Sendable () -> FlowTask.Operation)? = nil,
                 retryForbidden: (@Sendable () -> Bool)? = nil) async -> FlowTaskResult {
        // Tried once, the step's limit already on the task (a group's feed puts it there): no
        // copy of the task to change (about 230 instructions an element, callgrind).
        if policy.retry.attempts <= 1, task.timeLimit == policy.timeout, task.retry == policy.retry {
            return await executor.execute(task)
        }
        var task = task
        task.timeLimit = policy.timeout
        task.retry = policy.retry
        var earlier: [FlowAttemptRecord] = []
        let ending = await policy.retry.run(from: task.attempt) { attempt in
            if attempt > task.attempt {
                task.attempt = attempt
                if let renew {
                    task.operation = renew()
                } else if case .instance(let operation) = task.operation {
                    operation.prepareForRetry()
                }
            }
            let result = await executor.execute(task)
            let cancelled = { if case .cancelled = result.state { true } else { false } }()
            // An op that emitted pages a group already took cannot start its list again.
            let forbidden = retryForbidden?() ?? false
            return .init(value: result, mayRetry: !result.state.isSuccess && !cancelled && !result.isPermanentFailure && !forbidden,
                         retryAfter: result.retryAfter)
        } beforeWait: { result, attempt, wait in
            let label = FlowLabel.make(name: result.operationName, tag: task.groupTag, worker: result.worker)
            run.log("\(label) attempt \(attempt) of \(policy.retry.attempts) failed: \(result.state.failureText); "
                + "retrying in \(wait.shortText)")
            earlier.append(FlowAttemptRecord(result: result, retryWait: wait))
            if let worker = result.worker { task.previousWorkers.append(worker) }
        }
        var result: FlowTaskResult
        switch ending {
        case .finished(let last): result = last
        case .interrupted: result = FlowTaskResult.cancelled(task)
        }
        result.earlierAttempts = earlier
        return result
    }
}

extension FlowFinishState {
    /// The failure's text without its state name (`HTTP 503`), empty for success.
    public var failureText: String {
        switch self {
        case .successfully: return ""
        case .cancelled: return "cancelled"
        case .withError(let text), .withInsufficientInputData(let text), .withMismatchInputDataType(let text): return text
        }
    }
}
