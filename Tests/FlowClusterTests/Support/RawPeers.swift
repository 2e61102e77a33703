import FlowTestSupport
import FlowWire
import Foundation
import Testing
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Peers that are not workers, for throwing bad traffic at a coordinator.
enum RawPeers {
    /// Connects a DEALER to `endpoint`, sends every message in `messages`, collects what comes
    /// back for `listen` seconds, and closes everything (linger 0).
    ///
    /// The whole exchange runs on one thread of its own (``TestCommand/offThread(_:)``): a ZeroMQ
    /// socket stays on the thread that made it, and its `zmq_poll` holds no cooperative thread.
    /// - Returns: the decodable replies.
    static func dealer(to endpoint: String, send messages: [[Data]], listen: Double = 0.5) async throws -> [WireMessage] {
        try await exchange(with: endpoint, send: messages, listen: listen).compactMap { try? WireCodec.decode($0) }
    }

    /// As ``dealer(to:send:listen:)``, returning every reply's frames as they came, whatever
    /// their version or shape.
    static func exchange(with endpoint: String, send messages: [[Data]], listen: Double = 0.5) async throws -> [[Data]] {
        try await TestCommand.offThread { try exchangeBlocking(with: endpoint, send: messages, listen: listen) }
    }

    /// ``exchange(with:send:listen:)`` on the calling thread, which it blocks for `listen` seconds.
    private static func exchangeBlocking(with endpoint: String, send messages: [[Data]], listen: Double) throws -> [[Data]] {
        let context = try ZMQContext()
        defer { context.close() }
        let dealer = try ZMQSocket(context: context, type: .dealer)
        defer { dealer.close() }
        try dealer.set(.linger(milliseconds: 0), .sendTimeout(milliseconds: 1_000), .sendHighWaterMark(10_000))
        try dealer.connect(endpoint)
        for frames in messages {
            _ = try dealer.send(frames, flags: [])
        }
        // Listening for `listen` seconds is the exchange itself: every reply that comes in that
        // window, each taken as `zmq_poll` says it came.
        var replies: [[Data]] = []
        let poller = ZMQPoller()
        poller.register(dealer)
        let deadline = ContinuousClock.now + .milliseconds(Int64(listen * 1000))
        while case let left = ContinuousClock.now.duration(to: deadline), left > .zero {
            while let frames = try dealer.receiveMultipart(dontWait: true) {
                replies.append(frames)
            }
            _ = try poller.poll(timeout: max(1, Int((left / .milliseconds(1)).rounded(.up))))
        }
        while let frames = try dealer.receiveMultipart(dontWait: true) {
            replies.append(frames)
        }
        return replies
    }

    /// Opens a plain TCP connection to 127.0.0.1:`port`, writes `bytes`, ends its side, and waits
    /// (at most 5 s) until the server has closed the connection: it has read the bytes and dropped
    /// them, or refused them. The wait (`poll` on the socket) runs on a thread of its own
    /// (``TestCommand/offThread(_:)``), the caller's task suspended meanwhile.
    ///
    /// - Returns: whether the connection was made and the server closed it within 5 s.
    @discardableResult
    static func tcpWrite(port: UInt16, _ bytes: Data) async -> Bool {
        // tcpWriteBlocking throws nothing: offThread's error is only its signature's.
        (try? await TestCommand.offThread { tcpWriteBlocking(port: port, bytes) }) ?? false
    }

    /// ``tcpWrite(port:_:)`` on the calling thread, which it blocks for up to 5 s.
    private static func tcpWriteBlocking(port: UInt16, _ bytes: Data) -> Bool {
        guard let descriptor = tcpConnect(port: port) else { return false }
        defer { close(descriptor) }
        bytes.withUnsafeBytes { buffer in
            _ = Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
        _ = shutdown(descriptor, Int32(SHUT_WR))
        let deadline = ContinuousClock.now + .seconds(5)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while case let left = ContinuousClock.now.duration(to: deadline), left > .zero {
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&item, 1, Int32(max(1, (left / .milliseconds(1)).rounded(.up))))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { break }
            // The server's greeting and answers until its end (0), or a reset (-1): closed either way.
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno != EINTR) { return true }
        }
        return false
    }

    /// A connected TCP socket to 127.0.0.1:`port` (1 s send time-out), or `nil`; the caller closes it.
    static func tcpConnect(port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// The port of `tcp://HOST:PORT`.
    static func port(of endpoint: String) -> UInt16? {
        endpoint.split(separator: ":").last.flatMap { UInt16($0) }
    }

    /// `count` random bytes.
    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Messages a coordinator must drop: not FLOW, another version, broken frames and bodies.
    /// None of them is a valid READY, so none may register a worker.
    static func malformedMessages() -> [[Data]] {
        let signature = WireCodec.protocolFrame
        let ready = WireCodec.encode(.ready(WireReady(workerName: "impostor", slotCount: 4, ops: ["SimplePrintOp"],
                                                      hostname: "nowhere", processID: 1)))
        let readyBody = ready[2]
        let result = WireCodec.encode(.result([WireResult(taskID: 1, attempt: 1, finishState: .successfully,
                                                          startedAt: Date(), finishedAt: Date(), events: [])]))
        let resultBody = result[2]
        var messages: [[Data]] = [
            [randomBytes(32)],
            [Data("HTTP/1.1 200 OK".utf8), Data([0x01]), readyBody],
            [Data("FLOW01".utf8), Data([0x01]), readyBody],
            [Data("FLOW".utf8), Data([0x01]), readyBody],
            [signature, Data([0x01]), readyBody.prefix(readyBody.count / 2)],
            [signature, Data([0x01]), readyBody + Data([0xff])],
            [signature, Data([0x01]), readyBody, Data("extra".utf8)],
            [signature, Data([0x01])],
            [signature, Data([0x04]), Data()],
            [signature, Data([0x03]), resultBody.prefix(7)],
            [signature, Data([0x02]), Data([0x00])],
            [signature, Data([0x09]), Data("x".utf8)],
            // PROGRESS (§15): an empty list, and an entry of 0 bytes.
            [signature, Data([0x09]), Data([0x00])],
            [signature, Data([0x09]), Data([0x01, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x00])],
            [signature, Data([0x01, 0x02])],
            [signature],
            [Data()],
            [signature, Data([0x01]), Data([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])],
        ]
        for _ in 0..<30 {
            var frames = [Bool.random() ? signature : randomBytes(Int.random(in: 0...8)), Data([UInt8.random(in: 0...6)])]
            frames.append(randomBytes(Int.random(in: 0...64)))
            messages.append(frames)
        }
        return messages
    }

    /// A well-formed RESULT for a task this peer was never given: the coordinator must answer
    /// DISCONNECT ("send READY first").
    static func resultFromAStranger() -> [Data] {
        WireCodec.encode(.result([WireResult(taskID: 999_999, attempt: 1, finishState: .successfully,
                                             startedAt: Date(), finishedAt: Date(), events: [])]))
    }
}
