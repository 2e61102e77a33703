import Foundation
import FlowWire

/// The coordinator's protocol logic, free of sockets and clocks: events go in (a task submitted, a
/// message from a worker, time passing), actions come out (messages to send, tasks completed or
/// failed, events to report). ``FlowCoordinator`` performs the actions.
///
/// Rules it keeps (docs/PROTOCOL.md): a task goes only to a worker that said READY, offers its op
/// and has a free slot; a RESULT is accepted once, from the worker and attempt the task was given
/// to; a worker silent for `liveness` heartbeat intervals is dead and its tasks go to others; a
/// task no connected worker offers fails after the worker time-out.
struct CoordinatorStateMachine: Sendable {
    struct Configuration: Sendable {
        /// Missed intervals before a worker is declared dead.
        var liveness: Int = 3
        /// Seconds a task waits for a worker that offers its op.
        var workerTimeout: Double = 30
        /// How many workers may die running the same task before it is quarantined.
        var maxAttempts: UInt32 = 3
    }

    /// What the shell must do.
    enum Action: Sendable, Equatable {
        case send(to: Data, WireMessage)
        case complete(taskID: UInt64, result: WireResult, worker: String)
        case fail(taskID: UInt64, ClusterError)
        case report(ClusterEvent)
    }

    struct Worker: Sendable {
        var name: String
        var ops: Set<String>
        var slots: Int
        var inFlight: Set<UInt64> = []
        var lastReceived: Double
        var lastSent: Double
        /// The worker's heartbeat interval (READY), which governs this connection.
        var heartbeatInterval: Double
        var free: Int { slots - inFlight.count }
    }

    struct Pending: Sendable {
        var task: WireTask
        var waitingForOfferSince: Double?
    }

    struct Assignment: Sendable {
        var worker: Data
        var task: WireTask
    }

    let configuration: Configuration
    var workers: [Data: Worker] = [:]
    var pending: [Pending] = []
    var inFlight: [UInt64: Assignment] = [:]
    var cancelledInFlight: Set<UInt64> = []
    var rotation = 0

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// How many workers are connected.
    var workerCount: Int { workers.count }

    /// How many tasks are running on workers.
    var runningCount: Int { inFlight.count }

    // MARK: Events

    /// A task to run: queued, then sent as soon as a worker can take it.
    mutating func submit(_ task: WireTask, now: Double) -> [Action] {
        pending.append(Pending(task: task))
        return dispatch(now: now)
    }

    /// The engine no longer wants a task's result.
    mutating func cancel(taskID: UInt64) -> [Action] {
        if let index = pending.firstIndex(where: { $0.task.taskID == taskID }) {
            pending.remove(at: index)
        } else if inFlight[taskID] != nil {
            // Its worker's slot stays taken until the RESULT comes; the result is then dropped.
            cancelledInFlight.insert(taskID)
        }
        return []
    }

    /// A message from a worker, already decoded.
    mutating func receive(_ message: WireMessage, from peer: Data, now: Double) -> [Action] {
        guard var worker = workers[peer] else {
            switch message {
            case .ready(let ready):
                return register(ready, peer: peer, now: now)
            case .disconnect:
                return []
            default:
                // RFC 7 style: tell a peer we do not know to start over with READY.
                return [.send(to: peer, .disconnect(reason: "unknown worker: send READY first")),
                        .report(.unknownPeer(command: message.command.description))]
            }
        }
        worker.lastReceived = now
        workers[peer] = worker
        switch message {
        case .ready(let ready):
            // A worker that reconnected on the same socket re-registers; its running tasks are lost.
            var actions = remove(peer, reason: .reregistered, now: now)
            actions += register(ready, peer: peer, now: now)
            return actions
        case .result(let results):
            var actions: [Action] = []
            for result in results { actions += accept(result, from: peer, workerName: worker.name) }
            return actions + dispatch(now: now)
        case .heartbeat:
            return []
        case .disconnect(let reason):
            return remove(peer, reason: .left(reason), now: now) + dispatch(now: now)
        case .task:
            return [.report(.unexpectedMessage(worker: worker.name, command: "TASK"))]
        }
    }

    /// Time passed: heartbeats out, dead workers out, tasks nobody offers failed.
    mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        for (peer, worker) in workers where now - worker.lastReceived > worker.heartbeatInterval * Double(configuration.liveness) {
            actions += remove(peer, reason: .lost(silentFor: now - worker.lastReceived), now: now)
        }
        for (peer, worker) in workers where now - worker.lastSent >= worker.heartbeatInterval {
            workers[peer]?.lastSent = now
            actions.append(.send(to: peer, .heartbeat))
        }
        actions += failUnoffered(now: now)
        return actions + dispatch(now: now)
    }

    /// Says goodbye to every worker (the coordinator is stopping).
    mutating func shutdown(reason: String) -> [Action] {
        let peers = workers.keys.sorted { $0.lexicographicallyPrecedes($1) }
        workers = [:]
        return peers.map { .send(to: $0, .disconnect(reason: reason)) }
    }
}
