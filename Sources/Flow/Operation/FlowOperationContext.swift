import Foundation

/// What one run of one op sees and records; guarded by the op's lock.
/// Unchecked: every access happens under the owning op's lock.
final class FlowOperationContext: @unchecked Sendable {
    var bucket: [String: Any]
    let groupTag: String?
    var events: [FlowRecordedEvent] = []
    var isAsynchronous = false
    var isFinished = false
    let startedAt = Date()
    var onFinish: ((FlowFinishState, (any Error)?) -> Void)?

    init(bucket: [String: Any], groupTag: String?) {
        self.bucket = bucket
        self.groupTag = groupTag
    }
}

/// Something an op did, with an in-process value (not yet converted for the wire).
public struct FlowRecordedEvent: @unchecked Sendable {
    /// What happened.
    public enum Kind {
        /// A `log(message:)` line.
        case log(String)
        /// A `setData(name:value:)` call.
        case set(key: String, value: Any)
    }

    /// When it happened, on the machine that ran the op.
    public var time: Date
    /// What happened.
    public var kind: Kind

    /// Creates an event.
    public init(time: Date, kind: Kind) {
        self.time = time
        self.kind = kind
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
