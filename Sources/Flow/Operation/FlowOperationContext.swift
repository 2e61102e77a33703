import Foundation

/// What one run of one op sees and records; guarded by the op's lock.
/// Unchecked: every access happens under the owning op's lock.
final class FlowOperationContext: @unchecked Sendable {
    var bucket: [String: Any]
    let groupTag: String?
    let attempt: Int
    let retry: FlowRetryPolicy
    var events: [FlowRecordedEvent] = []
    var isAsynchronous = false
    var isFinished = false
    let startedAt = Date()
    var onFinish: ((FlowFinishState, (any Error)?) -> Void)?

    init(bucket: [String: Any], groupTag: String?, attempt: Int = 1, retry: FlowRetryPolicy = .none) {
        self.bucket = bucket
        self.groupTag = groupTag
        self.attempt = attempt
        self.retry = retry
    }
}

/// Builds the bracketed tag the summary puts before an op's lines.
enum FlowLabel {
    static func make(name: String, tag: String?, worker: String?) -> String {
        var label = "[" + name
        if let tag, !tag.isEmpty { label += " " + tag }
        if let worker, !worker.isEmpty { label += " @ " + worker }
        return label + "]"
    }
}
