import Foundation

/// Where a ``FlowBatchExecutor`` puts the results of the tasks it was handed, from any thread, and
/// where the engine takes them in batches: one wake-up for however many arrived meanwhile.
public final class FlowResultInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [FlowTaskResult] = []
    private var waiting: CheckedContinuation<[FlowTaskResult], Never>?
    private var closed = false

    /// An empty inbox.
    public init() {}

    /// Hands over one task's result.
    public func deliver(_ result: FlowTaskResult) {
        let waiter: CheckedContinuation<[FlowTaskResult], Never>? = lock.withLock {
            guard let waiter = waiting else {
                results.append(result)
                return nil
            }
            waiting = nil
            return waiter
        }
        waiter?.resume(returning: [result])
    }

    /// The results that arrived since the last call, waiting for at least one. Empty once the
    /// calling task is cancelled.
    func next() async -> [FlowTaskResult] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[FlowTaskResult], Never>) in
                let ready: [FlowTaskResult]? = lock.withLock {
                    if !results.isEmpty {
                        defer { results = [] }
                        return results
                    }
                    if closed { return [] }
                    waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<[FlowTaskResult], Never>? = lock.withLock {
                closed = true
                defer { waiting = nil }
                return waiting
            }
            waiter?.resume(returning: [])
        }
    }
}

/// An executor that also takes many tasks in one call and answers through a ``FlowResultInbox``:
/// a group's elements then need no Swift task each, and a burst of them goes out together. The
/// engine uses it for groups whose elements are tried once (no `retry`) and that it says it can
/// take (``canSubmit(_:)``); everything else goes through ``FlowExecutor/execute(_:)``.
public protocol FlowBatchExecutor: FlowExecutor {
    /// Whether tasks like `task` (the same op, in the same step) can go through ``submit(_:into:)``.
    func canSubmit(_ task: FlowTask) -> Bool

    /// Starts the tasks; each one's result goes into `inbox` exactly once, whatever happens to it
    /// (a failure to send it is a failed result, a shutdown a cancelled one).
    func submit(_ tasks: [FlowTask], into inbox: FlowResultInbox)

    /// Gives up every task handed over with `inbox` that has no result yet: each ends as cancelled
    /// (its result still arrives in the inbox, or none does once the run is stopping).
    func cancelAll(in inbox: FlowResultInbox)
}
