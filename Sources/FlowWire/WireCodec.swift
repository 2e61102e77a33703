package import Foundation

/// Turns messages into ZeroMQ frames and back (docs/PROTOCOL.md, "Message framing").
///
/// Frames are those after the routing id: a ROUTER strips it on receive and the caller prepends
/// it on send. There is no empty delimiter frame.
package enum WireCodec {
    /// Frame 0 of every message: `FLOW02` (``WireLimits/protocolVersion``).
    package static let protocolFrame = Data(WireLimits.protocolSignature)

    /// Encodes a message into its frames: protocol, command and, except for HEARTBEAT, body.
    ///
    /// Encoding does not check limits the decoder enforces: batches must not be empty, the slot
    /// count must be at least 1, and values must nest at most ``WireLimits/maximumValueDepth``
    /// deep, or the receiver drops the message.
    /// - Parameter message: the message to send.
    /// - Returns: two or three frames.
    package static func encode(_ message: WireMessage) -> [Data] {
        let command = Data([message.command.rawValue])
        guard message.command.hasBody else { return [protocolFrame, command] }
        var writer = WireWriter(capacity: estimatedBodySize(of: message))
        encodeBody(of: message, into: &writer)
        return [protocolFrame, command, writer.data]
    }

    /// Appends a message's body (frame 2) to a writer; nothing for HEARTBEAT.
    ///
    /// For a sender that keeps one writer and reuses its storage from message to message.
    package static func encodeBody(of message: WireMessage, into writer: inout WireWriter) {
        switch message {
        case .ready(let ready):
            ready.write(to: &writer)
        case .task(let tasks), .submit(let tasks):
            writer.writeVarint(UInt64(tasks.count))
            var parameters: WireWriter.WrittenMap? = nil
            var bucket: WireWriter.WrittenMap? = nil
            for task in tasks {
                task.write(to: &writer, parameters: &parameters, bucket: &bucket)
            }
        case .result(let results):
            writer.writeVarint(UInt64(results.count))
            for result in results {
                result.write(to: &writer)
            }
        case .heartbeat, .status:
            break
        case .disconnect(let reason):
            writer.writeString(reason)
        case .recall(let ids), .cancel(let ids), .withdraw(let ids):
            writer.writeVarint(UInt64(ids.count))
            for id in ids { writer.writeUInt64(id) }
        case .hello(let hello):
            hello.write(to: &writer)
        case .welcome(let welcome):
            welcome.write(to: &writer)
        case .statusReply(let json):
            writer.writeString(json)
        case .done(let results):
            writer.writeVarint(UInt64(results.count))
            for entry in results {
                writer.writeString(entry.worker)
                entry.result.write(to: &writer)
            }
        case .progress(let entries):
            writer.writeVarint(UInt64(entries.count))
            for entry in entries { entry.write(to: &writer) }
        case .checkpoint(let entries):
            writer.writeVarint(UInt64(entries.count))
            for entry in entries { entry.write(to: &writer) }
        case .rate(let rates):
            writer.writeVarint(UInt64(rates.count))
            for rate in rates { rate.write(to: &writer) }
        case .labels(let labels):
            WireLabel.writeList(labels, to: &writer)
        case .returned(let tasks):
            writer.writeVarint(UInt64(tasks.count))
            for task in tasks {
                writer.writeUInt64(task.taskID)
                writer.writeUInt32(task.attempt)
            }
        }
    }

    /// Decodes a message from its frames, rejecting anything the spec does not allow.
    ///
    /// - Parameter frames: the frames after any routing id.
    /// - Returns: the message.
    /// - Throws: ``WireDecodingError`` saying what is wrong and where; the caller drops the
    ///   message and logs the error (and MAY answer ``WireDecodingError/Code/unsupportedVersion``
    ///   with DISCONNECT).
    package static func decode(_ frames: [Data]) throws(WireDecodingError) -> WireMessage {
        var frames = frames
        return try decode(taking: &frames)
    }

    /// Decodes a message from its frames as ``decode(_:)`` does, taking the body frame out of
    /// `frames` once it is copied for reading: when the caller holds no other reference to it, its
    /// bytes are freed before the body's values are made. A 200 MB RESULT then costs the frame
    /// and its values, not the frame twice and its values.
    ///
    /// - Parameters:
    ///   - frames: the frames after any routing id; the body frame is removed.
    ///   - relaying: decode for a relay (a pool): the tasks of a TASK or SUBMIT and the results of
    ///     a RESULT keep the bytes they were read from, so that writing them again copies those
    ///     (``WireTask/keepsReceivedBytes``, ``WireResult/encodedTail``). Only a body of at most
    ///     ``relayedBodyLimit`` bytes is kept: each task kept holds the whole body alive.
    package static func decode(taking frames: inout [Data], relaying: Bool = false) throws(WireDecodingError) -> WireMessage {
        guard let protocolFrame = frames.first else {
            throw WireDecodingError(.missingFrame, "missing protocol frame: the message has no frames")
        }
        try checkProtocol(protocolFrame)
        guard frames.count >= 2 else {
            throw WireDecodingError(.missingFrame, "missing command frame: the message has only the protocol frame")
        }
        let commandFrame = frames[1]
        guard commandFrame.count == 1, let commandByte = commandFrame.first else {
            throw WireDecodingError(.invalidCommandFrame, "command frame has \(commandFrame.count) bytes, expected 1")
        }
        guard let command = WireCommand(rawValue: commandByte) else {
            throw WireDecodingError(.unknownCommand, "unknown command 0x\(commandByte.hexDigits)")
        }
        let expectedFrames = command.hasBody ? 3 : 2
        guard frames.count <= expectedFrames else {
            throw WireDecodingError(
                .extraFrames, "\(command) has \(frames.count) frames, expected \(expectedFrames)"
            )
        }
        guard command.hasBody else { return command == .status ? .status : .heartbeat }
        guard frames.count == expectedFrames else {
            throw WireDecodingError(.missingFrame, "missing body frame for \(command)")
        }
        if command == .ready, frames[2].count > WireLimits.maximumReadyBodySize {
            // Megabytes of names: refused before the body is copied for reading (§7.1).
            throw WireDecodingError(.overLimit, "READY body of \(frames[2].count) bytes, longer than the "
                                    + "\(WireLimits.maximumReadyBodySize) a READY within the name and op limits can have")
        }
        var reader = WireReader(frames.removeLast())
        let message = try decodeBody(of: command, from: &reader, keepingBytes: relaying && reader.remaining <= relayedBodyLimit)
        try reader.expectEnd()
        return message
    }

    /// The largest body whose tasks or results keep their bytes when decoded for a relay: a task
    /// waiting at a pool keeps its whole SUBMIT body alive, so a slow task of a large one would
    /// hold it. A large body's tasks are encoded again, which costs little beside their size.
    package static let relayedBodyLimit = 64 * 1024

    private static func decodeBody(of command: WireCommand, from reader: inout WireReader, keepingBytes: Bool) throws(WireDecodingError) -> WireMessage {
        switch command {
        case .ready:
            return .ready(try WireReady(reading: &reader))
        case .task, .submit:
            let count = try readBatchCount(minimumElementSize: WireTask.minimumEncodedSize, "task count", &reader)
            var tasks: [WireTask] = []
            tasks.reserveCapacity(count)
            var batch = WireTask.BatchReading(keepingBytes: keepingBytes)
            for _ in 0..<count {
                tasks.append(try WireTask(reading: &reader, batch: &batch))
            }
            return command == .task ? .task(tasks) : .submit(tasks)
        case .result:
            return .result(try readBatch(minimumElementSize: WireResult.minimumEncodedSize, "result count", &reader) { reader throws(WireDecodingError) in
                try WireResult(reading: &reader, keepingTail: keepingBytes)
            })
        case .heartbeat:
            return .heartbeat
        case .status:
            return .status
        case .disconnect:
            return .disconnect(reason: try reader.readString("reason"))
        case .recall, .cancel, .withdraw:
            let ids = try readBatch(minimumElementSize: 8, "task id count", &reader) { reader throws(WireDecodingError) in try reader.readUInt64("task id") }
            switch command {
            case .recall: return .recall(ids)
            case .cancel: return .cancel(ids)
            default: return .withdraw(ids)
            }
        case .hello:
            return .hello(try WireHello(reading: &reader))
        case .welcome:
            return .welcome(try WireWelcome(reading: &reader))
        case .statusReply:
            return .statusReply(try reader.readString("status"))
        case .done:
            return .done(try readBatch(minimumElementSize: 1 + WireResult.minimumEncodedSize, "result count", &reader) { reader throws(WireDecodingError) in
                let worker = try reader.readString("worker name", maximumBytes: WireLimits.maximumReadyNameBytes)
                return WirePoolResult(worker: worker, result: try WireResult(reading: &reader))
            })
        case .progress, .checkpoint, .rate:
            return try decodeEntries(command, &reader)
        case .labels:
            return .labels(try WireLabel.readList(&reader))
        case .returned:
            return .returned(try readBatch(minimumElementSize: WireTaskReference.encodedSize, "returned count", &reader) { reader throws(WireDecodingError) in
                let id = try reader.readUInt64("task id")
                return WireTaskReference(taskID: id, attempt: try reader.readUInt32("attempt"))
            })
        }
    }

    /// The body of PROGRESS, CHECKPOINT or RATE: a list of entries (§15, §7.9).
    private static func decodeEntries(_ command: WireCommand, _ reader: inout WireReader) throws(WireDecodingError) -> WireMessage {
        switch command {
        case .checkpoint:
            return .checkpoint(try readBatch(minimumElementSize: WireCheckpoint.minimumEncodedSize, "checkpoint count", &reader) { reader throws(WireDecodingError) in
                try WireCheckpoint(reading: &reader)
            })
        case .rate:
            return .rate(try readBatch(minimumElementSize: WireRate.minimumEncodedSize, "rate count", &reader) { reader throws(WireDecodingError) in
                try WireRate(reading: &reader)
            })
        default:
            return .progress(try readBatch(minimumElementSize: WireProgress.minimumEncodedSize, "progress count", &reader) { reader throws(WireDecodingError) in
                try WireProgress(reading: &reader)
            })
        }
    }

    /// A batch: its count (checked against the bytes left), then each element as `element` reads it.
    private static func readBatch<Element>(
        minimumElementSize: Int, _ field: StaticString, _ reader: inout WireReader,
        element: (inout WireReader) throws(WireDecodingError) -> Element
    ) throws(WireDecodingError) -> [Element] {
        let count = try readBatchCount(minimumElementSize: minimumElementSize, field, &reader)
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try element(&reader)) }
        return elements
    }

    private static func readBatchCount(
        minimumElementSize: Int, _ field: StaticString, _ reader: inout WireReader
    ) throws(WireDecodingError) -> Int {
        let start = reader.offset
        let count = try reader.readCount(minimumElementSize: minimumElementSize, field)
        guard count > 0 else {
            throw WireDecodingError(.emptyBatch, offset: start, "\(field): a batch must hold at least one element")
        }
        return count
    }

    private static func checkProtocol(_ frame: Data) throws(WireDecodingError) {
        let signature = WireLimits.protocolSignature
        if frame.elementsEqual(signature) { return }
        if let version = WireLimits.version(ofSignature: frame) {
            throw WireDecodingError(.unsupportedVersion, "unsupported protocol version \(version), this peer speaks \(WireLimits.protocolVersion)")
        }
        let bytes = [UInt8](frame.prefix(32))
        throw WireDecodingError(.wrongProtocol, "wrong protocol frame \(printable(bytes, total: frame.count)), expected \"\(WireLimits.protocolVersion)\"")
    }

    /// A frame shown in a log line: quoted when it is printable ASCII, hex otherwise.
    private static func printable(_ bytes: [UInt8], total: Int) -> String {
        let ellipsis = total > bytes.count ? "… (\(total) bytes)" : ""
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            return "\"\(String(decoding: bytes, as: UTF8.self))\(ellipsis)\""
        }
        return "0x" + bytes.map(\.hexDigits).joined() + ellipsis
    }

    /// A guess at the body size so most messages are written without reallocating.
    private static func estimatedBodySize(of message: WireMessage) -> Int {
        switch message {
        case .ready(let ready): return 64 + ready.ops.reduce(0) { $0 + $1.utf8.count + 1 }
        case .task(let tasks), .submit(let tasks): return 8 + tasks.count * 128
        case .result(let results): return 8 + results.reduce(0) { $0 + 64 + $1.events.count * 48 }
        case .heartbeat, .status: return 0
        case .disconnect(let reason): return reason.utf8.count + 10
        case .recall(let ids), .cancel(let ids), .withdraw(let ids): return 10 + ids.count * 8
        case .hello, .welcome: return 1_100
        case .statusReply(let json): return json.utf8.count + 10
        case .done(let results): return 8 + results.reduce(0) { $0 + 80 + $1.worker.utf8.count + $1.result.events.count * 48 }
        case .returned(let tasks): return 10 + tasks.count * WireTaskReference.encodedSize
        case .progress(let entries): return 10 + entries.count * 24
        case .rate(let rates): return 10 + rates.count * 20
        case .checkpoint(let entries): return 10 + entries.count * 64
        case .labels(let labels): return 2 + labels.reduce(0) { $0 + 4 + $1.key.utf8.count + $1.value.utf8.count }
        }
    }
}
