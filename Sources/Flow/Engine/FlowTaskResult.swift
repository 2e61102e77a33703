import Foundation

/// What one run of one op produced, wherever it ran.
public struct FlowTaskResult: @unchecked Sendable {
    /// The op's name as shown in the summary.
    public var operationName: String
    /// How it finished.
    public var state: FlowFinishState
    /// The error behind a failure, when it ran in this process (`nil` for a remote op's failure,
    /// whose text is in ``state``).
    public var error: (any Error)?
    /// Log lines and bucket writes, in the order the op made them.
    public var events: [FlowRecordedEvent]
    /// The op's bucket when it finished (a group element's output is read from it).
    public var bucket: [String: Any]
    /// When the op started, on the machine that ran it.
    public var startedAt: Date
    /// When the op finished, on the machine that ran it.
    public var finishedAt: Date
    /// The worker that ran the op, `nil` in-process.
    public var worker: String?
    /// For a group element: its index in the group.
    public var groupIndex: Int?
    /// For a group element: the value it left at its `primaryOutputParamKey`, if any.
    public var groupOutput: Any?
    /// For a failure: whether trying again would fail the same way (``FlowRetryAdvice``; bucket
    /// data errors always are), so `retry` does not try it again.
    public var isPermanentFailure: Bool
    /// For a failure: how long it asked to wait before another try (HTTP `Retry-After`).
    public var retryAfter: Duration?
    /// Which try this was, from 1 (``FlowRetryPolicy``).
    public var attempt = 1
    /// The failed tries before this one, when the step retried.
    public var earlierAttempts: [FlowAttemptRecord] = []
    /// For a group element run in this process: its task's tag, carried to the engine with the
    /// result.
    var groupTag: String?

    /// Creates a result.
    public init(
        operationName: String, state: FlowFinishState, error: (any Error)? = nil, events: [FlowRecordedEvent],
        bucket: [String: Any], startedAt: Date, finishedAt: Date, worker: String? = nil
    ) {
        self.operationName = operationName
        self.state = state
        self.error = error
        self.events = events
        self.bucket = bucket
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.worker = worker
        isPermanentFailure = Self.isPermanent(state: state, error: error)
        retryAfter = (error as? any FlowRetryAdvice)?.retryAfter
    }

    /// Whether a failure would only repeat: bucket data errors, errors that say so
    /// (``FlowRetryAdvice``), and a flow's own errors (an unknown op, bad parameters).
    static func isPermanent(state: FlowFinishState, error: (any Error)?) -> Bool {
        switch state {
        case .successfully, .cancelled: return false
        case .withInsufficientInputData, .withMismatchInputDataType: return true
        case .withError:
            if let advice = error as? any FlowRetryAdvice { return advice.isPermanent }
            return error is FlowError || error is FlowParameterError || error is FlowDataError
        }
    }

    /// A result for a task that could not be run at all: named and indexed as the task is.
    ///
    /// - Parameters:
    ///   - error: why; its printed form is the summary's `withError:` text.
    ///   - task: the task that was not run.
    public static func failure(_ error: any Error, for task: FlowTask) -> FlowTaskResult {
        var result = failure(error, operationName: task.operationName)
        result.groupIndex = task.groupIndex
        return result
    }

    /// A result for a task that was cancelled before it ran or while it ran elsewhere.
    ///
    /// - Parameter task: the task.
    public static func cancelled(_ task: FlowTask) -> FlowTaskResult {
        var result = failure(CancellationError(), for: task)
        result.state = .cancelled
        return result
    }

    /// A result for an op that could not be run at all.
    public static func failure(_ error: any Error, operationName: String, bucket: [String: Any] = [:], worker: String? = nil) -> FlowTaskResult {
        let now = Date()
        return FlowTaskResult(
            operationName: operationName, state: .withError(String(describing: error)), error: error, events: [],
            bucket: bucket, startedAt: now, finishedAt: now, worker: worker
        )
    }
}
