import FlowWire
import Foundation
import Logging
import ZeroMQ

/// A coordinator's connection to a pool (`run --pool`, docs/PROTOCOL.md §14): the socket half of
/// ``PoolClientStateMachine``, which ``RunStateMachine`` embeds. It owns the DEALER socket that
/// says HELLO (and, with CURVE, its monitor), sends what the run machine sends its one worker as
/// the pool's commands (a task as SUBMIT, a withdrawal as WITHDRAW), and performs what the client
/// machine decides: log lines, the refusal kept for the run's last words, HELLO again on a new
/// socket.
final class PoolLink {
    typealias Connection = FlowCoordinator.PoolConnection

    /// The routing id under which the machine knows the pool.
    static var peer: Data { PoolClientStateMachine.peer }

    let connection: Connection
    private let context: ZMQContext
    private let logger: Logger
    private(set) var socket: ZMQSocket
    /// With CURVE: the socket's monitor, which tells a handshake the pool's ZAP handler refused.
    private var monitor: ZMQSocket?
    /// Whether the socket changed since the shell last looked (it must poll the new one).
    var replaced = false
    /// Where the pool's workers go when its STATUS-REPLY lists them (`each: worker`).
    var onWorkers: (@Sendable (CoordinatorMailbox.PoolWorkers) -> Void)?

    /// Connects and says HELLO.
    init(connection: Connection, context: ZMQContext, logger: Logger) throws {
        self.connection = connection
        self.context = context
        self.logger = logger
        (socket, monitor) = try Self.connect(connection, context: context)
        try sendHello()
    }

    private static func connect(_ connection: Connection, context: ZMQContext) throws -> (ZMQSocket, monitor: ZMQSocket?) {
        let dealer = try ZMQSocket(context: context, type: .dealer)
        try dealer.set(.sendHighWaterMark(0), .receiveHighWaterMark(0), .reconnectInterval(milliseconds: 10),
                       .reconnectIntervalMax(milliseconds: 100), .linger(milliseconds: 0),
                       .maxMessageSize(WireLimits.maximumInboundFrameSize))
        var monitor: ZMQSocket?
        if let curve = connection.curve {
            try dealer.set(.curvePublicKey(curve.keyPair.publicKey), .curveSecretKey(curve.keyPair.secretKey),
                           .curveServerKey(curve.poolKey))
            let name = "inproc://flow-pool-link-\(UInt64.random(in: 0...UInt64.max))"
            try dealer.monitor(name, events: .handshakeFailedAuth)
            let pair = try ZMQSocket(context: context, type: .pair)
            try pair.set(.linger(milliseconds: 0))
            try pair.connect(name)
            monitor = pair
        }
        try dealer.connect(connection.endpoint)
        return (dealer, monitor)
    }

    private func sendHello() throws {
        _ = try socket.send(WireCodec.encode(.hello(connection.hello)), flags: .dontWait)
    }

    /// Closes the socket and says HELLO again on a new one.
    private func reconnect() {
        do {
            let fresh = try Self.connect(connection, context: context)
            monitor?.close()
            socket.close()
            (socket, monitor) = fresh
            replaced = true
            try sendHello()
        } catch {
            logger.warning("cannot reconnect to the pool at \(connection.endpoint): \(error)")
        }
    }

    func close() {
        monitor?.close()
        socket.close()
    }

    /// Performs what the client machine decided.
    ///
    /// - Returns: whether HELLO went again on a new socket (or was tried): the machine is told
    ///   (``RunStateMachine/saidHello(now:)``).
    func perform(_ actions: [PoolClientStateMachine.Action]) -> Bool {
        var saidHello = false
        for action in actions {
            switch action {
            case .reconnect:
                reconnect()
                saidHello = true
            case .log(let level, let text): logger.log(level: level, "\(text)")
            case .refusal(let text): connection.refusal.set(text)
            case .workers(let workers): onWorkers?(workers)
            }
        }
        return saidHello
    }

    /// The CURVE handshakes the pool's ZAP handler refused since the last look (the monitor's
    /// events, with their status): the key is in none of its lists.
    func refusedHandshakes() -> [UInt32] {
        guard let monitor else { return [] }
        var refused: [UInt32] = []
        while let frames = try? monitor.receiveMultipart(dontWait: true) {
            guard let event = ZMQMonitorEvent(frames: frames), event.event == .handshakeFailedAuth else { continue }
            refused.append(event.value)
        }
        return refused
    }

    /// Sends what the machine sends its one worker, as the pool's commands.
    ///
    /// - Returns: the results of tasks too large to submit (``SubmitSizeGuard``), to be fed back
    ///   into the machine as the pool's answer.
    func send(_ message: WireMessage) -> [WireResult] {
        var frames: [[Data]]
        var refused: [WireResult] = []
        switch message {
        case .task(let tasks): (frames, refused) = SubmitSizeGuard.frames(for: tasks, limit: connection.maximumSubmitSize)
        case .recall: return [] // the pool keeps no worker queue of this run's (§14.4)
        default: frames = [WireCodec.encode(message)]
        }
        for message in frames {
            do {
                _ = try socket.send(message, flags: .dontWait)
            } catch {
                logger.debug("sending to the pool failed: \(error)")
            }
        }
        return refused
    }
}
