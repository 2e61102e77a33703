import Flow
import FlowWire
import Foundation

/// One accepted result as journal bytes, in the wire protocol's value encoding (docs/PROTOCOL.md §6.2, the same in FLOW/01 and FLOW/02):
/// what the summary, the bucket and the JSON report need to show it again as it was.
///
/// Layout: format byte (1); op name; finish (as in RESULT); tag and worker (flag byte, string);
/// started and finished dates; attempt (varint); event count, then each event (date; 0 and a
/// line, or 1, a key and a value); group index (varint, 0 for none, else index + 1); output (flag
/// byte, value); earlier attempt count, then each (attempt, worker flag and string, dates, finish,
/// wait in milliseconds).
enum JournalRecordCodec {
    static let format: UInt8 = 1

    /// Appends a record's bytes to `writer`: the journal encodes a transaction's records one
    /// after another into one reused buffer, without a new buffer and a copy of it per record.
    static func encode(_ record: FlowJournalRecord, into writer: inout WireWriter) {
        let result = record.result
        writer.writeUInt8(format)
        writer.writeString(result.operationName)
        writer.writeFinish(WireFinish(result.state, isPermanent: result.isPermanentFailure))
        writeOptional(record.tag, to: &writer)
        writeOptional(result.worker, to: &writer)
        writer.writeDate(result.startedAt)
        writer.writeDate(result.finishedAt)
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
        guard version == format else {
            throw WireDecodingError(.invalidField, offset: 0, "record format \(version) is not \(format)")
        }
        let name = try reader.readString("op")
        let finish = try reader.readFinish("state")
        let tag = try readOptional(&reader, "tag")
        let worker = try readOptional(&reader, "worker")
        let startedAt = try reader.readDate("started")
        let finishedAt = try reader.readDate("finished")
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

    private static func readOptional(_ reader: inout WireReader, _ field: StaticString) throws(WireDecodingError) -> String? {
        try reader.readUInt8(field) == 1 ? try reader.readString(field) : nil
    }
}
