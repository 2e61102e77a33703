import Foundation

extension FlowTaskResult {
    /// The error a failed result stands for.
    var failure: any Error {
        if let error { return error }
        switch state {
        case .withInsufficientInputData(let text): return FlowDataError.insufficientInputData(text)
        case .withMismatchInputDataType(let text): return FlowDataError.mismatchInputDataType(text)
        case .withError(let text): return FlowRemoteError(operation: operationName, worker: worker, message: text)
        case .cancelled: return FlowError.cancelled
        case .successfully: return FlowRemoteError(operation: operationName, worker: worker, message: "no error")
        }
    }
}

/// An op that failed on another machine: its error's printed form.
public struct FlowRemoteError: Error, CustomStringConvertible, Sendable {
    /// The op.
    public let operation: String
    /// The worker it ran on.
    public let worker: String?
    /// `"\(error)"` on the worker.
    public let message: String

    /// Creates an error.
    public init(operation: String, worker: String?, message: String) {
        self.operation = operation
        self.worker = worker
        self.message = message
    }

    public var description: String { message }
}
