import Foundation

/// How one op finished, in a form that crosses process boundaries.
///
/// The seed's ``FlowOperationStateFinishType`` carries the `Error` itself; this type carries its
/// printed form, which is what the summary shows and what the wire protocol sends.
public enum FlowFinishState: Sendable, Hashable {
    /// The op called `finishSuccessfully()` (or an async op returned).
    case successfully
    /// The op failed with an error; the text is `"\(error)"`.
    case withError(String)
    /// A required bucket key was missing: `can't find <key> in data bucket`.
    case withInsufficientInputData(String)
    /// A bucket value had the wrong type.
    case withMismatchInputDataType(String)
    /// The op was cancelled before it finished.
    case cancelled

    /// Whether the op succeeded.
    public var isSuccess: Bool {
        if case .successfully = self { return true }
        return false
    }

    /// The text after `DidFinish: ` in the summary, as the seed writes it.
    public var summaryText: String {
        switch self {
        case .successfully: return "successfully"
        case .withError(let text): return "withError: \(text)"
        case .withInsufficientInputData(let text): return "withInsufficientInputData: \(text)"
        case .withMismatchInputDataType(let text): return "withMismatchInputDataType: \(text)"
        case .cancelled: return "cancelled"
        }
    }

    /// `DidFinish: ` and ``summaryText``: the end of an op's last summary line.
    var didFinishText: String {
        switch self {
        case .successfully: return "DidFinish: successfully"
        case .cancelled: return "DidFinish: cancelled"
        default: return "DidFinish: " + summaryText
        }
    }
}
