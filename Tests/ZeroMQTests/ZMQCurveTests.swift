import Foundation
import Testing
import ZeroMQ

@Suite("CURVE security")
struct ZMQCurveTests {
    /// A CURVE ROUTER server and a DEALER client that expects `expectedServerKey`.
    private func curvePair(
        _ zmq: ZMQHarness, server: ZMQCurveKeyPair, expectedServerKey: String
    ) throws -> (router: ZMQSocket, dealer: ZMQSocket) {
        let router = try zmq.socket(.router, receiveTimeout: 500)
        try router.set(.curveServer(true), .curveSecretKey(server.secretKey), .zapDomain("test"))
        let endpoint = try zmq.bindLoopback(router)
        let client = try ZMQCurveKeyPair.generate()
        let dealer = try zmq.socket(.dealer, receiveTimeout: 500)
        try dealer.set(
            .curveServerKey(expectedServerKey),
            .curvePublicKey(client.publicKey),
            .curveSecretKey(client.secretKey)
        )
        try dealer.connect(endpoint)
        return (router, dealer)
    }

    @Test func aClientWithTheServersPublicKeyTalksToTheServer() throws {
        try #require(ZMQ.has("curve"))
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let server = try ZMQCurveKeyPair.generate()
        let (router, dealer) = try curvePair(zmq, server: server, expectedServerKey: server.publicKey)

        try dealer.send(Data(text: "secret ping"))
        let request = try #require(try router.receiveMultipart())
        #expect(request.last == Data(text: "secret ping"))
        try router.send([request[0], Data(text: "secret pong")])
        #expect(try dealer.receiveMultipart() == [Data(text: "secret pong")])
    }

    @Test func aClientWithAWrongServerKeyGetsNothingThroughWithinATimeout() throws {
        try #require(ZMQ.has("curve"))
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let server = try ZMQCurveKeyPair.generate()
        let impostor = try ZMQCurveKeyPair.generate()
        let (router, dealer) = try curvePair(zmq, server: server, expectedServerKey: impostor.publicKey)

        try dealer.send(Data(text: "secret ping"), dontWait: true)
        #expect(try router.receiveMultipart() == nil, "a message crossed a failed CURVE handshake")
        #expect(try dealer.receiveMultipart(dontWait: true) == nil)
    }

    @Test func aKeyPairIsFortyZ85CharactersAndItsPublicKeyDerivesFromTheSecret() throws {
        try #require(ZMQ.has("curve"))
        let pair = try ZMQCurveKeyPair.generate()
        #expect(pair.publicKey.utf8.count == 40)
        #expect(pair.secretKey.utf8.count == 40)
        #expect(try ZMQ.z85Decode(pair.publicKey).count == 32)
        #expect(try ZMQCurveKeyPair(secretKey: pair.secretKey) == pair)
        #expect(!pair.description.contains(pair.secretKey))
        #expect(!ZMQSocketOption.curveSecretKey(pair.secretKey).description.contains(pair.secretKey))
        #expect(throws: ZMQError.self) { try ZMQCurveKeyPair(secretKey: "short") }
    }
}
