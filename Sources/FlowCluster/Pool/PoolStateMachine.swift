import Flow
import FlowWire
import Foundation
import Logging

/// A pool's protocol logic (docs/PROTOCOL.md §14), free of sockets and clocks: messages from
/// workers and clients go in, messages out and events come out. ``PoolIOLoop`` performs them.
///
/// Towards its workers the pool is a coordinator, and runs the coordinator's own
/// ``DispatchCore`` (credits, time limits §8.9, lost workers §8.6): one scheduler.
/// In front of it sits ``PoolFairShare``: clients' tasks wait there, one queue per run, and go to
/// the machine only as its workers have free slots, the run with the least running per share
/// first. Each client names its tasks with ids of its own; the pool maps them to ids of its own
/// towards the workers, so a client can only ever name, withdraw or hear of its own tasks.
struct PoolStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant
    typealias Core = DispatchCore<Ticket>

    /// Whose task a pool task is, under the client's own id and attempt.
    struct Ticket: Sendable {
        var client: Data
        /// The pool's id of it: a client's id sent again maps to a new one.
        var poolTaskID: UInt64
        var taskID: UInt64
        var attempt: UInt32
        var elementIndex: Int?
    }

    /// A task waiting in the fair-share queue, already under the pool's id.
    struct Pending: Sendable {
        var task: WireTask
        var ticket: Ticket
        /// Its size as SUBMIT carried it, counted against the client's queued bytes.
        var size: Int
    }

    /// What a peer's key lets it be (CURVE, §14.7); without CURVE every peer may be either.
    struct Roles: OptionSet, Sendable {
        let rawValue: UInt8
        static let worker = Roles(rawValue: 1)
        static let client = Roles(rawValue: 2)
        static let any: Roles = [.worker, .client]
    }

    /// A peer's CURVE key, as the pool's lists give it (§14.7): what identifies a client for the
    /// pool's caps, and the largest share its line grants (`share=N`), if it grants one.
    struct PeerKey: Sendable {
        var text: String
        var share: UInt32?
    }

    struct Configuration: Sendable {
        /// The name the pool gives in WELCOME (its host and endpoint).
        var name = "pool"
        /// How many tasks a client may have submitted and not answered (WELCOME's slot count).
        var clientCredit: UInt32 = 1_024
        /// The largest share a run is granted when its key's line gives none (`--max-share`, §14.5).
        var maxShare: UInt32 = 4
        /// Runs one client may have running at once (`--max-runs-per-client`); more are held.
        var maxRunsPerClient = 16
        /// Bytes of tasks one client may have waiting at the pool (`--max-queued-bytes`, §14.4).
        var maxQueuedBytes = 256 << 20
        /// Missed intervals before a client or worker is declared gone.
        var liveness = 3
        /// The machine's own settings (time-outs, attempts, grace).
        var machine = Core.Configuration()
    }

    /// What the shell must do.
    enum Action: Sendable {
        case send(to: Data, WireMessage)
        case report(ClusterEvent)
        /// A line for the pool's log that no ``ClusterEvent`` stands for (a cap applied).
        case log(Logger.Level, String)
    }

    /// The longest heartbeat interval the pool takes from a client's HELLO (§14.8): a client that
    /// announces more is heartbeaten, and declared gone, at this one.
    static let maxHeartbeatMilliseconds: UInt32 = 60_000

    /// A registered client: its run, liveness, and its tasks by its own id.
    struct Client: Sendable {
        var hello: WireHello
        var name: String
        var lastReceived: Instant
        var lastSent: Instant
        var heartbeatInterval: Duration
        /// The pool's id of each of the client's tasks that is not answered yet.
        var tasks: [UInt64: UInt64] = [:]
        var done = 0
        var since: Date
        /// Who the client is for the caps: its CURVE key, or without CURVE its HELLO's origin.
        var identity: String
        /// The share it was granted: HELLO's, at most its key's cap.
        var share: Int
        /// Whether it waits for another run of its identity to end (`--max-runs-per-client`).
        var held = false
        /// When it registered, for which held run goes first.
        var order: UInt64 = 0
        /// Bytes of its tasks waiting in the fair-share queue.
        var queuedBytes = 0
        /// The refusals logged already (credit, bytes): each once per client.
        var refusalsLogged: Set<SubmitRefusal> = []
    }

    let configuration: Configuration
    var core: Core
    var fair = PoolFairShare<Pending>()
    var clients: [Data: Client] = [:]
    var nextTaskID: UInt64 = 0
    /// The order of the next registration.
    var nextOrder: UInt64 = 0
    /// Results for each client collected in one turn, sent as one DONE.
    var outbox: [Data: [WirePoolResult]] = [:]
    /// The pool's budget (in ``core``) for each client's budget (§15.2 "Pools"), and the rates
    /// each client's RATE gave it so far.
    var budgets = PoolBudgets()

    init(configuration: Configuration) {
        self.configuration = configuration
        var machineConfiguration = configuration.machine
        // The engines are the clients, a round trip away: no wait for their next tasks.
        machineConfiguration.batchWindow = .zero
        machineConfiguration.liveness = configuration.liveness
        core = Core(configuration: machineConfiguration)
    }

    /// Reads or changes the client at `index` in place: `clients.values[index]` read as a value
    /// would copy the client, retaining each of its fields, once per task (perf: a tenth of the
    /// pool's time).
    @inline(__always)
    mutating func withClient<Result>(at index: Dictionary<Data, Client>.Index, _ body: (inout Client) -> Result) -> Result {
        body(&clients.values[index])
    }

    /// When the shell must call ``dispatch(now:)`` again even if nothing happens.
    var nextDeadline: Instant? { core.nextDeadline }

    // MARK: Messages

    /// A message from a peer, already decoded; `roles` is what its key allows.
    mutating func receive(_ message: WireMessage, from peer: Data, roles: Roles = .any, key: PeerKey? = nil, now: Instant) -> [Action] {
        if clients[peer] != nil { return receiveFromClient(message, from: peer, key: key, now: now) }
        if core.workers[peer] != nil { return receiveFromWorker(message, from: peer, now: now) }
        switch message {
        case .ready(let ready):
            guard roles.contains(.worker) else { return refuse(peer, command: message.command, key: key) }
            return receiveFromWorker(message, from: peer, now: now)
        case .hello(let hello):
            guard roles.contains(.client) else { return refuse(peer, command: message.command, key: key) }
            return register(hello, peer: peer, key: key, now: now)
        case .status:
            return [.send(to: peer, .statusReply(statusJSON()))]
        case .disconnect:
            return []
        default:
            // §8.1 and §14.3: a peer we do not know starts over.
            return [.send(to: peer, .disconnect(reason: "unknown peer: send READY (a worker) or HELLO (a client) first")),
                    .report(.unknownPeer(command: message.command.description))]
        }
    }

    /// The role refusal names the key (§14.7), so that the operator knows which line to move.
    private func refuse(_ peer: Data, command: WireCommand, key: PeerKey?) -> [Action] {
        let role = command == .ready ? "register as a worker" : "submit runs"
        let who = key.map { "key \($0.text) (\(Self.peerText(peer)))" } ?? Self.peerText(peer)
        return [.send(to: peer, .disconnect(reason: "this key may not \(role) on this pool")),
                .report(.roleRefused(peer: who, command: command.description))]
    }

    /// A FLOW02 message from a registered peer that could not be taken (malformed, §9.1): a sign
    /// of life all the same (§8.5), from a worker or a client.
    mutating func heard(from peer: Data, now: Instant) {
        core.heard(from: peer, now: now)
        clients[peer]?.lastReceived = now
    }

    private mutating func receiveFromWorker(_ message: WireMessage, from peer: Data, now: Instant) -> [Action] {
        switch message {
        case .hello, .submit, .withdraw:
            // Unexpected (§9.2), yet a sign of life (§8.5).
            core.heard(from: peer, now: now)
            return [.report(.unexpectedMessage(worker: core.workers[peer]?.name ?? "?", command: message.command.description))]
        case .status:
            return [.send(to: peer, .statusReply(statusJSON()))]
        case .progress(let entries):
            var actions: [Core.Action] = []
            let relayed = PoolBudgets.relay(entries, from: peer, in: core)
            core.receive(message, from: peer, now: now, into: &actions)
            return relayed.map { Action.send(to: $0.client, .progress($0.entries)) } + perform(actions)
        default:
            var actions: [Core.Action] = []
            core.receive(message, from: peer, now: now, into: &actions)
            return perform(actions)
        }
    }

    private mutating func receiveFromClient(_ message: WireMessage, from peer: Data, key: PeerKey?, now: Instant) -> [Action] {
        clients[peer]?.lastReceived = now
        switch message {
        case .submit(let tasks):
            return submit(tasks, from: peer)
        case .rate(let rates):
            budgets.apply(rates, from: peer, to: &core, now: now)
            return []
        case .withdraw(let ids):
            return withdraw(ids, from: peer)
        case .heartbeat:
            return []
        case .status:
            clients[peer]?.lastSent = now
            return [.send(to: peer, .statusReply(statusJSON()))]
        case .hello(let hello):
            // Registered again on the same connection: what it had here is over (as §8.1's
            // second READY), and it submits again what it still wants.
            return removeClient(peer, reason: "it said HELLO again") + register(hello, peer: peer, key: key, now: now)
        case .disconnect(let reason):
            return removeClient(peer, reason: reason.isEmpty ? "it said DISCONNECT" : "it said DISCONNECT: \(reason.escapingControlCharacters)")
        default:
            return [.report(.unexpectedMessage(worker: clients[peer]?.name ?? "?", command: message.command.description))]
        }
    }

    /// Cancels pool tasks in the machine: their outcome (cancelled) goes back now, and the ones on
    /// a worker that takes CANCEL are stopped there.
    mutating func stop(_ poolIDs: [UInt64]) -> [Action] {
        var byWorker: [Data: [UInt64]] = [:]
        for id in poolIDs {
            guard let peer = core.tasks[id]?.worker, let worker = core.workers[peer],
                  worker.features & WireReady.Feature.cancel != 0 else { continue }
            byWorker[peer, default: []].append(id)
        }
        var machineActions: [Core.Action] = []
        for id in poolIDs { machineActions += core.cancel(taskID: id) }
        let cancels = byWorker.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { Action.send(to: $0, .cancel(byWorker[$0]!.sorted())) }
        return cancels + perform(machineActions)
    }

    /// Ends a client's registration: its waiting tasks are dropped, its running ones stopped.
    mutating func removeClient(_ peer: Data, reason: String) -> [Action] {
        guard let client = clients[peer] else { return [] }
        let dropped = fair.close(peer)
        let running = client.tasks.values.filter { core.tasks[$0] != nil }.sorted()
        let actions = stop(running)
        clients[peer] = nil
        outbox[peer] = nil
        budgets.forget(peer, in: &core)
        return actions.filter { if case .send(let to, _) = $0 { to != peer } else { true } }
            + [.report(.clientLeft(name: client.name, run: client.hello.runID.escapingControlCharacters, reason: reason,
                                   dropped: dropped.count, stopped: running.count))]
            + (client.held ? [] : releaseHeldRun(of: client.identity))
    }

    /// A peer's key left both lists (SIGHUP): its registration ends, and it hears why.
    mutating func revoke(_ peer: Data, now: Instant) -> [Action] {
        if clients[peer] != nil {
            return removeClient(peer, reason: "its key is no longer authorised")
                + [.send(to: peer, .disconnect(reason: "this client's key is no longer authorised"))]
        }
        guard core.workers[peer] != nil else { return [] }
        let actions = core.remove(peer, reason: .revoked, now: now)
        return perform(actions) + [.send(to: peer, .disconnect(reason: "this worker's key is no longer authorised"))]
    }

    /// A send to a peer failed (`ZMQ_ROUTER_MANDATORY`): it is gone.
    mutating func sendFailed(to peer: Data, reason: String, now: Instant) -> [Action] {
        if clients[peer] != nil { return removeClient(peer, reason: "unreachable: \(reason)") }
        guard core.workers[peer] != nil else { return [] }
        let actions = core.sendFailed(to: peer, reason: reason, now: now)
        return perform(actions)
    }

    /// The peer as log lines name it.
    func peerName(_ peer: Data) -> String {
        clients[peer]?.name ?? core.workers[peer]?.name ?? Self.peerText(peer)
    }
}
