import FlowWire
import Foundation
import Logging
import ZeroMQ

/// A coordinator's connection to a pool (`run --pool`, docs/PROTOCOL.md §14): a DEALER socket
/// that says HELLO, and the translation between the pool's messages and the coordinator's state
/// machine, to which the pool is one worker (``CoordinatorStateMachine/registerPool(_:peer:now:)``).
///
/// A task the machine sends the pool goes as SUBMIT, a withdrawal as WITHDRAW; WELCOME registers
/// the pool, DONE accepts results with the name of the worker that ran each. When the pool says
/// DISCONNECT (it restarted and does not know this run, or it is stopping) or goes silent, the
/// machine loses it as it loses a worker (its tasks wait, attempt + 1), and the link says HELLO
/// again on a new socket; the tasks go out again once WELCOME comes.
final class PoolLink {
    typealias Connection = FlowCoordinator.PoolConnection

    /// The routing id under which the machine knows the pool.
    static let peer = Data("pool".utf8)

    let connection: Connection
    private let context: ZMQContext
    private let logger: Logger
    private(set) var socket: ZMQSocket
    /// With CURVE: the socket's monitor, which tells a handshake the pool's ZAP handler refused.
    private var monitor: ZMQSocket?
    /// Whether the socket changed since the shell last looked (it must poll the new one).
    var replaced = false
    private var helloSentAt: ContinuousClock.Instant
    /// Whether the pool accepted this run on the current socket.
    private(set) var welcomed = false
    /// The last DISCONNECT reason the pool gave, for the error when it never welcomes the run.
    private(set) var refusal: String?

    init(connection: Connection, context: ZMQContext, logger: Logger, now: ContinuousClock.Instant) throws {
        self.connection = connection
        self.context = context
        self.logger = logger
        helloSentAt = now
        (socket, monitor) = try Self.connect(connection, context: context)
        try sendHello(now: now)
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

    private func sendHello(now: ContinuousClock.Instant) throws {
        helloSentAt = now
        _ = try socket.send(WireCodec.encode(.hello(connection.hello)), flags: .dontWait)
    }

    /// Closes the socket and says HELLO again on a new one.
    private func reconnect(now: ContinuousClock.Instant) {
        welcomed = false
        do {
            let fresh = try Self.connect(connection, context: context)
            monitor?.close()
            socket.close()
            (socket, monitor) = fresh
            replaced = true
            try sendHello(now: now)
        } catch {
            logger.warning("cannot reconnect to the pool at \(connection.endpoint): \(error)")
            helloSentAt = now
        }
    }

    func close() {
        monitor?.close()
        socket.close()
    }

    /// The pool refuses this run: said once per reason, and kept for the run's last words.
    private func noteRefusal(_ reason: String) {
        if refusal != reason { logger.warning("the pool at \(connection.endpoint) refused this run: \(reason.escapingControlCharacters)") }
        refusal = reason
        connection.refusal.set(reason.escapingControlCharacters)
    }

    /// A CURVE handshake the pool's ZAP handler refused: the key is in none of its lists.
    private func readMonitor() {
        guard let monitor else { return }
        while let frames = try? monitor.receiveMultipart(dontWait: true) {
            guard let event = ZMQMonitorEvent(frames: frames), event.event == .handshakeFailedAuth else { continue }
            let key = connection.curve.map { " (\($0.keyPair.publicKey))" } ?? ""
            noteRefusal("its CURVE key\(key) is not in the pool's --authorized-clients (status \(event.value)): add it there and "
                + "send the pool SIGHUP, or run with another --curve-key")
        }
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

    /// Feeds results the link made itself (a task too large to submit) into the machine, as if
    /// the pool had answered them.
    func refuse<Waiter>(_ results: [WireResult], into machine: inout CoordinatorStateMachine<Waiter>, now: ContinuousClock.Instant,
                        actions: inout [CoordinatorStateMachine<Waiter>.Action]) {
        guard machine.workers[Self.peer] != nil else { return }
        for result in results { machine.accept(result, from: Self.peer, now: now, ranBy: nil, into: &actions) }
    }

    /// Feeds a message from the pool into the machine.
    func receive<Waiter>(_ message: WireMessage, into machine: inout CoordinatorStateMachine<Waiter>, now: ContinuousClock.Instant,
                         actions: inout [CoordinatorStateMachine<Waiter>.Action]) {
        let peer = Self.peer
        switch message {
        case .welcome(let welcome):
            if machine.workers[peer] != nil { actions += machine.remove(peer, reason: .reregistered, now: now) }
            if !welcomed, welcome.features & WireWelcome.Feature.budgets == 0 {
                let text = "the pool at \(connection.endpoint) predates group budgets: a limit's bytesPerSecond, and requests "
                    + "beyond op starts, are not enforced on its workers"
                logger.warning("\(text)")
            }
            if welcome.features & WireWelcome.Feature.held != 0 {
                logger.warning("\(Self.heldText(endpoint: connection.endpoint))")
            }
            welcomed = true
            refusal = nil
            connection.refusal.set(nil)
            actions += machine.registerPool(welcome, peer: peer, now: now)
        case .done(let results):
            guard machine.workers[peer] != nil else { return }
            machine.receive(.heartbeat, from: peer, now: now, into: &actions)
            for entry in results { machine.accept(entry.result, from: peer, now: now, ranBy: entry.worker, into: &actions) }
        case .returned, .heartbeat, .progress, .checkpoint:
            // PROGRESS: relayed by a pool that holds this run's budgets (§15.2 "Pools");
            // CHECKPOINT: by one that relays checkpoints (§7.9).
            guard machine.workers[peer] != nil else { return }
            machine.receive(message, from: peer, now: now, into: &actions)
        case .disconnect(let reason):
            if !welcomed || Self.isRefusal(reason) {
                // Refused (a key for another role, a key taken off the list, not a pool): said
                // once, so the user learns why no pool answers.
                noteRefusal(reason)
            }
            if machine.workers[peer] != nil { actions += machine.remove(peer, reason: .left(reason), now: now) }
            // Registered until now (the pool restarted, or stops): HELLO again at once. Refused
            // (no pool there, or not for this key): again after the liveness window.
            guard welcomed else { return }
            logger.info("the pool at \(connection.endpoint) said DISCONNECT (\(reason.escapingControlCharacters)); saying HELLO again")
            reconnect(now: now)
        case .statusReply:
            break
        default:
            actions.append(.report(.unexpectedMessage(worker: "pool", command: message.command.description)))
        }
    }

    /// What the run's user reads when the pool holds the run (WELCOME's bit 2, §14.5).
    static func heldText(endpoint: String) -> String {
        "the pool at \(endpoint) holds this run: this client already has as many runs there as one client may (the pool's "
            + "--max-runs-per-client); its tasks wait at the pool until one of them ends"
    }

    /// Whether a pool's DISCONNECT refuses this client (its key), rather than the pool restarting
    /// or stopping (§14.7, §14.8).
    static func isRefusal(_ reason: String) -> Bool {
        reason.contains("may not submit runs") || reason.contains("no longer authorised")
    }

    /// Time passed: once the machine has declared the pool dead (silence), or no WELCOME came
    /// within the liveness window, HELLO again on a new socket.
    func tick<Waiter>(_ machine: CoordinatorStateMachine<Waiter>, window: Duration, now: ContinuousClock.Instant) {
        readMonitor()
        if welcomed, machine.workers[Self.peer] == nil {
            logger.info("the pool at \(connection.endpoint) went silent; saying HELLO again")
            reconnect(now: now)
        } else if !welcomed, now - helloSentAt >= window {
            reconnect(now: now)
        }
    }
}
