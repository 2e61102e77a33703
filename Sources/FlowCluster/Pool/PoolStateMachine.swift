import Flow
import FlowWire
import Foundation

/// A pool's protocol logic (docs/PROTOCOL.md §14), free of sockets and clocks: messages from
/// workers and clients go in, messages out and events come out. ``PoolIOLoop`` performs them.
///
/// Towards its workers the pool is a coordinator, and runs the coordinator's own
/// ``CoordinatorStateMachine`` (credits, time limits §8.9, lost workers §8.6): one scheduler.
/// In front of it sits ``PoolFairShare``: clients' tasks wait there, one queue per run, and go to
/// the machine only as its workers have free slots, the run with the least running per share
/// first. Each client names its tasks with ids of its own; the pool maps them to ids of its own
/// towards the workers, so a client can only ever name, withdraw or hear of its own tasks.
struct PoolStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant
    typealias Machine = CoordinatorStateMachine<Ticket>

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
    }

    /// What a peer's key lets it be (CURVE, §14.7); without CURVE every peer may be either.
    struct Roles: OptionSet, Sendable {
        let rawValue: UInt8
        static let worker = Roles(rawValue: 1)
        static let client = Roles(rawValue: 2)
        static let any: Roles = [.worker, .client]
    }

    struct Configuration: Sendable {
        /// The name the pool gives in WELCOME (its host and endpoint).
        var name = "pool"
        /// How many tasks a client may have submitted and not answered (WELCOME's slot count).
        var clientCredit: UInt32 = 1_024
        /// Missed intervals before a client or worker is declared gone.
        var liveness = 3
        /// The machine's own settings (time-outs, attempts, grace).
        var machine = Machine.Configuration()
    }

    /// What the shell must do.
    enum Action: Sendable {
        case send(to: Data, WireMessage)
        case report(ClusterEvent)
    }

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
    }

    let configuration: Configuration
    var machine: Machine
    var fair = PoolFairShare<Pending>()
    var clients: [Data: Client] = [:]
    /// Worker hosts (READY), for STATUS; the machine keeps the rest.
    var workerHosts: [Data: String] = [:]
    private var nextTaskID: UInt64 = 0
    /// Results for each client collected in one turn, sent as one DONE.
    var outbox: [Data: [WirePoolResult]] = [:]
    /// The ops every worker offers and the ops some worker offers, kept while the workers stay
    /// the same: dispatch asks them for each task it takes from the fair-share queue.
    var offers = (workers: Set<Data>(), everyWorker: Set<String>(), someWorker: Set<String>())
    /// The pool's budget (in ``machine``) for each client's budget (§15.2 "Pools"), and the rates
    /// each client's RATE gave it so far.
    var budgets = PoolBudgets()

    init(configuration: Configuration) {
        self.configuration = configuration
        var machineConfiguration = configuration.machine
        machineConfiguration.forwardsResults = true
        // The engines are the clients, a round trip away: no wait for their next tasks.
        machineConfiguration.batchWindow = .zero
        machineConfiguration.liveness = configuration.liveness
        machine = Machine(configuration: machineConfiguration)
    }

    /// When the shell must call ``dispatch(now:)`` again even if nothing happens.
    var nextDeadline: Instant? { machine.nextDeadline }

    // MARK: Messages

    /// A message from a peer, already decoded; `roles` is what its key allows.
    mutating func receive(_ message: WireMessage, from peer: Data, roles: Roles = .any, now: Instant) -> [Action] {
        if clients[peer] != nil { return receiveFromClient(message, from: peer, now: now) }
        if machine.workers[peer] != nil { return receiveFromWorker(message, from: peer, now: now) }
        switch message {
        case .ready(let ready):
            guard roles.contains(.worker) else { return refuse(peer, command: message.command) }
            workerHosts[peer] = ready.hostname.escapingControlCharacters
            return receiveFromWorker(message, from: peer, now: now)
        case .hello(let hello):
            guard roles.contains(.client) else { return refuse(peer, command: message.command) }
            return register(hello, peer: peer, now: now)
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

    private func refuse(_ peer: Data, command: WireCommand) -> [Action] {
        let role = command == .ready ? "register as a worker" : "submit runs"
        return [.send(to: peer, .disconnect(reason: "this key may not \(role) on this pool")),
                .report(.roleRefused(peer: Self.peerText(peer), command: command.description))]
    }

    private mutating func receiveFromWorker(_ message: WireMessage, from peer: Data, now: Instant) -> [Action] {
        switch message {
        case .hello, .submit, .withdraw:
            return [.report(.unexpectedMessage(worker: machine.workers[peer]?.name ?? "?", command: message.command.description))]
        case .status:
            return [.send(to: peer, .statusReply(statusJSON()))]
        case .progress(let entries):
            var actions: [Machine.Action] = []
            let relayed = PoolBudgets.relay(entries, from: peer, in: machine)
            machine.receive(message, from: peer, now: now, into: &actions)
            return relayed.map { Action.send(to: $0.client, .progress($0.entries)) } + perform(actions)
        default:
            var actions: [Machine.Action] = []
            machine.receive(message, from: peer, now: now, into: &actions)
            if machine.workers[peer] == nil { workerHosts[peer] = nil }
            return perform(actions)
        }
    }

    private mutating func register(_ hello: WireHello, peer: Data, now: Instant) -> [Action] {
        let name = hello.clientName.escapingControlCharacters
        clients[peer] = Client(hello: hello, name: name, lastReceived: now, lastSent: now,
                               heartbeatInterval: .milliseconds(Int64(max(1, hello.heartbeatIntervalMilliseconds))), since: Date())
        fair.open(peer, share: Int(hello.share))
        let welcome = WireWelcome(poolName: configuration.name, features: WireWelcome.Feature.budgets | WireWelcome.Feature.checkpoints,
                                  slotCount: configuration.clientCredit,
                                  heartbeatIntervalMilliseconds: hello.heartbeatIntervalMilliseconds)
        return [.send(to: peer, .welcome(welcome)),
                .report(.clientJoined(name: name, run: hello.runID.escapingControlCharacters, flow: hello.flowName.escapingControlCharacters,
                                      origin: hello.origin.escapingControlCharacters, share: Int(hello.share)))]
    }

    private mutating func receiveFromClient(_ message: WireMessage, from peer: Data, now: Instant) -> [Action] {
        clients[peer]?.lastReceived = now
        switch message {
        case .submit(let tasks):
            return submit(tasks, from: peer)
        case .rate(let rates):
            budgets.apply(rates, from: peer, to: &machine, now: now)
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
            return removeClient(peer, reason: "it said HELLO again") + register(hello, peer: peer, now: now)
        case .disconnect(let reason):
            return removeClient(peer, reason: reason.isEmpty ? "it said DISCONNECT" : "it said DISCONNECT: \(reason.escapingControlCharacters)")
        default:
            return [.report(.unexpectedMessage(worker: clients[peer]?.name ?? "?", command: message.command.description))]
        }
    }

    /// A client's tasks wait for a slot under ids of the pool's own. A task sent again after the
    /// pool restarted (attempt above 1) ran, or may have run, before: its op sees one more try.
    private mutating func submit(_ tasks: [WireTask], from peer: Data) -> [Action] {
        var actions: [Action] = []
        for var task in tasks {
            nextTaskID += 1
            let ticket = Ticket(client: peer, poolTaskID: nextTaskID, taskID: task.taskID, attempt: task.attempt,
                                elementIndex: task.isGroupElement ? task.elementIndex : nil)
            if let old = clients[peer]?.tasks[task.taskID] {
                // The same id again (a client that resent it): the older dispatch is not wanted.
                if fair.remove(from: peer, where: { $0.task.taskID == old }).isEmpty, machine.tasks[old] != nil {
                    clients[peer]?.tasks[task.taskID] = nil
                    actions += stop([old])
                }
            }
            clients[peer]?.tasks[task.taskID] = nextTaskID
            if task.attempt > 1 { task.operationAttempt = max(1, task.operationAttempt) + task.attempt - 1 }
            task.taskID = nextTaskID
            task.attempt = 1
            // A budget id is the client's own (§15): the pool's own budget stands for it.
            task.budget = task.budget.map { UInt64(budgets.id(for: $0, of: peer, name: clients[peer]?.name ?? "?", in: &machine)) }
            fair.append(Pending(task: task, ticket: ticket), to: peer)
        }
        return actions
    }

    /// WITHDRAW (§14.4): a waiting task is given back (RETURNED), one at a worker is answered
    /// `cancelled` now and stopped there (CANCEL, to a worker that takes it). Ids the client does
    /// not hold are ignored: no client can name another's task.
    private mutating func withdraw(_ ids: [UInt64], from peer: Data) -> [Action] {
        guard let client = clients[peer] else { return [] }
        var poolIDs: [UInt64: UInt64] = [:]
        for id in ids { if let poolID = client.tasks[id] { poolIDs[poolID] = id } }
        guard !poolIDs.isEmpty else { return [] }
        var actions: [Action] = []
        let returned = fair.remove(from: peer) { poolIDs[$0.task.taskID] != nil }
        if !returned.isEmpty {
            for pending in returned { clients[peer]?.tasks[pending.ticket.taskID] = nil }
            actions.append(.send(to: peer, .returned(returned.map { WireTaskReference(taskID: $0.ticket.taskID, attempt: $0.ticket.attempt) })))
        }
        let inMachine = poolIDs.keys.filter { machine.tasks[$0] != nil }.sorted()
        return actions + stop(inMachine)
    }

    /// Cancels pool tasks in the machine: their outcome (cancelled) goes back now, and the ones on
    /// a worker that takes CANCEL are stopped there.
    mutating func stop(_ poolIDs: [UInt64]) -> [Action] {
        var byWorker: [Data: [UInt64]] = [:]
        for id in poolIDs {
            guard let peer = machine.tasks[id]?.worker, let worker = machine.workers[peer],
                  worker.features & WireReady.Feature.cancel != 0 else { continue }
            byWorker[peer, default: []].append(id)
        }
        var machineActions: [Machine.Action] = []
        for id in poolIDs { machineActions += machine.cancel(taskID: id) }
        let cancels = byWorker.keys.sorted { $0.lexicographicallyPrecedes($1) }.map { Action.send(to: $0, .cancel(byWorker[$0]!.sorted())) }
        return cancels + perform(machineActions)
    }

    /// Ends a client's registration: its waiting tasks are dropped, its running ones stopped.
    mutating func removeClient(_ peer: Data, reason: String) -> [Action] {
        guard let client = clients[peer] else { return [] }
        let dropped = fair.close(peer)
        let running = client.tasks.values.filter { machine.tasks[$0] != nil }.sorted()
        let actions = stop(running)
        clients[peer] = nil
        outbox[peer] = nil
        budgets.forget(peer, in: &machine)
        return actions.filter { if case .send(let to, _) = $0 { to != peer } else { true } }
            + [.report(.clientLeft(name: client.name, run: client.hello.runID.escapingControlCharacters, reason: reason,
                                   dropped: dropped.count, stopped: running.count))]
    }

    /// A peer's key left both lists (SIGHUP): its registration ends, and it hears why.
    mutating func revoke(_ peer: Data, now: Instant) -> [Action] {
        if clients[peer] != nil {
            return removeClient(peer, reason: "its key is no longer authorised")
                + [.send(to: peer, .disconnect(reason: "this client's key is no longer authorised"))]
        }
        guard machine.workers[peer] != nil else { return [] }
        let actions = machine.remove(peer, reason: .revoked, now: now)
        workerHosts[peer] = nil
        return perform(actions) + [.send(to: peer, .disconnect(reason: "this worker's key is no longer authorised"))]
    }

    /// A send to a peer failed (`ZMQ_ROUTER_MANDATORY`): it is gone.
    mutating func sendFailed(to peer: Data, reason: String, now: Instant) -> [Action] {
        if clients[peer] != nil { return removeClient(peer, reason: "unreachable: \(reason)") }
        guard machine.workers[peer] != nil else { return [] }
        let actions = machine.sendFailed(to: peer, reason: reason, now: now)
        workerHosts[peer] = nil
        return perform(actions)
    }

    /// The peer as log lines name it.
    func peerName(_ peer: Data) -> String {
        clients[peer]?.name ?? machine.workers[peer]?.name ?? Self.peerText(peer)
    }
}
