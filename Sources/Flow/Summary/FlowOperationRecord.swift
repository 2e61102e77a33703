public import Foundation

/// One run of one op, for reports: who ran it, when, how it ended, and what it logged.
public struct FlowOperationRecord: Sendable, Hashable {
    /// The op's name.
    public var operationName: String
    /// The group element's short id, `nil` for a serial op.
    public var tag: String?
    /// The element's index in its group, `nil` for a serial op.
    public var groupIndex: Int?
    /// The bucket key the element's group collects into, `nil` for a serial op.
    public var groupOutputKey: String?
    /// The worker that ran it, `nil` in-process.
    public var worker: String?
    /// When it started, on the machine that ran it.
    public var startedAt: Date
    /// When it finished, on the machine that ran it.
    public var finishedAt: Date
    /// How it finished.
    public var state: FlowFinishState
    /// Its own log lines, in order.
    public var logLines: [FlowLogEntry]
    /// Where the step was written, when it came from a file.
    public var location: FlowSourceLocation?
    /// Which try this was, from 1.
    public var attempt = 1
    /// The failed tries before it, when the step retried.
    public var earlierAttempts: [FlowAttemptRecord] = []
}

/// Progress of a running flow, for live output.
public enum FlowProgressEvent: Sendable {
    /// A serial op is about to run.
    case operationStarted(name: String)
    /// A serial op finished.
    case operationFinished(FlowOperationRecord)
    /// A group fanned out `total` elements; `total` is `nil` for a group that reads its elements
    /// from a file as it runs (`input: {file:}`), whose count comes with ``groupListed(operation:listed:complete:)``.
    case groupStarted(operation: String, total: Int?, maxConcurrent: Int)
    /// A group reading its elements from a file read another page: `listed` elements are known,
    /// and all are when `complete`.
    case groupListed(operation: String, listed: Int, complete: Bool)
    /// One group element finished; `done` counts finished elements, `failed` the failed ones;
    /// `total` is `nil` while the group's count is not known.
    case groupElementFinished(FlowOperationRecord, done: Int, failed: Int, total: Int?)
    /// The group is over (every element finished, or it stopped early); `total` is `nil` when its
    /// count was never known (it stopped before its input file was read to the end).
    case groupFinished(operation: String, done: Int, failed: Int, total: Int?)
}
