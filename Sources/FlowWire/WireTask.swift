import Flow

/// One task in a TASK batch: run one op once against a bucket.
public struct WireTask: Sendable, Hashable {
    /// Identifies the task for the whole run; the RESULT carries it back.
    public var taskID: UInt64
    /// 1 for the first dispatch, one more for each re-dispatch after a worker was lost.
    public var attempt: UInt32
    /// The registered op name to run.
    public var op: String
    /// A short tag shown in the summary beside the op (e.g. `3f2a` for a group element), empty for
    /// a serial op.
    public var displayTag: String
    /// The op's parameters.
    public var parameters: [String: FlowValue]
    /// The op's input bucket for a serial op; empty for a group element.
    public var bucket: [String: FlowValue]
    /// The array element a group element task runs on, `nil` for a serial op (flags bit 0).
    ///
    /// The worker runs the op with `[primaryInputParamKey: element]` as its bucket: the op, which
    /// only the worker instantiates, is the one that knows that key.
    public var groupElement: FlowValue?
    /// The element's index in its group (0 for a serial op); it travels with the task and comes
    /// back in the RESULT, so the coordinator puts the output in its place without a lookup.
    public var elementIndex: Int
    /// How long the op may run, in milliseconds; 0 means no limit.
    public var timeLimitMilliseconds: UInt32
    /// Which try of the op this is, as the op sees it (``FlowOperation/attempt``): more than 1 for
    /// a retry, or for an element of a resumed run that may have run before the run stopped. Sent
    /// (flags bit 1) only to workers that announced ``WireReady/Feature/operationAttempt``.
    public var operationAttempt: UInt32 = 1
    /// The step's `retry:`, for ops that retry parts of their work alone
    /// (``FlowOperation/retryPolicy``); `nil` for no retry. Sent (flags bit 2) only to workers
    /// that announced ``WireReady/Feature/retryPolicy``.
    public var retry: WireRetryPolicy?

    /// Whether the task is one element of a group.
    public var isGroupElement: Bool {
        // Pattern-matched: `FlowValue` is `ExpressibleByNilLiteral`, so `!= nil` is ambiguous.
        if case .some = groupElement { return true }
        return false
    }

    /// Creates a task.
    public init(
        taskID: UInt64,
        attempt: UInt32 = 1,
        op: String,
        displayTag: String = "",
        parameters: [String: FlowValue] = [:],
        bucket: [String: FlowValue] = [:],
        groupElement: FlowValue? = .none,
        elementIndex: Int = 0,
        timeLimitMilliseconds: UInt32 = 0
    ) {
        self.taskID = taskID
        self.attempt = attempt
        self.op = op
        self.displayTag = displayTag
        self.parameters = parameters
        self.bucket = bucket
        self.groupElement = groupElement
        self.elementIndex = groupElement == nil ? 0 : elementIndex
        self.timeLimitMilliseconds = timeLimitMilliseconds
    }
}

extension WireTask {
    /// Flags bit 0: the task is a group element, and its index and element follow the time limit.
    static let groupElementFlag: UInt8 = 0x01
    static let operationAttemptFlag: UInt8 = 0x02
    static let retryPolicyFlag: UInt8 = 0x04
    /// The fewest bytes one task takes: fixed fields, empty strings and empty maps.
    static let minimumEncodedSize = 8 + 4 + 1 + 1 + 1 + 1 + 1 + 4

    /// Appends the task's fields in spec order.
    public func write(to writer: inout WireWriter) {
        writer.writeUInt64(taskID)
        writer.writeUInt32(attempt)
        writer.writeString(op)
        writer.writeString(displayTag)
        writer.writeValueMap(parameters)
        writer.writeValueMap(bucket)
        let attemptFlag = operationAttempt > 1 ? Self.operationAttemptFlag : 0
        let retryFlag = retry != nil ? Self.retryPolicyFlag : 0
        writer.writeUInt8((isGroupElement ? Self.groupElementFlag : 0) | attemptFlag | retryFlag)
        writer.writeUInt32(timeLimitMilliseconds)
        if attemptFlag != 0 { writer.writeUInt32(operationAttempt) }
        if let retry { retry.write(to: &writer) }
        if let groupElement {
            writer.writeVarint(UInt64(elementIndex))
            writer.writeValue(groupElement)
        }
    }

    /// Reads the task's fields in spec order.
    ///
    /// - Throws: on any malformed field, including reserved flag bits that are set.
    public init(reading reader: inout WireReader) throws(WireDecodingError) {
        taskID = try reader.readUInt64("task id")
        attempt = try reader.readUInt32("attempt")
        op = try reader.readString("op name")
        displayTag = try reader.readString("display tag")
        parameters = try reader.readValueMap("parameters")
        bucket = try reader.readValueMap("bucket")
        let flagsStart = reader.offset
        let flags = try reader.readUInt8("flags")
        guard flags & ~(Self.groupElementFlag | Self.operationAttemptFlag | Self.retryPolicyFlag) == 0 else {
            throw WireDecodingError(.invalidField, offset: flagsStart, "flags: reserved bits set in 0x\(flags.hexDigits)")
        }
        timeLimitMilliseconds = try reader.readUInt32("time limit")
        if flags & Self.operationAttemptFlag != 0 {
            let attemptStart = reader.offset
            operationAttempt = try reader.readUInt32("op attempt")
            guard operationAttempt > 1 else {
                throw WireDecodingError(.invalidField, offset: attemptStart, "op attempt: \(operationAttempt), but flags bit 1 says more than 1")
            }
        }
        if flags & Self.retryPolicyFlag != 0 {
            retry = try WireRetryPolicy(reading: &reader)
        }
        if flags & Self.groupElementFlag != 0 {
            elementIndex = try reader.readIndex("element index")
            groupElement = .some(try reader.readValue("group element"))
        } else {
            elementIndex = 0
            // `.none`, not `nil`: `FlowValue` is `ExpressibleByNilLiteral`, and a bare `nil` can
            // become `.some(.null)`.
            groupElement = .none
        }
    }
}
