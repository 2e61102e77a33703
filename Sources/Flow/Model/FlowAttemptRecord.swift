public import Foundation

/// One failed try of an op that was then tried again (the last try is the record itself).
public struct FlowAttemptRecord: Sendable, Hashable {
    /// Which try, from 1.
    public var attempt: Int
    /// The worker that ran it, `nil` in-process.
    public var worker: String?
    /// When it started, on the machine that ran it.
    public var startedAt: Date
    /// When it finished, on the machine that ran it.
    public var finishedAt: Date
    /// How it failed.
    public var state: FlowFinishState
    /// How long the flow waited before the next try.
    public var retryWait: Duration

    /// Records a failed try.
    public init(result: FlowTaskResult, retryWait: Duration) {
        attempt = result.attempt
        worker = result.worker
        startedAt = result.startedAt
        finishedAt = result.finishedAt
        state = result.state
        self.retryWait = retryWait
    }
}
