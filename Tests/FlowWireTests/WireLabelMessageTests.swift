import Flow
import FlowWire
import Foundation
import Testing

/// LABELS (PROTOCOL.md §7.10): its layout byte for byte, round trips, what a receiver rejects, who
/// may send it.
@Suite("Label messages")
struct WireLabelMessageTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    private func labels(_ hex: String) -> [Data] { frames(WireCommand.labels.rawValue, body: bytes(hex: hex)) }

    @Test("the command and the feature bit have the values the spec gives them")
    func values() {
        #expect(WireCommand.labels.rawValue == 0x0C)
        #expect(WireCommand.labels.description == "LABELS")
        #expect(WireReady.Feature.labels == 1 << 7)
        #expect(WireCommand.labels.canBeSent(by: .worker) && WireCommand.labels.canBeSent(by: .coordinator))
        #expect(!WireCommand.labels.canBeSent(by: .client))
    }

    @Test("LABELS examples: the coordinator's question is an empty list, the answer key and value pairs")
    func labelBytes() throws {
        try expectBody(.labels([]), "00")
        try expectBody(.labels([WireLabel(key: "role", value: "recorder"), WireLabel(key: "zone", value: "b")]),
                       "02  04 726f6c65 08 7265636f72646572  04 7a6f6e65 01 62")
        // A value may be empty, and any UTF-8 without control characters.
        try expectBody(.labels([WireLabel(key: "k8s.io/node", value: ""), WireLabel(key: "site", value: "zürich")]),
                       "02  0b 6b38732e696f2f6e6f6465 00  04 73697465 07 7ac3bc72696368")
    }

    @Test("a key that is empty, too long, or not letters, digits and . _ - / is malformed")
    func badKeys() {
        expectRejection(labels("01 00 01 62"), .invalidField)
        expectRejection(labels("01 02 6120 01 62"), .invalidField)   // "a "
        expectRejection(labels("01 02 2d61 01 62"), .invalidField)   // "-a": starts with a dash
        expectRejection(labels("01 02 613d 01 62"), .invalidField)   // "a="
        let long = String(repeating: "61", count: WireLimits.maximumLabelKeyBytes + 1)
        expectRejection(labels("01 40 \(long) 01 62"), .overLimit)
    }

    @Test("a value with a control character, or longer than 255 bytes, is malformed")
    func badValues() {
        expectRejection(labels("01 01 61 02 620a"), .invalidField)
        expectRejection(labels("01 01 61 03 62c285"), .invalidField) // U+0085, a C1 control
        let long = String(repeating: "62", count: WireLimits.maximumLabelValueBytes + 1)
        expectRejection(labels("01 01 61 8002 \(long)"), .overLimit)
    }

    @Test("the same key twice is malformed, and more than 64 labels are refused at the count")
    func duplicatesAndCount() throws {
        expectRejection(labels("02 01 61 01 62 01 61 01 63"), .invalidField)
        var writer = WireWriter(capacity: 0)
        writer.writeVarint(UInt64(WireLimits.maximumLabels + 1))
        for index in 0...WireLimits.maximumLabels {
            WireLabel(key: "k\(index)", value: "v").write(to: &writer)
        }
        expectRejection(frames(WireCommand.labels.rawValue, body: Array(writer.data)), .overLimit)
        let most = (0..<WireLimits.maximumLabels).map { WireLabel(key: "k\($0)", value: "v") }
        #expect(try WireCodec.decode(WireCodec.encode(.labels(most))) == .labels(most))
    }

    @Test("a SUBMIT's placement follows the checkpoint under flags bit 5, before the element; never empty")
    func placementInSubmit() throws {
        var task = WireTask(taskID: 8, op: "sq", groupElement: .integer(5), elementIndex: 3)
        task.placement = [WireLabel(key: "role", value: "recorder")]
        try expectBody(.submit([task]), "01  0800000000000000  01000000  02 7371  00  00  00  21  00000000  01 04 726f6c65 08 7265636f72646572  03 03 0a")
        task.checkpoint = .null
        try expectBody(.submit([task]), "01  0800000000000000  01000000  02 7371  00  00  00  31  00000000  00  01 04 726f6c65 08 7265636f72646572  03 03 0a")
        // A preference follows the placement under flags bit 6.
        task.checkpoint = .none
        task.preference = [WireLabel(key: "host", value: "b1")]
        try expectBody(.submit([task]), "01  0800000000000000  01000000  02 7371  00  00  00  61  00000000  01 04 726f6c65 08 7265636f72646572  "
                       + "01 04 686f7374 02 6231  03 03 0a")
        // Flags bit 5 with an empty list, or a label that breaks the rules.
        expectRejection(frames(WireCommand.submit.rawValue, body: bytes(hex: "01  0800000000000000  01000000  02 7371  00  00  00  20  00000000  00")),
                        .invalidField)
        expectRejection(frames(WireCommand.submit.rawValue, body: bytes(hex: "01  0800000000000000  01000000  02 7371  00  00  00  20  00000000  01 01 2d 01 62")),
                        .invalidField)
    }

    @Test("every strict prefix of a LABELS body is rejected as truncated")
    func truncated() {
        let full = body(of: .labels([WireLabel(key: "role", value: "recorder")]))
        for length in 0..<full.count {
            #expect(throws: WireDecodingError.self) { try WireCodec.decode(frames(WireCommand.labels.rawValue, body: Array(full[..<length]))) }
        }
    }
}
