public import Foundation

/// What one run of one op produced, wherever it ran.
///
/// Its fields live in one shared box until a copy changes one (copy on write): a result passes
/// through the engine, the coordinator's state machine, its I/O loop, the result inbox and the
/// journal, and each copy of the fields retained its strings, arrays and existentials (callgrind:
/// six copies a group element on the coordinator, about 450 instructions each with their release).
// `@unchecked` for `Any` values and the box (_FlowCopyOnWriteBox): fields change only in a box this result alone holds.
public struct FlowTaskResult: @unchecked Sendable {
    fileprivate struct Fields {
        var operationName: String
        var state: FlowFinishState
        var error: (any Error)?
        var events: [FlowRecordedEvent]
        var bucket: [String: Any]
        var startedAt: Date
        var finishedAt: Date
        var worker: String?
        var groupIndex: Int?
        var groupOutput: Any?
        var isPermanentFailure: Bool
        var retryAfter: Duration?
        let attempt: Int
        var earlierAttempts: [FlowAttemptRecord] = []
    }

    private var storage: _FlowCopyOnWriteBox<Fields>

    /// The op's name as shown in the summary.
    public var operationName: String {
        get { storage.value.operationName }
        _modify { yield &storage.unique.value.operationName }
    }
    /// How it finished.
    public var state: FlowFinishState {
        get { storage.value.state }
        _modify { yield &storage.unique.value.state }
    }
    /// The error behind a failure, when it ran in this process (`nil` for a remote op's failure,
    /// whose text is in ``state``).
    public var error: (any Error)? {
        get { storage.value.error }
        _modify { yield &storage.unique.value.error }
    }
    /// Log lines and bucket writes, in the order the op made them.
    public var events: [FlowRecordedEvent] {
        get { storage.value.events }
        _modify { yield &storage.unique.value.events }
    }
    /// The op's bucket when it finished (a group element's output is read from it).
    public var bucket: [String: Any] {
        get { storage.value.bucket }
        _modify { yield &storage.unique.value.bucket }
    }
    /// When the op started, on the machine that ran it.
    public var startedAt: Date {
        get { storage.value.startedAt }
        _modify { yield &storage.unique.value.startedAt }
    }
    /// When the op finished, on the machine that ran it.
    public var finishedAt: Date {
        get { storage.value.finishedAt }
        _modify { yield &storage.unique.value.finishedAt }
    }
    /// The worker that ran the op, `nil` in-process.
    public var worker: String? {
        get { storage.value.worker }
        _modify { yield &storage.unique.value.worker }
    }
    /// For a group element: its index in the group.
    public var groupIndex: Int? {
        get { storage.value.groupIndex }
        _modify { yield &storage.unique.value.groupIndex }
    }
    /// For a group element: the value it left at its `primaryOutputParamKey`, if any.
    public var groupOutput: Any? {
        get { storage.value.groupOutput }
        _modify { yield &storage.unique.value.groupOutput }
    }
    /// For a failure: whether trying again would fail the same way (``FlowRetryAdvice``; bucket
    /// data errors always are), so `retry` does not try it again.
    public var isPermanentFailure: Bool {
        get { storage.value.isPermanentFailure }
        _modify { yield &storage.unique.value.isPermanentFailure }
    }
    /// For a failure: how long it asked to wait before another try (HTTP `Retry-After`).
    public var retryAfter: Duration? {
        get { storage.value.retryAfter }
        _modify { yield &storage.unique.value.retryAfter }
    }
    /// Which try this was, as the op saw it (``FlowOperation/attempt``), from 1: the retry
    /// policy's count, one more for an element of a resumed run that may have run before.
    ///
    /// Given when the result is made, from the task it answers (``FlowTask/operationAttempt``),
    /// and never changed after: the executor that ran the op is the one that knows it.
    public var attempt: Int { storage.value.attempt }
    /// The failed tries before this one, when the step retried.
    public var earlierAttempts: [FlowAttemptRecord] {
        get { storage.value.earlierAttempts }
        _modify { yield &storage.unique.value.earlierAttempts }
    }

    /// Creates a result; `attempt` is the try of the op it answers, as the op saw it
    /// (``FlowTask/operationAttempt`` of the task it ran).
    public init(
        operationName: String, state: FlowFinishState, error: (any Error)? = nil, events: [FlowRecordedEvent],
        bucket: [String: Any], startedAt: Date, finishedAt: Date, worker: String? = nil, attempt: Int = 1
    ) {
        storage = _FlowCopyOnWriteBox(Fields(
            operationName: operationName, state: state, error: error, events: events, bucket: bucket, startedAt: startedAt,
            finishedAt: finishedAt, worker: worker, groupIndex: nil, groupOutput: nil,
            isPermanentFailure: Self.isPermanent(state: state, error: error),
            retryAfter: (error as? any FlowRetryAdvice)?.retryAfter, attempt: attempt))
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

    /// A result for an op that could not be run at all; `attempt` is the try it answers
    /// (``FlowTask/operationAttempt``).
    public static func failure(_ error: any Error, operationName: String, bucket: [String: Any] = [:], worker: String? = nil,
                               attempt: Int = 1) -> FlowTaskResult {
        let now = Date()
        return FlowTaskResult(
            operationName: operationName, state: .withError(String(describing: error)), error: error, events: [],
            bucket: bucket, startedAt: now, finishedAt: now, worker: worker, attempt: attempt
        )
    }
}
