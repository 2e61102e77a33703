import Flow
import FlowWire
import Foundation
import Testing

/// The examples in docs/PROTOCOL.md, "Examples": the spec and the code must agree byte for byte.
@Suite("Spec examples")
struct WireGoldenBytesTests {
    private func expectBody(_ message: WireMessage, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = bytes(hex: hex)
        #expect(hexString(body(of: message)) == hexString(expected), sourceLocation: sourceLocation)
        #expect(try WireCodec.decode(frames(message.command.rawValue, body: expected)) == message, sourceLocation: sourceLocation)
    }

    @Test("frame 0 is FLOW02 and frame 1 the command byte")
    func framesMatchSpec() {
        #expect(hexString(WireCodec.protocolFrame) == "464c4f573032")
        #expect(WireCommand.allCases.map(\.rawValue) == Array(0x01...0x0C) + Array(0x10...0x16))
        #expect(WireValueTag.allCases.map(\.rawValue) == Array(0x00...0x09))
    }

    @Test("READY example")
    func readyExample() throws {
        let ready = WireReady(workerName: "w1", slotCount: 2, ops: ["echo"], hostname: "h", processID: 42)
        try expectBody(.ready(ready), "02 7731  00000000  02000000  01 04 6563686f  01 68  2a000000  e8030000")
    }

    @Test("TASK example")
    func taskExample() throws {
        let task = WireTask(taskID: 7, attempt: 1, op: "echo", parameters: ["n": .integer(-2)], timeLimitMilliseconds: 1_000)
        try expectBody(
            .task([task]),
            "01  0700000000000000  01000000  04 6563686f  00  01 01 6e 03 03  00  00  e8030000"
        )
    }

    @Test("RESULT example")
    func resultExample() throws {
        let result = WireResult(
            taskID: 7, attempt: 1, finishState: .successfully, startedAt: wireDate(1_000_000), finishedAt: wireDate(1_000_500),
            events: [
                WireEvent(time: wireDate(1_000_100), kind: .log("hi")),
                WireEvent(time: wireDate(1_000_200), kind: .set(key: "ok", value: .bool(true))),
            ]
        )
        try expectBody(
            .result([result]),
            """
            01  0700000000000000  01000000  00 00  40420f0000000000  34440f0000000000
            02  a4420f0000000000 00 02 6869  08430f0000000000 01 02 6f6b 02  00
            """
        )
    }

    @Test("group element TASK and RESULT examples")
    func groupElementExamples() throws {
        let task = WireTask(taskID: 8, attempt: 2, op: "sq", displayTag: "3f2a", groupElement: .integer(5), elementIndex: 3)
        try expectBody(.task([task]), "01  0800000000000000  02000000  02 7371  04 33663261  00  00  01  00000000  03  03 0a")
        let result = WireResult(
            taskID: 8, attempt: 2, finishState: .successfully, startedAt: wireDate(0), finishedAt: wireDate(0), elementIndex: 3,
            output: .integer(25)
        )
        try expectBody(.result([result]), "01  0800000000000000  02000000  00 00  0000000000000000  0000000000000000  00  02 03 03 32")
        let failed = WireResult(
            taskID: 8, attempt: 2, finishState: .withError("x"), startedAt: wireDate(0), finishedAt: wireDate(0), elementIndex: 3
        )
        try expectBody(.result([failed]), "01  0800000000000000  02000000  01 01 78 00  0000000000000000  0000000000000000  00  01 03")
        var slowDown = failed
        slowDown.retryAfterMilliseconds = 1_500
        try expectBody(.result([slowDown]), "01  0800000000000000  02000000  01 01 78 dc0b  0000000000000000  0000000000000000  00  01 03")
        let forbidden = WireResult(
            taskID: 8, attempt: 2, finishState: .withError("x"), startedAt: wireDate(0), finishedAt: wireDate(0), elementIndex: 3,
            isPermanent: true
        )
        try expectBody(.result([forbidden]), "01  0800000000000000  02000000  05 01 78  0000000000000000  0000000000000000  00  01 03")
    }

    @Test("RECALL and RETURNED examples")
    func recallAndReturnedExamples() throws {
        try expectBody(.recall([7, 9]), "02  0700000000000000  0900000000000000")
        try expectBody(.returned([WireTaskReference(taskID: 9, attempt: 2)]), "01  0900000000000000  02000000")
    }

    @Test("DISCONNECT example")
    func disconnectExample() throws {
        try expectBody(.disconnect(reason: "bye"), "03 627965")
    }

    /// FLOW/01's examples as its first text wrote them (docs/PROTOCOL.md §13): a decoder of
    /// FLOW/02 refuses each by its frame 0, naming both versions, before it reads a byte of the
    /// body, whose layout it no longer knows.
    @Test("FLOW/01 examples are refused as another version", arguments: [
        (0x01, "02 7731  00000000  02000000  01 04 6563686f  01 68  2a000000"),
        (0x02, "01  0800000000000000  02000000  02 7371  04 33663261  00  00  01  00000000  03 0a"),
        (0x03, "01  0800000000000000  02000000  00 00  0000000000000000  0000000000000000  00  01 03 32"),
        (0x05, "03 627965"),
    ] as [(UInt8, String)])
    func flow01ExamplesAreRefused(command: UInt8, hex: String) {
        do {
            _ = try WireCodec.decode(frames(command, body: bytes(hex: hex), protocolFrame: Array("FLOW01".utf8)))
            Issue.record("decoded a FLOW/01 message")
        } catch {
            #expect(error.code == .unsupportedVersion)
            #expect(error.description.contains("unsupported protocol version FLOW01, this peer speaks FLOW02"), "\(error)")
        }
        #expect(WireLimits.version(ofSignature: Data("FLOW01".utf8)) == "FLOW01")
        #expect(WireLimits.version(ofSignature: Data("FLOW02".utf8)) == nil, "our own version is not another")
        #expect(WireLimits.version(ofSignature: Data("FLOWxx".utf8)) == nil)
    }
}
