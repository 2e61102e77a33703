package import Flow
import Foundation

/// An event as a RESULT carries it: its value in its wire form (docs/PROTOCOL.md §7.3).
/// ``FlowTaskResult/init(wire:operationName:worker:)`` and ``WireResult/init(_:for:)`` convert
/// between it and the in-process `FlowRecordedEvent`.
package typealias WireEvent = FlowEvent<FlowValue>

extension WireWriter {
    /// Appends an event: timestamp, kind byte (0x00 log, 0x01 set), then the log line, or the key
    /// and value.
    package mutating func writeEvent(_ event: WireEvent) {
        writeDate(event.time)
        switch event.kind {
        case .log(let line):
            writeUInt8(0x00)
            writeString(line)
        case .set(let key, let value):
            writeUInt8(0x01)
            writeString(key)
            writeValue(value)
        }
    }
}

extension WireReader {
    /// The fewest bytes one event takes: timestamp, kind and an empty log line.
    static let minimumEventSize = 10

    /// Reads an event, rejecting an unknown kind byte.
    package mutating func readEvent(_ field: StaticString) throws(WireDecodingError) -> WireEvent {
        let time = try readDate(field)
        let kindStart = offset
        let kind = try readUInt8(field)
        switch kind {
        case 0x00:
            return WireEvent(time: time, kind: .log(try readString(field)))
        case 0x01:
            let key = try readString(field)
            return WireEvent(time: time, kind: .set(key: key, value: try readValue(field)))
        default:
            throw WireDecodingError(.invalidField, offset: kindStart, "\(field): unknown event kind 0x\(kind.hexDigits)")
        }
    }
}
