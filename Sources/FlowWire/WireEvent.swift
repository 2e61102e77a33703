import Flow
import Foundation

/// Something an op did while it ran, as a RESULT carries it: a log line or a bucket write, with
/// the time it happened on the worker. In a process, the same event is a `FlowRecordedEvent`;
/// ``FlowTaskResult/init(wire:operationName:worker:)`` and ``WireResult/init(_:for:)`` convert.
public struct WireEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// A `log(message:)` line.
        case log(String)
        /// A `setData(name:value:)` call.
        case set(key: String, value: FlowValue)
    }

    /// When it happened.
    public var time: Date
    /// What happened.
    public var kind: Kind

    /// Creates an event.
    public init(time: Date, kind: Kind) {
        self.time = time
        self.kind = kind
    }
}

extension WireWriter {
    /// Appends an event: timestamp, kind byte (0x00 log, 0x01 set), then the log line, or the key
    /// and value.
    public mutating func writeEvent(_ event: WireEvent) {
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
    public mutating func readEvent(_ field: StaticString) throws(WireDecodingError) -> WireEvent {
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
