import Foundation

/// Why a flow or an op failed, when no op error says it.
public enum FlowError: Error, CustomStringConvertible, Sendable, Equatable {
    /// An op returned from `mainLogic()` without finishing or calling `startWithAsynchronous()`.
    case operationDidNotFinish(operation: String)
    /// A flow file or blueprint names an op that no registry or worker knows.
    case unknownOperation(String)
    /// A group found nothing to run at its input key.
    case emptyGroupInput(key: String)
    /// A group element failed in a group that does not allow failure.
    case groupFailed(operation: String, reason: String)
    /// An op finished with missing or mistyped input.
    case inputData(String)
    /// The flow was cancelled.
    case cancelled
    /// The flow was started twice.
    case alreadyStarted

    public var description: String {
        switch self {
        case .operationDidNotFinish(let operation):
            return "\(operation).mainLogic() returned without finishing: call finishSuccessfully(), finishWithError(error:), or startWithAsynchronous() before returning"
        case .unknownOperation(let name):
            return "no op named \(name) is registered"
        case .emptyGroupInput(let key):
            return "no operation to run for group; please make sure the input data: <\(key)> is not empty"
        case .groupFailed(let operation, let reason):
            return "\(operation) failed in a group that does not allow failure: \(reason)"
        case .inputData(let message):
            return message
        case .cancelled:
            return "the flow was cancelled"
        case .alreadyStarted:
            return "the flow was already started; build a new Flow to run again"
        }
    }
}
