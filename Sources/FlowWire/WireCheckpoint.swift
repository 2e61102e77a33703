package import Flow

/// One entry of CHECKPOINT (docs/PROTOCOL.md §7.9): what one task's op saved to continue from
/// (``FlowOperation/saveCheckpoint(_:)``), its latest value replacing any earlier one.
package struct WireCheckpoint: Sendable, Hashable {
    /// The task, from its TASK.
    package var taskID: UInt64
    /// The attempt, from its TASK.
    package var attempt: UInt32
    /// What the op saved.
    package var value: FlowValue

    /// Creates an entry.
    package init(taskID: UInt64, attempt: UInt32, value: FlowValue) {
        self.taskID = taskID
        self.attempt = attempt
        self.value = value
    }

    /// The fewest bytes one entry takes: the ids and a one-byte value.
    static let minimumEncodedSize = 8 + 4 + 1

    /// Appends the fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeUInt64(taskID)
        writer.writeUInt32(attempt)
        writer.writeValue(value)
    }

    /// Reads the fields in spec order.
    ///
    /// - Throws: on truncation or a malformed value.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        taskID = try reader.readUInt64("task id")
        attempt = try reader.readUInt32("attempt")
        value = try reader.readValue("checkpoint")
    }
}
