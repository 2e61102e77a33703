import Flow
import FlowWire
import Foundation
import Testing

/// PROGRESS and RATE (PROTOCOL.md §15), and a TASK's budget (flags bit 3): layouts byte for byte
/// as §15.3 writes them, round trips, what a receiver rejects, who may send each.
@Suite("Progress messages")
struct WireProgressMessageTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    @Test("the commands and the feature bit have the values the spec gives them")
    func values() {
        #expect(WireCommand.progress.rawValue == 0x09 && WireCommand.rate.rawValue == 0x0A)
        #expect(WireReady.Feature.progress == 0x0000_0010)
        #expect(WireCommand.progress.canBeSent(by: .worker) && !WireCommand.progress.canBeSent(by: .coordinator)
                && !WireCommand.progress.canBeSent(by: .client))
        #expect(WireCommand.rate.canBeSent(by: .coordinator) && !WireCommand.rate.canBeSent(by: .worker)
                && !WireCommand.rate.canBeSent(by: .client))
    }

    @Test("PROGRESS example: task id, attempt, bytes as a varint")
    func progressBytes() throws {
        try expectBody(.progress([WireProgress(taskID: 7, attempt: 1, bytes: 1_048_576)]), "01  0700000000000000  01000000  808040")
        try expectBody(.progress([WireProgress(taskID: 7, attempt: 1, bytes: 1), WireProgress(taskID: .max, attempt: .max, bytes: .max)]),
                       "02  0700000000000000 01000000 01  ffffffffffffffff ffffffff ffffffffffffffffff01")
    }

    @Test("RATE example: budget and bytes a second as varints, 0 for no limit")
    func rateBytes() throws {
        try expectBody(.rate([WireRate(budget: 0, bytesPerSecond: 10_485_760), WireRate(budget: 1, bytesPerSecond: 0)]),
                       "02  00 80808005  01 00")
    }

    @Test("a TASK's budget follows the retry policy under flags bit 3, before the element")
    func taskBudget() throws {
        var task = WireTask(taskID: 8, attempt: 2, op: "sq", displayTag: "3f2a", groupElement: .integer(5), elementIndex: 3)
        task.budget = 300
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  09  00000000  ac02  03  03 0a")
        task.budget = nil
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  01  00000000  03  03 0a")
    }

    @Test("every progress message decodes to what was encoded")
    func roundTrips() throws {
        let messages: [WireMessage] = [
            .progress([WireProgress(taskID: 1, attempt: 3, bytes: 65_536)]),
            .rate([WireRate(budget: .max, bytesPerSecond: .max)]),
        ]
        for message in messages { #expect(try roundTrip(message) == message) }
    }

    @Test("empty lists, a progress of 0 bytes, truncated and trailing bodies are malformed")
    func rejections() {
        expectRejection(frames(0x09, body: [0x00]), .emptyBatch)
        expectRejection(frames(0x0A, body: [0x00]), .emptyBatch)
        expectRejection(frames(0x09, body: bytes(hex: "01  0700000000000000  01000000  00")), .invalidField)
        expectRejection(frames(0x09, body: bytes(hex: "01  0700000000000000  01000000")), .lengthExceedsBody)
        expectRejection(frames(0x09, body: bytes(hex: "01  0700000000000000  01000000  80")), .truncated)
        expectRejection(frames(0x0A, body: bytes(hex: "01  00")), .lengthExceedsBody)
        expectRejection(frames(0x0A, body: bytes(hex: "01  00 80")), .truncated)
        expectRejection(frames(0x0A, body: bytes(hex: "01  00 00 00")), .trailingBytes)
        expectRejection(frames(0x09), .missingFrame)
        // A TASK with flags bit 3 and no budget after it.
        expectRejection(frames(0x02, body: bytes(hex: "01  0800000000000000  02000000  02 7371  00  00  00  08  00000000")), .truncated)
        // Bit 7 stays reserved (bit 4 is a checkpoint, §7.9, bits 5 and 6 a placement and a preference, §14.4).
        expectRejection(frames(0x02, body: bytes(hex: "01  0800000000000000  02000000  02 7371  00  00  00  80  00000000")), .invalidField)
    }
}
