package import Flow

extension WireTask {
    /// Flags bit 0: the task is a group element, and its index and element follow the time limit.
    static let groupElementFlag: UInt8 = 0x01
    static let operationAttemptFlag: UInt8 = 0x02
    static let retryPolicyFlag: UInt8 = 0x04
    /// Flags bit 3: a budget id (varint) follows the retry policy (§15).
    static let budgetFlag: UInt8 = 0x08
    /// Flags bit 4: the op's checkpoint (a value, `null` for none yet) follows the budget (§7.9).
    static let checkpointFlag: UInt8 = 0x10
    /// Flags bit 5: the task's placement (a list of labels, §7.10's layout) follows the checkpoint
    /// (§14.4); only in SUBMIT.
    static let placementFlag: UInt8 = 0x20
    /// Flags bit 6: the task's preferred labels (a list, as the placement) follow the placement
    /// (§14.4); only in SUBMIT.
    static let preferenceFlag: UInt8 = 0x40
    /// The fewest bytes one task takes: fixed fields, empty strings and empty maps.
    static let minimumEncodedSize = 8 + 4 + 1 + 1 + 1 + 1 + 1 + 4

    /// Appends the task's fields in spec order.
    package func write(to writer: inout WireWriter) {
        var parameters: WireWriter.WrittenMap? = nil
        var bucket: WireWriter.WrittenMap? = nil
        write(to: &writer, parameters: &parameters, bucket: &bucket)
    }

    /// Writes one task of a batch, copying the bytes of the batch's task before it for a
    /// parameter map or bucket equal to its own (``WireWriter/writeValueMap(_:repeating:)``).
    package func write(to writer: inout WireWriter, parameters lastParameters: inout WireWriter.WrittenMap?,
                      bucket lastBucket: inout WireWriter.WrittenMap?) {
        writer.writeUInt64(taskID)
        writer.writeUInt32(attempt)
        let received = storage.value.received
        if let fields = received.fields {
            writer.writeRaw(fields)
        } else {
            writer.writeString(op)
            writer.writeString(displayTag)
            writer.writeValueMap(parameters, repeating: &lastParameters)
            writer.writeValueMap(bucket, repeating: &lastBucket)
        }
        let attemptFlag = operationAttempt > 1 ? Self.operationAttemptFlag : 0
        let retryFlag = retry != nil ? Self.retryPolicyFlag : 0
        let budgetFlag = budget != nil ? Self.budgetFlag : 0
        let checkpoint = storage.value.checkpoint
        let checkpointFlag = checkpoint != nil ? Self.checkpointFlag : 0
        let placement = storage.value.placement
        let placementFlag = placement.isEmpty ? 0 : Self.placementFlag
        let preference = storage.value.preference
        let preferenceFlag = preference.isEmpty ? 0 : Self.preferenceFlag
        writer.writeUInt8((isGroupElement ? Self.groupElementFlag : 0) | attemptFlag | retryFlag | budgetFlag | checkpointFlag | placementFlag
                          | preferenceFlag)
        writer.writeUInt32(timeLimitMilliseconds)
        if attemptFlag != 0 { writer.writeUInt32(operationAttempt) }
        if let retry { retry.write(to: &writer) }
        if let budget { writer.writeVarint(budget) }
        if let checkpoint { writer.writeValue(checkpoint) }
        if placementFlag != 0 { WireLabel.writeList(placement, to: &writer) }
        if preferenceFlag != 0 { WireLabel.writeList(preference, to: &writer) }
        if let element = received.element {
            writer.writeRaw(element)
        } else if let groupElement {
            writer.writeVarint(UInt64(elementIndex))
            writer.writeValue(groupElement)
        }
    }

    /// Reads the task's fields in spec order.
    ///
    /// - Throws: on any malformed field, including reserved flag bits that are set.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        var batch = BatchReading()
        try self.init(reading: &reader, batch: &batch)
    }

    /// What the tasks of one batch read before the next: its op name, parameters and bucket,
    /// shared by the next task when their bytes are the same (``WireReader/readString(_:reusing:)``,
    /// ``WireReader/readValueMap(_:reusing:)``).
    package struct BatchReading: Sendable {
        var op: WireReader.ReadString?
        var parameters: WireReader.ReadMap?
        var bucket: WireReader.ReadMap?
        /// Whether each task keeps the bytes it was read from (``ReceivedBytes``), for a pool
        /// that relays it.
        var keepsBytes = false

        package init(keepingBytes: Bool = false) {
            keepsBytes = keepingBytes
        }
    }

    /// Reads one task of a batch, sharing what the batch's task before it read (``BatchReading``).
    package init(reading reader: inout WireReader, batch: inout BatchReading) throws(WireDecodingError) {
        let start = reader.offset
        let taskID = try reader.readUInt64("task id")
        let attempt = try reader.readUInt32("attempt")
        let fieldsStart = reader.offset
        let op = try reader.readString("op name", reusing: &batch.op)
        let displayTag = try reader.readString("display tag")
        let parameters = try reader.readValueMap("parameters", reusing: &batch.parameters)
        let bucket = try reader.readValueMap("bucket", reusing: &batch.bucket)
        let flagsStart = reader.offset
        let flags = try reader.readUInt8("flags")
        guard flags & ~(Self.groupElementFlag | Self.operationAttemptFlag | Self.retryPolicyFlag | Self.budgetFlag
                              | Self.checkpointFlag | Self.placementFlag | Self.preferenceFlag) == 0 else {
            throw WireDecodingError(.invalidField, offset: flagsStart, "flags: reserved bits set in 0x\(flags.hexDigits)")
        }
        let timeLimitMilliseconds = try reader.readUInt32("time limit")
        var operationAttempt: UInt32 = 1
        if flags & Self.operationAttemptFlag != 0 {
            let attemptStart = reader.offset
            operationAttempt = try reader.readUInt32("op attempt")
            guard operationAttempt > 1 else {
                throw WireDecodingError(.invalidField, offset: attemptStart, "op attempt: \(operationAttempt), but flags bit 1 says more than 1")
            }
        }
        var retry: WireRetryPolicy?
        if flags & Self.retryPolicyFlag != 0 {
            retry = try WireRetryPolicy(reading: &reader)
        }
        let budget = flags & Self.budgetFlag != 0 ? try reader.readVarint("budget") : nil
        let checkpoint: FlowValue? = flags & Self.checkpointFlag != 0 ? .some(try reader.readValue("checkpoint")) : .none
        let placement = flags & Self.placementFlag != 0 ? try WireLabel.readNonEmptyList(&reader, field: "placement", flagBit: 5) : []
        let preference = flags & Self.preferenceFlag != 0 ? try WireLabel.readNonEmptyList(&reader, field: "preference", flagBit: 6) : []
        var elementIndex = 0
        // `.none`, not `nil`: `FlowValue` is `ExpressibleByNilLiteral`, and a bare `nil` can
        // become `.some(.null)`.
        var groupElement: FlowValue? = .none
        let elementStart = reader.offset
        if flags & Self.groupElementFlag != 0 {
            elementIndex = try reader.readIndex("element index")
            groupElement = .some(try reader.readValue("group element"))
        }
        let received = batch.keepsBytes
            ? ReceivedBytes(reader.bytes, fields: fieldsStart..<flagsStart, element: flags & Self.groupElementFlag != 0 ? elementStart..<reader.offset : nil)
            : ReceivedBytes()
        storage = _FlowCopyOnWriteBox(Fields(op: op, displayTag: displayTag, parameters: parameters,
                                 bucket: bucket, groupElement: groupElement, elementIndex: elementIndex,
                                 timeLimitMilliseconds: timeLimitMilliseconds, operationAttempt: operationAttempt, retry: retry,
                                 checkpoint: checkpoint, placement: placement, preference: preference, received: received))
        ids = Ids(taskID: taskID, attempt: attempt, budget: budget)
        receivedSize = reader.offset - start
    }
}
