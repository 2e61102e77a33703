import Flow
import FlowWire
import Foundation
import Logging
import ZeroMQ

/// The pool's I/O shell: owns the ROUTER socket on one thread, reads it, feeds the
/// ``PoolStateMachine`` and performs what it returns. It holds no protocol rule itself.
struct PoolIOLoop {
    let configuration: FlowPool.Configuration
    let wakeup: ZMQWakeup
    /// Whether the pool was asked to stop.
    let isStopping: @Sendable () -> Bool
    let logger: Logger
    /// With CURVE: the roles a key may take now, and its share cap (re-read on SIGHUP).
    let roles: (@Sendable (String) -> (PoolStateMachine.Roles, PoolStateMachine.PeerKey))?
    /// Called after each turn that changed something, at most every 100 ms, with the pool's state.
    let onStatus: @Sendable (PoolStatus) -> Void
    let onEvent: @Sendable (ClusterEvent) -> Void
    private let clock = ContinuousClock()

    init(configuration: FlowPool.Configuration, wakeup: ZMQWakeup, isStopping: @escaping @Sendable () -> Bool, logger: Logger,
         roles: (@Sendable (String) -> (PoolStateMachine.Roles, PoolStateMachine.PeerKey))?, onStatus: @escaping @Sendable (PoolStatus) -> Void,
         onEvent: @escaping @Sendable (ClusterEvent) -> Void) {
        self.configuration = configuration
        self.wakeup = wakeup
        self.isStopping = isStopping
        self.logger = logger
        self.roles = roles
        self.onStatus = onStatus
        self.onEvent = onEvent
    }

    /// Serves until the pool is asked to stop; then says DISCONNECT to every worker and client.
    func run(on router: ZMQSocket, monitor: ZMQSocket? = nil) {
        var settings = configuration.machine
        if configuration.name == nil, let bound = try? router.lastEndpoint {
            // The port as bound, not the `*` the configuration may have asked for.
            settings.name = String("\(ProcessInfo.processInfo.hostName) \(bound)".prefix(255))
        }
        var machine = PoolStateMachine(configuration: settings)
        var sockets = RouterSockets(router: router, monitor: monitor, wakeup: wakeup, heartbeatInterval: configuration.heartbeatInterval,
                                    now: clock.now)
        var malformed = MalformedTraffic(heartbeatInterval: configuration.heartbeatInterval)
        var nextStatus = clock.now

        while !isStopping() {
            do {
                try sockets.poll(until: machine.nextDeadline)
            } catch {
                logger.error("pool poll failed: \(error)")
                break
            }
            let now = clock.now
            var actions: [PoolStateMachine.Action] = sockets.failedHandshakeReports(now: now).map { .report($0) }
            if sockets.routerReadable {
                actions += receiveAll(from: sockets, into: &machine, now: now, malformed: &malformed)
            }
            if sockets.tickIfDue(now: now) {
                actions += machine.tick(now: now)
                actions += malformed.heldBack(now: now).map { .report($0) }
            }
            actions += machine.dispatch(now: now)
            perform(actions, on: router, machine: &machine, now: now)
            if now >= nextStatus {
                onStatus(machine.status)
                nextStatus = now + .milliseconds(100)
            }
        }
        perform(machine.shutdown(reason: "pool stopping"), on: router, machine: &machine, now: clock.now)
        onStatus(machine.status)
    }

    private func receiveAll(from sockets: RouterSockets, into machine: inout PoolStateMachine, now: ContinuousClock.Instant,
                            malformed: inout MalformedTraffic) -> [PoolStateMachine.Action] {
        var actions: [PoolStateMachine.Action] = []
        let router = sockets.router
        // What a message's key allows: with CURVE, a key on neither list allows nothing.
        let admit = { (key: String?) -> (PoolStateMachine.Roles, PoolStateMachine.PeerKey?)? in
            guard let roles else { return (.any, nil) }
            guard let (peerRoles, peerKey) = key.map(roles), !peerRoles.isEmpty else { return nil }
            return (peerRoles, peerKey)
        }
        sockets.receiveEach(withKey: roles != nil, logger: logger, role: "pool", relaying: true, admit: admit) { inbound in
            switch inbound {
            case .revoked(let peer):
                // Taken off both lists since its handshake: whatever it was ends, and it hears why.
                actions += machine.revoke(peer, now: now)
            case .message(let peer, let (peerRoles, key), let message):
                let relays = message.command == .result || message.command == .submit
                actions += machine.receive(message, from: peer, roles: peerRoles, key: key, now: now)
                if relays {
                    // Passed on at once, before the next message is read: a RESULT's DONE to its
                    // client, a SUBMIT's TASKs to the workers.
                    actions += machine.dispatch(now: now)
                    perform(actions, on: router, machine: &machine, now: now)
                    actions = []
                }
            case .malformed(let peer, let error, let body, let signOfLife):
                if signOfLife { machine.heard(from: peer, now: now) }
                let event = malformed.handle(error, frames: body, from: peer, name: machine.peerName(peer), now: now) { reply in
                    _ = try? router.send(reply, flags: .dontWait)
                }
                if let event { actions.append(.report(event)) }
            }
        }
        return actions
    }

    /// Performs actions; a send that fails ends that peer's registration at once (§8.6).
    private func perform(_ actions: [PoolStateMachine.Action], on router: ZMQSocket, machine: inout PoolStateMachine,
                         now: ContinuousClock.Instant) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .send(let peer, let message):
                do {
                    _ = try router.send([peer] + WireCodec.encode(message), flags: .dontWait)
                } catch {
                    let reason = (error as? ZMQError)?.message ?? "\(error)"
                    queue.append(contentsOf: machine.sendFailed(to: peer, reason: "sending \(message.command) failed: \(reason)", now: now))
                }
            case .report(let event):
                logger.log(level: event.logLevel, "\(event)", metadata: event.metadata)
                onEvent(event)
            case .log(let level, let text):
                logger.log(level: level, "\(text.escapingControlCharacters)")
            }
        }
    }
}
