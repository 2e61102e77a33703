import Flow
import FlowWire
import Foundation
public import Logging

/// Something that happened in the cluster, for progress output, logs and the summary.
public enum ClusterEvent: Sendable, Equatable, CustomStringConvertible {
    /// Why a RESULT was discarded (§8.4).
    public enum DiscardReason: Sendable, Equatable {
        /// The task is finished, or the engine no longer wants it: a duplicate or a late answer.
        case notInFlight
        /// The task was given to another worker since.
        case runsElsewhere
        /// The result is for an older (or unknown) attempt; the task is at `current`.
        case otherAttempt(current: UInt32)
        /// The coordinator had failed that try: the worker left it unanswered past its time limit
        /// and the grace (§8.9).
        case answeredTooLate
    }

    case workerJoined(name: String, host: String, slots: Int, ops: Int)
    /// A worker said its labels (LABELS, §7.10), as `KEY=VALUE` pairs, sorted.
    case workerLabels(name: String, labels: String)
    /// `tasks` tasks of `op` placed on `labels` wait for a worker that has them (none that takes
    /// tasks does); they fail after `timeout` unless one comes. Said once per wait.
    case waitingForLabels(labels: String, op: String, tasks: Int, timeout: Duration)
    /// A serial op's task went to a worker (group elements are not reported one by one).
    case dispatched(op: String, worker: String)
    /// A worker died: it went silent, or a send to it failed.
    case workerLost(name: String, reason: String, requeued: Int)
    /// A worker ended its registration: DISCONNECT, or a second READY.
    case workerLeft(name: String, reason: String, requeued: Int)
    /// A task was running on a worker whose registration ended (lost, left, or registered again)
    /// for `ranFor`, and left no result there: it runs again elsewhere, or is given up on after
    /// too many such losses. `element` is its place in its group, `nil` for a serial op;
    /// `attempt` the op attempt it was (the loss uses none up).
    case taskLost(worker: String, op: String, element: Int?, attempt: Int, ranFor: Duration)
    /// A stopping worker gave a task back (`cancelled`); it runs on another worker.
    case taskReturned(worker: String, op: String)
    /// A worker left a try unanswered `waited` after it started, past its time limit `limit` and
    /// the grace (§8.9): the coordinator failed that try.
    case taskUnanswered(worker: String, op: String, element: Int?, limit: Duration, waited: Duration)
    /// A worker left `unanswered` tries unanswered past their time limits: it gets no more tasks,
    /// and `requeued` tasks in flight on it went to other workers.
    case workerQuarantined(name: String, unanswered: Int, requeued: Int)
    case discardedResult(worker: String, taskID: UInt64, attempt: UInt32, reason: DiscardReason)
    case unknownPeer(command: String)
    case unexpectedMessage(worker: String, command: String)
    case malformedMessage(peer: String, reason: String)
    /// A peer spoke another version of the protocol (§9.3): it was answered with a DISCONNECT in
    /// its own version naming both, and not registered. Reported at most once a minute per peer.
    case otherVersion(peer: String, version: String)
    /// A peer's CURVE handshake was refused: its key is not authorised, or it spoke plaintext to a
    /// CURVE coordinator. Reported once per address and key.
    case peerRefused(address: String, key: String?)
    /// A peer's handshake with a CURVE coordinator failed: it spoke plaintext, or it was given
    /// another coordinator's key. Reported once per peer address; `nil` when the peer's address
    /// was gone before it could be read (`HandshakeFailureLog`), reported at most once a minute.
    case handshakeFailed(address: String?)
    /// A client registered a run with the pool (HELLO, §14).
    case clientJoined(name: String, run: String, flow: String, origin: String, share: Int)
    /// A client's registration with the pool ended: `dropped` of its tasks were waiting and
    /// dropped, `stopped` were running and told to stop.
    case clientLeft(name: String, run: String, reason: String, dropped: Int, stopped: Int)
    /// A peer tried to register in a role its CURVE key does not allow (§14.7): a worker key
    /// sent HELLO, or a client key READY.
    case roleRefused(peer: String, command: String)
    /// The store answered a group's task "slow down" (503 SlowDown, 429, Retry-After): the group
    /// runs at most `concurrency` of its tasks at once, and starts at most `perSecond` a second,
    /// from now on (adaptive, issue 38).
    case throttled(step: String, concurrency: Int, maxConcurrent: Int, perSecond: Double?)
    /// A throttled group is back at its `maxConcurrent`, with no start rate of its own.
    case unthrottled(step: String, maxConcurrent: Int)
    /// The run was paused (`flow-coordinator pause`, or a run resumed as it was paused): no task
    /// starts until it is continued; running ones finish.
    case paused
    /// A paused run goes on (`flow-coordinator continue`).
    case continued

    /// The event as one line: every control character in it escaped, since most of its text
    /// (names, hosts, reasons, op names) came from peers (`String.escapingControlCharacters`).
    public var description: String { text.escapingControlCharacters }

    private var text: String {
        switch self {
        case .workerJoined(let name, let host, let slots, let ops):
            return "worker \(name) joined from \(host) (\(slots) slots, \(ops) ops)"
        case .workerLabels(let name, let labels):
            return "worker \(name) has labels \(labels.isEmpty ? "(none)" : labels)"
        case .waitingForLabels(let labels, let op, let tasks, let timeout):
            return "\(tasks) task(s) of \(op) wait for a worker with \(labels), which no connected worker has; the others go on, "
                + "and these fail after \(timeout.secondsText) (--worker-timeout, or the group's affinityTimeout) unless one joins"
        case .dispatched(let op, let worker):
            return "\(op) -> \(worker)"
        case .workerLost(let name, let reason, let requeued):
            return "worker \(name) lost (\(reason)); \(requeued) task(s) given to other workers"
        case .workerLeft(let name, let reason, let requeued):
            return "worker \(name) left (\(reason))" + (requeued > 0 ? "; \(requeued) task(s) given to other workers" : "")
        case .taskLost(let worker, let op, let element, _, let ranFor):
            let which = element.map { "\(op) (element \($0))" } ?? op
            return "\(which) had run on \(worker) for \(ranFor.shortText) when \(worker) went away"
        case .taskReturned(let worker, let op):
            return "worker \(worker) is stopping and gave back a task of \(op); it runs on another worker"
        case .taskUnanswered(let worker, let op, let element, let limit, let waited):
            let which = element.map { "\(op) (element \($0))" } ?? op
            return "\(which): no answer from worker \(worker) \(waited.shortText) after it started, past its time limit of "
                + "\(limit.shortText): that try failed"
        case .workerQuarantined(let name, let unanswered, let requeued):
            return "worker \(name) gets no more tasks: it left \(unanswered) tries unanswered past their time limits, "
                + "though it still heartbeats" + (requeued > 0 ? "; \(requeued) task(s) given to other workers" : "")
        case .discardedResult(let worker, let taskID, let attempt, let reason):
            let why: String
            switch reason {
            case .notInFlight: why = "the task is no longer in flight (finished, or no longer wanted)"
            case .runsElsewhere: why = "the task was given to another worker"
            case .otherAttempt(let current): why = "the task is at attempt \(current)"
            case .answeredTooLate: why = "it came after that try had failed at its time limit"
            }
            return "discarded a result for task \(taskID) attempt \(attempt) from \(worker): \(why)"
        case .unknownPeer(let command):
            return "\(command) from an unknown peer: told it to send READY"
        case .unexpectedMessage(let worker, let command):
            return "unexpected \(command) from worker \(worker): dropped"
        case .malformedMessage(let peer, let reason):
            return "dropped a malformed message from \(peer): \(reason)"
        case .otherVersion(let peer, let version):
            return "refused \(peer): \(MalformedTraffic.otherVersionReason(version)); run a flow-worker of the same release as this "
                + "flow-coordinator (told it so)"
        case .handshakeFailed(let address):
            let peer = address.map { "a peer at \($0)" } ?? "a peer whose address was gone before it could be read"
            return "refused \(peer): its handshake failed (a plaintext worker, or one given the wrong --coordinator-key)"
        case .clientJoined(let name, let run, let flow, let origin, let share):
            return "client \(name) joined: run \(run) of flow \(flow) from \(origin), share \(share)"
        case .clientLeft(let name, let run, let reason, let dropped, let stopped):
            return "client \(name) (run \(run)) left: \(reason); dropped \(dropped) waiting tasks, stopped \(stopped) running"
        case .roleRefused(let peer, let command):
            return "refused \(command) from \(peer): its key is not authorised for that role "
                + "(workers' keys go in --authorized-keys, clients' in --authorized-clients)"
        case .throttled(let step, let concurrency, let maxConcurrent, let perSecond):
            return "\(step): the store said slow down; throttled to \(concurrency) of \(maxConcurrent)"
                + (perSecond.map { String(format: ", %.0f starts a second", $0) } ?? "")
        case .unthrottled(let step, let maxConcurrent):
            return "\(step): back to \(maxConcurrent) at once"
        case .paused:
            return "paused: no task starts until the run is continued"
        case .continued:
            return "continued"
        case .peerRefused(let address, let key):
            guard let key else { return "refused a peer at \(address): it did not use CURVE; start workers with --curve-key and --coordinator-key" }
            return "refused a peer at \(address) with key \(key): not in the authorised keys (add it to --authorized-keys, then send SIGHUP)"
        }
    }

    /// Whether the event belongs in the flow's summary (not just in diagnostics): lost work.
    public var belongsInSummary: Bool {
        switch self {
        case .workerLost, .workerQuarantined, .throttled, .unthrottled: return true
        case .workerLeft(_, _, let requeued): return requeued > 0
        default: return false
        }
    }

    /// The level it is logged at: protocol noise a user need not see (§8.4 discards, routine
    /// dispatch) at debug.
    public var logLevel: Logger.Level {
        switch self {
        case .dispatched, .discardedResult, .taskReturned, .taskLost, .unknownPeer: return .debug
        case .malformedMessage, .otherVersion, .unexpectedMessage, .workerLost, .peerRefused, .handshakeFailed, .taskUnanswered, .workerQuarantined,
             .waitingForLabels:
            return .warning
        case .workerJoined, .workerLabels, .workerLeft, .clientJoined, .clientLeft: return .info
        case .roleRefused: return .warning
        case .throttled, .unthrottled: return .info
        // The run says so itself, when it is steered ("[run] paused from another terminal").
        case .paused, .continued: return .debug
        }
    }

    /// Data about the event as swift-log metadata (`worker.name`, `task.id`, `task.attempt`),
    /// control characters escaped as in ``description``.
    public var metadata: Logger.Metadata {
        rawMetadata.mapValues { .string("\($0)".escapingControlCharacters) }
    }

    private var rawMetadata: Logger.Metadata {
        switch self {
        case .workerJoined(let name, _, _, _), .workerLabels(let name, _), .workerLost(let name, _, _), .workerLeft(let name, _, _), .workerQuarantined(let name, _, _):
            return ["worker.name": "\(name)"]
        case .dispatched(let op, let worker):
            return ["worker.name": "\(worker)", "task.op": "\(op)"]
        case .taskReturned(let worker, let op), .taskLost(let worker, let op, _, _, _), .taskUnanswered(let worker, let op, _, _, _):
            return ["worker.name": "\(worker)", "task.op": "\(op)"]
        case .discardedResult(let worker, let taskID, let attempt, _):
            return ["worker.name": "\(worker)", "task.id": "\(taskID)", "task.attempt": "\(attempt)"]
        case .unexpectedMessage(let worker, _):
            return ["worker.name": "\(worker)"]
        case .malformedMessage(let peer, _):
            return ["peer": "\(peer)"]
        case .otherVersion(let peer, let version):
            return ["peer": "\(peer)", "peer.version": "\(version)"]
        case .peerRefused(let address, let key):
            return ["peer": "\(address)", "peer.key": "\(key ?? "none")"]
        case .handshakeFailed(let address):
            return ["peer": "\(address ?? "unknown")"]
        case .unknownPeer, .paused, .continued:
            return [:]
        case .waitingForLabels(let labels, let op, _, _):
            return ["task.op": "\(op)", "labels": "\(labels)"]
        case .throttled(let step, let concurrency, _, _):
            return ["group": "\(step)", "group.concurrency": "\(concurrency)"]
        case .unthrottled(let step, let maxConcurrent):
            return ["group": "\(step)", "group.concurrency": "\(maxConcurrent)"]
        case .clientJoined(let name, let run, _, _, _), .clientLeft(let name, let run, _, _, _):
            return ["client.name": "\(name)", "flow.run": "\(run)"]
        case .roleRefused(let peer, _):
            return ["peer": "\(peer)"]
        }
    }
}
