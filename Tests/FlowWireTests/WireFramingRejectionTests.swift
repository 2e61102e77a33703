import Flow
import FlowWire
import Foundation
import Testing

@Suite("Frame-level rejection")
struct WireFramingRejectionTests {
    private let validBody = bytes(hex: "03 627965")  // DISCONNECT "bye"

    @Test("a message with no frames is rejected")
    func noFrames() {
        expectRejection([], .missingFrame)
    }

    @Test("a frame 0 that is not FLOW02 is rejected as the wrong protocol", arguments: ["", "FLOW", "FLOW021", "MDPW01", "flow01", "FLOWxx"])
    func wrongProtocol(signature: String) {
        expectRejection(frames(0x05, body: validBody, protocolFrame: Array(signature.utf8)), .wrongProtocol)
    }

    @Test("a binary frame 0 is rejected and shown in hex")
    func binaryProtocolFrame() throws {
        do {
            _ = try WireCodec.decode([Data([0x00, 0xFF, 0x10]), Data([0x04])])
            Issue.record("decoded a binary protocol frame")
        } catch {
            #expect(error.code == .wrongProtocol)
            #expect(error.description.contains("0x00ff10"), "\(error)")
        }
    }

    @Test("another version of the protocol is rejected as unsupported, naming it", arguments: ["FLOW01", "FLOW00", "FLOW99"])
    func otherVersion(signature: String) {
        let message = frames(0x04, protocolFrame: Array(signature.utf8))
        expectRejection(message, .unsupportedVersion)
        do {
            _ = try WireCodec.decode(message)
        } catch {
            #expect(error.description.contains("unsupported protocol version \(signature), this peer speaks FLOW02"), "\(error)")
        }
    }

    @Test("a message with only the protocol frame is rejected")
    func missingCommand() {
        expectRejection([Data("FLOW02".utf8)], .missingFrame)
    }

    @Test("a command frame that is not one byte is rejected")
    func commandFrameLength() {
        expectRejection([Data("FLOW02".utf8), Data()], .invalidCommandFrame)
        expectRejection([Data("FLOW02".utf8), Data([0x04, 0x00])], .invalidCommandFrame)
    }

    @Test("unknown command bytes are rejected, naming the byte", arguments: [0x00, 0x0D, 0x0F, 0x17, 0x7F, 0xFF] as [UInt8])
    func unknownCommand(command: UInt8) {
        expectRejection(frames(command, body: validBody), .unknownCommand)
        do {
            _ = try WireCodec.decode(frames(command, body: validBody))
        } catch {
            #expect(error.description.contains("0x" + hexString([command])), "\(error)")
        }
    }

    @Test("a command that needs a body but has none is rejected", arguments: [WireCommand.ready, .task, .result, .disconnect])
    func missingBody(command: WireCommand) {
        expectRejection(frames(command.rawValue), .missingFrame)
    }

    @Test("a HEARTBEAT with a body frame, even an empty one, is rejected")
    func heartbeatWithBody() {
        expectRejection(frames(0x04, body: []), .extraFrames)
        expectRejection(frames(0x04, body: [0x00]), .extraFrames)
    }

    @Test("extra frames after the body are rejected", arguments: sampleMessages.filter { $0.command.hasBody })
    func extraFrames(message: WireMessage) {
        expectRejection(WireCodec.encode(message) + [Data()], .extraFrames)
        expectRejection(WireCodec.encode(message) + [Data("more".utf8)], .extraFrames)
    }

    @Test("an empty body frame is a truncated body")
    func emptyBody() {
        for command in [WireCommand.ready, .task, .result, .disconnect] {
            expectRejection(frames(command.rawValue, body: []), .truncated)
        }
    }
}
