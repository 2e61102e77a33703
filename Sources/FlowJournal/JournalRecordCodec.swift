import Flow
import FlowWire
import Foundation

/// One accepted result as journal bytes, in the wire protocol's value encoding (docs/PROTOCOL.md §6.2, the same in FLOW/01 and FLOW/02):
/// what the summary, the bucket and the JSON report need to show it again as it was.
///
/// Layout (format 2): format byte (2); op name; finish (as in RESULT); tag (flag byte 0 for none,
/// 2 and two bytes for four hex digits, 1 and a string for any other); worker (flag byte,
/// string); started date; how long it ran, finished minus started, in microseconds (zigzag
/// varint); attempt (varint); event count, then each event (date; 0 and a line, or 1, a key and a
/// value); group index (varint, 0 for none, else index + 1); output (flag byte, value); earlier
/// attempt count, then each (attempt, worker flag and string, dates, finish, wait in
/// milliseconds).
///
/// Format 1 (journals written before) kept the tag as a string and the finished date whole;
/// both are read. Format 2 is about 12 bytes shorter a record: a journal of ten million elements
/// grows by each byte ten megabytes.
enum JournalRecordCodec {
    static let format: UInt8 = 2

    /// Appends a record's bytes to `writer`: the journal encodes a transaction's records one
    /// after another into one reused buffer, without a new buffer and a copy of it per record.
    static func encode(_ record: FlowJournalRecord, into writer: inout WireWriter) {
        let result = record.result
        writer.writeUInt8(format)
        writer.writeString(result.operationName)
        writer.writeFinish(WireFinish(result.state, isPermanent: result.isPermanentFailure))
        writeTag(record.tag, to: &writer)
        writeOptional(result.worker, to: &writer)
        let started = result.startedAt.wireMicroseconds
        writer.writeDate(result.startedAt)
        let ran = result.finishedAt.wireMicroseconds &- started
        writer.writeVarint(UInt64(bitPattern: (ran << 1) ^ (ran >> 63)))
        writer.writeVarint(UInt64(max(1, result.attempt)))
        writer.writeVarint(UInt64(result.events.count))
        for event in result.events {
            writer.writeDate(event.time)
            switch event.kind {
            case .log(let text):
                writer.writeUInt8(0)
                writer.writeString(text)
            case .set(let key, let value):
                writer.writeUInt8(1)
                writer.writeString(key)
                writer.writeValue(storable(value))
            }
        }
        writer.writeVarint(result.groupIndex.map { UInt64($0) + 1 } ?? 0)
        if let output = result.groupOutput {
            writer.writeUInt8(1)
            writer.writeValue(storable(output))
        } else {
            writer.writeUInt8(0)
        }
        writer.writeVarint(UInt64(result.earlierAttempts.count))
        for attempt in result.earlierAttempts {
            writer.writeVarint(UInt64(max(1, attempt.attempt)))
            writeOptional(attempt.worker, to: &writer)
            writer.writeDate(attempt.startedAt)
            writer.writeDate(attempt.finishedAt)
            writer.writeFinish(WireFinish(attempt.state))
            writer.writeVarint(FlowSaturating.milliseconds(attempt.retryWait))
        }
    }

    static func decode(_ data: Data) throws(WireDecodingError) -> FlowJournalRecord {
        var reader = WireReader(data)
        let version = try reader.readUInt8("record format")
        guard version == 1 || version == format else {
            throw WireDecodingError(.invalidField, offset: 0, "record format \(version) is not 1 or \(format)")
        }
        let name = try reader.readString("op")
        let finish = try reader.readFinish("state")
        let tag = version == 1 ? try readOptional(&reader, "tag") : try readTag(&reader)
        let worker = try readOptional(&reader, "worker")
        let startedAt = try reader.readDate("started")
        let finishedAt: Date
        if version == 1 {
            finishedAt = try reader.readDate("finished")
        } else {
            let zigzag = try reader.readVarint("ran")
            let ran = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            finishedAt = Date(wireMicroseconds: startedAt.wireMicroseconds &+ ran)
        }
        let attempt = try reader.readIndex("attempt")
        let eventCount = try reader.readCount(minimumElementSize: 10, "events")
        var events: [FlowRecordedEvent] = []
        events.reserveCapacity(eventCount)
        for _ in 0..<eventCount {
            let time = try reader.readDate("event time")
            switch try reader.readUInt8("event kind") {
            case 0: events.append(FlowRecordedEvent(time: time, kind: .log(try reader.readString("line"))))
            case 1:
                let key = try reader.readString("key")
                events.append(FlowRecordedEvent(time: time, kind: .set(key: key, value: try reader.readValue("value").anyValue)))
            default:
                throw WireDecodingError(.invalidField, offset: reader.offset, "unknown event kind")
            }
        }
        var result = FlowTaskResult(operationName: name, state: finish.state, events: events, bucket: [:],
                                    startedAt: startedAt, finishedAt: finishedAt, worker: worker, attempt: attempt)
        result.isPermanentFailure = finish.isPermanent
        let index = try reader.readIndex("group index")
        result.groupIndex = index > 0 ? index - 1 : nil
        if try reader.readUInt8("output flag") == 1 { result.groupOutput = try reader.readValue("output").anyValue }
        let earlierCount = try reader.readCount(minimumElementSize: 20, "earlier attempts")
        for _ in 0..<earlierCount {
            let number = try reader.readIndex("attempt")
            let attemptWorker = try readOptional(&reader, "worker")
            var earlier = FlowTaskResult(operationName: name, state: .successfully, events: [], bucket: [:],
                                         startedAt: try reader.readDate("started"), finishedAt: try reader.readDate("finished"),
                                         worker: attemptWorker, attempt: number)
            earlier.state = try reader.readFinish("state").state
            let wait = try reader.readVarint("wait")
            result.earlierAttempts.append(FlowAttemptRecord(result: earlier, retryWait: .milliseconds(Int64(clamping: wait))))
        }
        try reader.expectEnd()
        return FlowJournalRecord(result: result, tag: tag)
    }

    /// A value as the journal keeps it; one with no ``FlowValue`` form is kept as its text.
    private static func storable(_ value: Any) -> FlowValue {
        FlowValue(any: value) ?? .string(String(describing: value))
    }

    private static func writeOptional(_ text: String?, to writer: inout WireWriter) {
        guard let text else {
            writer.writeUInt8(0)
            return
        }
        writer.writeUInt8(1)
        writer.writeString(text)
    }

    /// A tag of four lowercase hex digits (``FlowGroupTags``) as two bytes; any other as text.
    private static func writeTag(_ tag: String?, to writer: inout WireWriter) {
        guard let tag else {
            writer.writeUInt8(0)
            return
        }
        if tag.utf8.count == 4, tag.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }), let value = UInt16(tag, radix: 16) {
            writer.writeUInt8(2)
            writer.writeUInt8(UInt8(value >> 8))
            writer.writeUInt8(UInt8(value & 0xFF))
            return
        }
        writer.writeUInt8(1)
        writer.writeString(tag)
    }

    private static func readTag(_ reader: inout WireReader) throws(WireDecodingError) -> String? {
        switch try reader.readUInt8("tag") {
        case 0: return nil
        case 1: return try reader.readString("tag")
        case 2:
            let value = UInt16(try reader.readUInt8("tag")) << 8 | UInt16(try reader.readUInt8("tag"))
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 4 - text.count) + text
        default: throw WireDecodingError(.invalidField, offset: reader.offset, "unknown tag kind")
        }
    }

    private static func readOptional(_ reader: inout WireReader, _ field: StaticString) throws(WireDecodingError) -> String? {
        try reader.readUInt8(field) == 1 ? try reader.readString(field) : nil
    }
}
