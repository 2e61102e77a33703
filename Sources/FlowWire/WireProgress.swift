/// One entry of PROGRESS (docs/PROTOCOL.md §15): bytes one task's op sent since the worker's last
/// PROGRESS.
package struct WireProgress: Sendable, Hashable {
    /// The task, from its TASK.
    package var taskID: UInt64
    /// The attempt, from its TASK.
    package var attempt: UInt32
    /// Bytes sent since the last entry for this task; at least 1.
    package var bytes: UInt64

    /// Creates an entry.
    package init(taskID: UInt64, attempt: UInt32, bytes: UInt64) {
        self.taskID = taskID
        self.attempt = attempt
        self.bytes = bytes
    }

    /// The fewest bytes one entry takes.
    static let minimumEncodedSize = 8 + 4 + 1

    /// Appends the fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeUInt64(taskID)
        writer.writeUInt32(attempt)
        writer.writeVarint(bytes)
    }

    /// Reads the fields in spec order.
    ///
    /// - Throws: on truncation, an invalid varint, or a byte count of 0.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        taskID = try reader.readUInt64("task id")
        attempt = try reader.readUInt32("attempt")
        let start = reader.offset
        bytes = try reader.readVarint("bytes")
        guard bytes > 0 else { throw WireDecodingError(.invalidField, offset: start, "bytes: an entry must count at least 1 byte") }
    }

    /// A request entry (feature bit 5, §15): `count` requests a task's op made since the last
    /// request entry for it, beyond the one its start counts. It has a progress entry's layout with
    /// attempt 0, which no TASK carries (attempts start at 1).
    package static func requests(taskID: UInt64, count: UInt64) -> WireProgress {
        WireProgress(taskID: taskID, attempt: 0, bytes: count)
    }

    /// Whether this entry counts requests (attempt 0), not bytes.
    package var isRequests: Bool { attempt == 0 }
}

/// One entry of RATE (docs/PROTOCOL.md §15): the bytes a second one group budget allows the
/// receiving worker, for all of its tasks of that budget together.
package struct WireRate: Sendable, Hashable {
    /// The budget, as TASKs carry it (flags bit 3).
    package var budget: UInt64
    /// Bytes a second; 0 means no bytes limit.
    package var bytesPerSecond: UInt64

    /// Creates an entry.
    package init(budget: UInt64, bytesPerSecond: UInt64) {
        self.budget = budget
        self.bytesPerSecond = bytesPerSecond
    }

    /// The fewest bytes one entry takes.
    static let minimumEncodedSize = 2

    /// Appends the fields in spec order.
    package func write(to writer: inout WireWriter) {
        writer.writeVarint(budget)
        writer.writeVarint(bytesPerSecond)
    }

    /// Reads the fields in spec order.
    ///
    /// - Throws: on truncation or an invalid varint.
    package init(reading reader: inout WireReader) throws(WireDecodingError) {
        budget = try reader.readVarint("budget")
        bytesPerSecond = try reader.readVarint("bytes per second")
    }

    /// Added to a budget id, it marks a request-rate entry (feature bit 5, §15); budget ids stay
    /// below it.
    package static let requestsMark: UInt64 = 1 << 62

    /// A request-rate entry (feature bit 5, §15): the requests a second `budget` allows the
    /// receiving worker, in thousandths (0 for no requests limit), in a rate entry's layout whose
    /// budget field is 2^62 + the budget id.
    package static func requests(budget: UInt64, perMille: UInt64) -> WireRate {
        WireRate(budget: requestsMark | budget, bytesPerSecond: perMille)
    }

    /// The budget a request-rate entry is for; `nil` for a bytes entry.
    package var requestsBudget: UInt64? { budget >= Self.requestsMark ? budget - Self.requestsMark : nil }
}
