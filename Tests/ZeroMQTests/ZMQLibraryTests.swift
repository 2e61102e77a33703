import Foundation
import Testing
import ZeroMQ

@Suite("libzmq facts, Z85 and errors")
struct ZMQLibraryTests {
    @Test func theLinkedLibraryIsVersionFourWithCurveAndIPC() {
        #expect(ZMQ.version >= ZMQVersion(major: 4, minor: 3, patch: 0))
        #expect(ZMQ.version.description.split(separator: ".").count == 3)
        #expect(ZMQ.has("ipc"))
        #expect(!ZMQ.has("no-such-capability"))
    }

    @Test func z85RoundTripsTheSpecTestVectorAndRejectsBadLengths() throws {
        // The test vector of ZeroMQ RFC 32 (Z85).
        let bytes = Data([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
        #expect(try ZMQ.z85Encode(bytes) == "HelloWorld")
        #expect(try ZMQ.z85Decode("HelloWorld") == bytes)
        #expect(throws: ZMQError.self) { try ZMQ.z85Encode(Data([1, 2, 3])) }
        #expect(throws: ZMQError.self) { try ZMQ.z85Decode("abcd") }
    }

    @Test func errorsDescribeOperationTextAndCodeAndCompareByValue() {
        let error = ZMQError(code: ZMQError.again, operation: "receive on PULL")
        #expect(error.isAgain)
        #expect(!error.isTerminated)
        #expect(error.description.hasPrefix("receive on PULL: "))
        #expect(error.description.hasSuffix("(errno \(ZMQError.again))"))
        #expect(error == ZMQError(code: ZMQError.again, operation: "receive on PULL"))
        #expect(error != ZMQError(code: ZMQError.interrupted, operation: "receive on PULL"))
        #expect(ZMQError(code: ZMQError.terminated, operation: "x").message == "Context was terminated")
        #expect(ZMQError(code: ZMQError.interrupted, operation: "x").isInterrupted)
    }

    @Test func socketOptionsReadBackAndAFileDescriptorIsExposed() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let socket = try zmq.socket(.dealer)
        try socket.set(
            .sendHighWaterMark(123), .receiveHighWaterMark(456), .immediate(true),
            .heartbeatInterval(milliseconds: 1_000), .heartbeatTimeToLive(milliseconds: 3_000),
            .heartbeatTimeout(milliseconds: 3_000), .reconnectInterval(milliseconds: 50),
            .reconnectIntervalMax(milliseconds: 1_000), .maxMessageSize(1 << 24)
        )
        #expect(try socket.sendHighWaterMark == 123)
        #expect(try socket.receiveHighWaterMark == 456)
        #expect(try socket.intOption(ZMQ_IMMEDIATE_VALUE) == 1)
        #expect(try socket.fileDescriptor >= 0)
        #expect(try socket.events.isEmpty)
        let error = try #require(throws: ZMQError.self) { try socket.set(.routingID(Data())) }
        #expect(error.description.contains("routingID"))
    }
}

/// `ZMQ_IMMEDIATE`, spelled out so the test target needs no import of the C module.
private let ZMQ_IMMEDIATE_VALUE: Int32 = 39
