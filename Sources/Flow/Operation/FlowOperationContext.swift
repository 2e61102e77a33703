import Foundation

/// What one run of one op sees and records; guarded by the op's lock.
/// Unchecked: every access happens under the owning op's lock.
final class FlowOperationContext: @unchecked Sendable {
    var bucket: [String: Any]
    let groupTag: String?
    let attempt: Int
    let retry: FlowRetryPolicy
    var events: [FlowRecordedEvent] = []
    /// Whether `setData` writes are recorded as events: not for a group element, whose bucket is
    /// its own and thrown away (only its output is collected), in this process as on the wire.
    let recordsBucketWrites: Bool
    var isAsynchronous = false
    var isFinished = false
    let startedAt = Date()
    var onFinish: ((FlowFinishState, (any Error)?) -> Void)?
    /// How the run ended, once it has.
    var outcome: (FlowFinishState, (any Error)?)?

    init(bucket: [String: Any], groupTag: String?, attempt: Int = 1, retry: FlowRetryPolicy = .none,
         recordsBucketWrites: Bool = true) {
        self.bucket = bucket
        self.recordsBucketWrites = recordsBucketWrites
        self.groupTag = groupTag
        self.attempt = attempt
        self.retry = retry
    }
}

/// Builds the bracketed tag the summary puts before an op's lines.
enum FlowLabel {
    static func make(name: String, tag: String?, worker: String?) -> String {
        let tag = tag ?? "", worker = worker ?? ""
        // Made in one buffer: a group makes one label per element.
        var label = ""
        label.reserveCapacity(name.utf8.count + tag.utf8.count + worker.utf8.count + 6)
        label.append("[")
        label.append(name)
        if !tag.isEmpty {
            label.append(" ")
            label.append(tag)
        }
        if !worker.isEmpty {
            label.append(" @ ")
            label.append(worker)
        }
        label.append("]")
        return label
    }
}
