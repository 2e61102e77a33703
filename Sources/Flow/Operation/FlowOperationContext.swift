import Foundation

/// What one run of one op sees and records; guarded by the op's lock.
///
/// Not `Sendable`: it is reached through its op (``FlowOperation``, under the op's lock) or by the
/// run that made it, never handed to another thread on its own.
final class FlowOperationContext {
    // @exclusivity(unchecked): measured with FlowOperation's (see there), 670 instructions an element together.
    @exclusivity(unchecked) var bucket: [String: Any]
    let groupTag: String?
    let attempt: Int
    let retry: FlowRetryPolicy
    @exclusivity(unchecked) var events: [FlowRecordedEvent] = []
    /// Whether `setData` writes are recorded as events: not for a group element, whose bucket is
    /// its own and thrown away (only its output is collected), in this process as on the wire.
    let recordsBucketWrites: Bool
    @exclusivity(unchecked) var isAsynchronous = false
    @exclusivity(unchecked) var isFinished = false
    let startedAt = Date()
    @exclusivity(unchecked) var onFinish: ((FlowFinishState, (any Error)?) -> Void)?
    /// How the run ended, once it has.
    @exclusivity(unchecked) var outcome: (FlowFinishState, (any Error)?)?
    /// Pages an op emitted (``FlowOperation/emit(_:to:)``) with no group taking them as they
    /// came: they become its output lists when it finishes (``takeEmitted()``).
    @exclusivity(unchecked) var emitted: [String: [Any]] = [:]
    /// The group reading what the op emits as it comes, bound when the run started
    /// (``FlowElementStream/current``); `nil` for a group element's op.
    var stream: FlowElementStream?

    /// Puts the emitted pages into the bucket, each key's list whole, as one bucket write.
    func takeEmitted() {
        guard !emitted.isEmpty else { return }
        for (key, list) in emitted {
            bucket[key] = list
            if recordsBucketWrites { events.append(FlowRecordedEvent(time: Date(), kind: .set(key: key, value: list))) }
        }
        emitted = [:]
    }

    init(bucket: [String: Any], groupTag: String?, attempt: Int = 1, retry: FlowRetryPolicy = .none,
         recordsBucketWrites: Bool = true) {
        self.bucket = bucket
        self.recordsBucketWrites = recordsBucketWrites
        self.groupTag = groupTag
        self.attempt = attempt
        self.retry = retry
    }
}
