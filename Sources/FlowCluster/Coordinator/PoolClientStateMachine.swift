import Flow
import FlowWire
import Foundation
import Logging

/// The client half of the pool protocol (docs/PROTOCOL.md §14), free of sockets and clocks: what a
/// run's coordinator does with the pool's WELCOME, DONE, DISCONNECT and silence. ``PoolLink`` is
/// its I/O shell (the DEALER socket, its CURVE monitor).
///
/// To the run's ``DispatchCore`` the pool is one worker that offers every op
/// (``DispatchCore/registerPool(_:peer:now:)``): WELCOME registers it, DONE's results
/// are accepted with the name of the worker that ran each, DISCONNECT and silence end its
/// registration as a worker's end (its tasks wait, attempt + 1). This machine decides when to say
/// HELLO again on a new socket: at once after a registered pool's DISCONNECT or silence; after the
/// liveness window when no WELCOME came (nothing there yet, or this run refused).
struct PoolClientStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What the shell must do besides the run machine's actions.
    enum Action: Equatable, Sendable {
        /// Close the socket and say HELLO again on a new one; then call ``saidHello(now:)``.
        case reconnect
        /// A line for the run's log.
        case log(Logger.Level, String)
        /// The pool's refusal of this run, for the run's last words (`nil`: welcomed).
        case refusal(String?)
        /// The pool's workers, as the STATUS-REPLY asked for `each: worker` listed them.
        case workers(CoordinatorMailbox.PoolWorkers)
    }

    /// The routing id under which the run machine knows the pool.
    static let peer = Data("pool".utf8)

    /// The pool's endpoint, for messages.
    let endpoint: String
    /// Whether the pool accepted this run on the current socket.
    private(set) var welcomed = false
    /// The last DISCONNECT reason the pool gave, for the error when it never welcomes the run.
    private(set) var refusal: String?
    private var helloSentAt: Instant
    /// Whether the run asked for the pool's workers (`each: worker`): each WELCOME asks again.
    private(set) var wantsWorkers = false

    /// - Parameter now: when the first HELLO went.
    init(endpoint: String, now: Instant) {
        self.endpoint = endpoint
        helloSentAt = now
    }

    /// A HELLO went on a new socket: the pool has not accepted the run on it yet.
    mutating func saidHello(now: Instant) {
        welcomed = false
        helloSentAt = now
    }

    /// A message from the pool: its effect on the run machine is appended to `actions`.
    mutating func receive<Waiter>(_ message: WireMessage, into machine: inout DispatchCore<Waiter>, now: Instant,
                                  actions: inout [DispatchCore<Waiter>.Action]) -> [Action] {
        let peer = Self.peer
        switch message {
        case .welcome(let welcome):
            return welcomed(welcome, into: &machine, now: now, actions: &actions)
        case .done(let results):
            guard machine.workers[peer] != nil else { return [] }
            machine.heard(from: peer, now: now)
            for entry in results { machine.accept(entry.result, from: peer, now: now, ranBy: entry.worker, into: &actions) }
        case .returned, .heartbeat, .progress, .checkpoint:
            // PROGRESS: relayed by a pool that holds this run's budgets (§15.2 "Pools");
            // CHECKPOINT: by one that relays checkpoints (§7.9).
            guard machine.workers[peer] != nil else { return [] }
            machine.receive(message, from: peer, now: now, into: &actions)
        case .statusReply(let json):
            // Asked for by `each: worker` (§14.6); the pool's own words either way: a sign of
            // life (§8.5).
            machine.heard(from: peer, now: now)
            guard wantsWorkers, let pool = machine.workers[peer], let status = try? PoolStatus(json: json) else { return [] }
            // The pool places a task on one of its workers only with WELCOME's bit 3 (§14.4).
            guard pool.takesPlacement else { return [.workers(.placesNoTasks)] }
            // By name, as a run lists its own workers: `each: worker` joins their results in that order.
            return [.workers(.listed(status.workers.map(Self.connected).sorted { $0.name < $1.name }))]
        case .disconnect(let reason):
            return disconnected(reason, into: &machine, now: now, actions: &actions)
        default:
            machine.heard(from: peer, now: now)
            actions.append(.report(.unexpectedMessage(worker: "pool", command: message.command.description)))
        }
        return []
    }

    /// The run wants the pool's workers (`each: worker`): STATUS goes now to a pool that
    /// welcomed the run, else after its WELCOME.
    mutating func askWorkers<Waiter>(actions: inout [DispatchCore<Waiter>.Action]) {
        wantsWorkers = true
        if welcomed { actions.append(.send(to: Self.peer, .status)) }
    }

    /// A worker of a STATUS-REPLY as the run shows its own: its labels are the pool's to know
    /// (it places the task), so they count as known.
    static func connected(_ worker: PoolStatus.Worker) -> FlowCoordinator.ConnectedWorker {
        FlowCoordinator.ConnectedWorker(name: worker.name, host: worker.host, slots: worker.slots, labels: worker.labels ?? [:])
    }

    /// A FLOW02 message from the pool that could not be decoded: malformed, yet a sign of life
    /// (§8.5), as a worker's is.
    func heardMalformed<Waiter>(into machine: inout DispatchCore<Waiter>, now: Instant) {
        machine.heard(from: Self.peer, now: now)
    }

    /// Results the shell made itself (a task too large to submit), fed in as the pool's answer.
    func refuse<Waiter>(_ results: [WireResult], into machine: inout DispatchCore<Waiter>, now: Instant,
                        actions: inout [DispatchCore<Waiter>.Action]) {
        guard machine.workers[Self.peer] != nil else { return }
        for result in results { machine.accept(result, from: Self.peer, now: now, ranBy: nil, into: &actions) }
    }

    /// A CURVE handshake the pool's ZAP handler refused (its monitor's event, with its status):
    /// the key is in none of its lists.
    mutating func refusedHandshake(status: UInt32, key: String?) -> [Action] {
        let key = key.map { " (\($0))" } ?? ""
        return noteRefusal("its CURVE key\(key) is not in the pool's --authorized-clients (status \(status)): add it there and "
            + "send the pool SIGHUP, or run with another --curve-key")
    }

    /// Time passed: once the run machine has declared the pool dead (silence), or no WELCOME came
    /// within `window`, HELLO again on a new socket.
    func tick<Waiter>(_ machine: DispatchCore<Waiter>, window: Duration, now: Instant) -> [Action] {
        if welcomed, machine.workers[Self.peer] == nil {
            return [.log(.info, "the pool at \(endpoint) went silent; saying HELLO again"), .reconnect]
        }
        if !welcomed, now - helloSentAt >= window { return [.reconnect] }
        return []
    }

    // MARK: Messages

    private mutating func welcomed<Waiter>(_ welcome: WireWelcome, into machine: inout DispatchCore<Waiter>, now: Instant,
                                           actions: inout [DispatchCore<Waiter>.Action]) -> [Action] {
        var out: [Action] = []
        // A second WELCOME on one socket registers the pool afresh: what ran there is lost.
        if machine.workers[Self.peer] != nil { actions += machine.remove(Self.peer, reason: .reregistered, now: now) }
        if !welcomed, welcome.features & WireWelcome.Feature.budgets == 0 {
            out.append(.log(.warning, "the pool at \(endpoint) predates group budgets: a limit's bytesPerSecond, and requests "
                + "beyond op starts, are not enforced on its workers"))
        }
        if welcome.features & WireWelcome.Feature.held != 0 { out.append(.log(.warning, Self.heldText(endpoint: endpoint))) }
        welcomed = true
        refusal = nil
        out.append(.refusal(nil))
        actions += machine.registerPool(welcome, peer: Self.peer, now: now)
        if wantsWorkers { actions.append(.send(to: Self.peer, .status)) }
        return out
    }

    private mutating func disconnected<Waiter>(_ reason: String, into machine: inout DispatchCore<Waiter>, now: Instant,
                                               actions: inout [DispatchCore<Waiter>.Action]) -> [Action] {
        var out: [Action] = []
        // Refused (a key for another role, a key taken off the list, not a pool): said once, so
        // the user learns why no pool answers.
        if !welcomed || Self.isRefusal(reason) { out += noteRefusal(reason) }
        if machine.workers[Self.peer] != nil { actions += machine.remove(Self.peer, reason: .left(reason), now: now) }
        // Registered until now (the pool restarted, or stops): HELLO again at once. Refused (no
        // pool there, or not for this key): again after the liveness window.
        guard welcomed else { return out }
        out.append(.log(.info, "the pool at \(endpoint) said DISCONNECT (\(reason.escapingControlCharacters)); saying HELLO again"))
        out.append(.reconnect)
        return out
    }

    /// The pool refuses this run: logged once per reason, and kept for the run's last words.
    private mutating func noteRefusal(_ reason: String) -> [Action] {
        let text = reason.escapingControlCharacters
        var out: [Action] = []
        if refusal != reason { out.append(.log(.warning, "the pool at \(endpoint) refused this run: \(text)")) }
        refusal = reason
        out.append(.refusal(text))
        return out
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
}
