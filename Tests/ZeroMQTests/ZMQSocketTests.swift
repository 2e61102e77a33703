import Foundation
import Testing
import ZeroMQ

@Suite("ZMQSocket endpoints and messages")
struct ZMQSocketTests {
    @Test func bindingAWildcardTCPPortReportsTheResolvedPortInLastEndpoint() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let socket = try zmq.socket(.router)
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = try #require(Int(endpoint.dropFirst("tcp://127.0.0.1:".count)))
        #expect((1...65535).contains(port))
    }

    @Test func routerAndDealerExchangeMultipartMessagesAddressedByRoutingID() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let router = try zmq.socket(.router)
        let endpoint = try zmq.bindLoopback(router)
        let dealer = try zmq.socket(.dealer)
        try dealer.set(.routingID(Data(text: "worker-1")))
        #expect(try dealer.routingID == Data(text: "worker-1"))
        try dealer.connect(endpoint)

        #expect(try dealer.send([Data(text: "hello"), Data(), Data(text: "world")]))
        let request = try #require(try router.receiveMultipart())
        #expect(request == [Data(text: "worker-1"), Data(text: "hello"), Data(), Data(text: "world")])

        #expect(try router.send([Data(text: "worker-1"), Data(text: "reply"), Data(text: "2")]))
        let reply = try #require(try dealer.receiveMultipart())
        #expect(reply == [Data(text: "reply"), Data(text: "2")])
    }

    @Test func ipcEndpointWithAnAbsolutePathInATemporaryFolderCarriesMessages() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("zmq-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("pair.sock").path
        #expect(path.hasPrefix("/"))

        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let server = try zmq.socket(.pair)
        try server.bind("ipc://\(path)")
        #expect(try server.lastEndpoint == "ipc://\(path)")
        #expect(FileManager.default.fileExists(atPath: path))
        let client = try zmq.socket(.pair)
        try client.connect("ipc://\(path)")

        try client.send(Data(text: "over ipc"))
        #expect(try server.receiveMultipart() == [Data(text: "over ipc")])
    }

    @Test func nonBlockingReceiveOnAnEmptySocketReturnsNil() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let pull = try zmq.socket(.pull)
        _ = try zmq.bindLoopback(pull)
        let start = ContinuousClock.now
        #expect(try pull.receiveMultipart(dontWait: true) == nil)
        #expect(try pull.receiveFrame(dontWait: true) == nil)
        #expect(milliseconds(since: start) < 1_000)
    }

    @Test func blockingReceiveReturnsNilOnceTheReceiveTimeoutPasses() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let pull = try zmq.socket(.pull, receiveTimeout: 150)
        #expect(try pull.receiveTimeout == 150)
        _ = try zmq.bindLoopback(pull)
        let start = ContinuousClock.now
        #expect(try pull.receiveMultipart() == nil)
        let elapsed = milliseconds(since: start)
        #expect(elapsed >= 120, "returned after \(elapsed) ms, before the 150 ms time-out")
        #expect(elapsed < 10_000)
    }

    @Test func nonBlockingSendWithNoPeerReturnsFalse() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let push = try zmq.socket(.push)
        #expect(try push.send(Data(text: "nobody"), dontWait: true) == false)
        #expect(try push.send([Data(text: "a"), Data(text: "b")], flags: .dontWait) == false)
    }

    @Test func routerMandatorySendToAnUnknownPeerThrowsHostUnreachable() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let router = try zmq.socket(.router)
        try router.set(.routerMandatory(true))
        _ = try zmq.bindLoopback(router)
        let error = try #require(throws: ZMQError.self) {
            try router.send([Data(text: "nobody"), Data(text: "lost")])
        }
        #expect(error.isHostUnreachable)
        #expect(error.code == ZMQError.hostUnreachable)
    }

    @Test func bindingAnInvalidEndpointThrowsAnErrorThatNamesTheEndpoint() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let socket = try zmq.socket(.router)
        let error = try #require(throws: ZMQError.self) {
            try socket.bind("tcp://127.0.0.1:99999")
        }
        #expect(error.code == ZMQError.invalidArgument)
        #expect(error.description == "bind tcp://127.0.0.1:99999: Invalid argument (errno 22)")

        // libzmq 4.3.4 itself would bind port 99999 as 34463 and -1 as 65535.
        #expect(throws: ZMQError.self) { try socket.connect("tcp://127.0.0.1:-1") }
        let malformed = try #require(throws: ZMQError.self) { try socket.bind("tcp://127.0.0.1:abc") }
        #expect(malformed.description.hasPrefix("bind tcp://127.0.0.1:abc: "))
        let unknown = try #require(throws: ZMQError.self) { try socket.connect("nonsense://x") }
        #expect(unknown.description.hasPrefix("connect nonsense://x: "))
        #expect(try socket.lastEndpoint.isEmpty, "a rejected endpoint was bound")
    }

    @Test func oneMebibyteFramesRoundTripByteIdenticalOverTCP() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let router = try zmq.socket(.router)
        let endpoint = try zmq.bindLoopback(router)
        let dealer = try zmq.socket(.dealer)
        try dealer.connect(endpoint)
        let payload = randomBytes(1 << 20)
        let trailer = randomBytes(1 << 20)

        try dealer.send([payload, trailer])
        let received = try #require(try router.receiveMultipart())
        #expect(received.count == 3)
        #expect(received.dropFirst().elementsEqual([payload, trailer]))

        try router.send(received)
        let echoed = try #require(try dealer.receiveMultipart())
        #expect(echoed == [payload, trailer])
    }

    @Test func closeIsIdempotentAndTheContextTerminatesDespiteQueuedMessages() throws {
        let zmq = try ZMQHarness()
        defer { zmq.finish() }
        let push = try zmq.context.socket(.push)
        #expect(try push.linger == 0, "sockets must start with linger 0, not libzmq's -1")
        // Nothing listens on port 1: the message waits in the connection's queue, which with
        // libzmq's default linger would keep zmq_ctx_term waiting for ever.
        try push.connect("tcp://127.0.0.1:1")
        #expect(try push.send(Data(text: "queued"), dontWait: true))

        push.close()
        push.close()
        #expect(push.isClosed)
        let error = try #require(throws: ZMQError.self) { try push.send(Data(text: "late")) }
        #expect(error.isNotSocket)

        let context = zmq.context
        #expect(runWithTimeout(seconds: 5) { context.close() }, "zmq_ctx_term hung")
        #expect(context.isClosed)
        context.close()
        #expect(throws: ZMQError.self) { try context.socket(.pair) }
    }
}
