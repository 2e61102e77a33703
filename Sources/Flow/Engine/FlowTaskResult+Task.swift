import Foundation

extension FlowTaskResult {
    /// A result for a task that could not be run at all: named, indexed and numbered (its
    /// ``FlowTaskResult/attempt``) as the task is.
    ///
    /// - Parameters:
    ///   - error: why; its printed form is the summary's `withError:` text.
    ///   - task: the task that was not run.
    public static func failure(_ error: any Error, for task: FlowTask) -> FlowTaskResult {
        var result = failure(error, operationName: task.operationName, attempt: task.operationAttempt)
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
}
