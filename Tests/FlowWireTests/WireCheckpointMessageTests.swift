import Flow
import FlowWire
import Foundation
import Testing

/// CHECKPOINT and a TASK's checkpoint (flags bit 4, PROTOCOL.md §7.9): layouts byte for byte, round
/// trips, what a receiver rejects, who may send it.
@Suite("Checkpoint messages")
struct WireCheckpointMessageTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    @Test("the command and the feature bits have the values the spec gives them")
    func values() {
        #expect(WireCommand.checkpoint.rawValue == 0x0B)
        #expect(WireCommand.checkpoint.description == "CHECKPOINT")
        #expect(WireReady.Feature.checkpoint == 1 << 6)
        #expect(WireWelcome.Feature.checkpoints == 1 << 1)
        #expect(WireCommand.checkpoint.canBeSent(by: .worker) && !WireCommand.checkpoint.canBeSent(by: .client))
    }

    @Test("CHECKPOINT example: task id, attempt, the value")
    func checkpointBytes() throws {
        try expectBody(.checkpoint([WireCheckpoint(taskID: 7, attempt: 2, value: .integer(5))]), "01  0700000000000000  02000000  03 0a")
        try expectBody(.checkpoint([WireCheckpoint(taskID: 1, attempt: 1, value: .null),
                                    WireCheckpoint(taskID: 2, attempt: 1, value: .string("u"))]),
                       "02  0100000000000000 01000000 00  0200000000000000 01000000 05 01 75")
    }

    @Test("a TASK's checkpoint follows the budget under flags bit 4, before the element; null says none yet")
    func taskCheckpoint() throws {
        var task = WireTask(taskID: 8, attempt: 2, op: "sq", displayTag: "3f2a", groupElement: .integer(5), elementIndex: 3)
        task.budget = 300
        task.checkpoint = .integer(1)
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  19  00000000  ac02  03 02  03  03 0a")
        task.budget = nil
        task.checkpoint = .null
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  11  00000000  00  03  03 0a")
        task.checkpoint = .none
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  01  00000000  03  03 0a")
    }

    @Test("a worker's task starts from the TASK's checkpoint, and null is none")
    func flowTaskTakesTheCheckpoint() {
        var wire = WireTask(taskID: 1, op: "sq")
        wire.checkpoint = .map(["uploadId": "u1"])
        #expect(FlowTask(wire: wire).checkpoint == .map(["uploadId": "u1"]))
        wire.checkpoint = .null
        #expect(FlowTask(wire: wire).checkpoint == Optional<FlowValue>.none)
    }

    @Test("every checkpoint message decodes to what was encoded")
    func roundTrips() throws {
        var task = WireTask(taskID: 3, op: "UploadFileOp", parameters: ["a": 1], bucket: ["b": "c"])
        task.checkpoint = .map(["parts": .array([.map(["number": 1, "etag": "\"e1\""])])])
        let messages: [WireMessage] = [
            .checkpoint([WireCheckpoint(taskID: .max, attempt: .max, value: .map(["k": .array([.double(1.5), .bytes(Data([1, 2]))])]))]),
            .task([task]),
            .submit([task]),
        ]
        for message in messages { #expect(try roundTrip(message) == message) }
    }

    @Test("an empty list, a truncated entry and a trailing byte are malformed")
    func rejections() {
        expectRejection(frames(0x0B, body: [0x00]), .emptyBatch)
        // The value is missing: the count claims more than the body holds.
        expectRejection(frames(0x0B, body: bytes(hex: "01 0700000000000000 02000000")), .lengthExceedsBody)
        // A second entry's value is cut off.
        expectRejection(frames(0x0B, body: bytes(hex: "02 0700000000000000 02000000 00  0800000000000000 02000000 04 0000")), .truncated)
        expectRejection(frames(0x0B, body: bytes(hex: "01 0700000000000000 02000000 00 00")), .trailingBytes)
    }
}
