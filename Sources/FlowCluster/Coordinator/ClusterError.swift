public import Flow
import Foundation

/// A cluster problem: what went wrong and what to do about it.
public enum ClusterError: Error, CustomStringConvertible, Sendable, Equatable, FlowRetryAdvice {
    /// The coordinator could not bind its endpoint.
    case cannotBind(endpoint: String, reason: String)
    /// A worker could not connect.
    case cannotConnect(endpoint: String, reason: String)
    /// No connected worker offered an op within the worker time-out.
    case noWorkerOffers(op: String, waited: Duration, connectedWorkers: Int)
    /// Workers offer the op, but none that takes tasks has the labels its step's `on:` asks
    /// (`labels`, `KEY=VALUE` pairs), and none came within the worker time-out.
    case noWorkerHasLabels(op: String, labels: String, waited: Duration, workers: [String])
    /// Every worker that offered an op was lost (silent or unreachable: crashed, killed, cut
    /// off), and none came back within the worker time-out.
    case workersLost(op: String, lost: [String], lastReason: String, waited: Duration)
    /// `attempts` registrations ended while running one task: it is not tried again.
    case quarantined(op: String, attempts: Int, lastWorker: String, lastReason: String)
    /// A bucket value, parameter or element cannot be sent to a worker.
    case unsendableValue(String)
    /// Local workers could not be started.
    case cannotStartWorkers(String)
    /// The coordinator could not prepare a task (for example, read the file it ships).
    case preparationFailed(op: String, reason: String)
    /// A worker answered in a way the protocol does not allow.
    case protocolViolation(String)
    /// A worker left a try unanswered well past its time limit (§8.9): the coordinator failed it.
    case unanswered(limit: Duration, worker: String)
    /// The coordinator is not running (never started, or stopped).
    case notRunning
    /// A worker was configured so that no coordinator could use it.
    case invalidWorker(String)

    /// Whether the cluster itself failed (exit status 3), rather than one task (exit status 1).
    public var isClusterFailure: Bool {
        switch self {
        case .cannotBind, .cannotConnect, .noWorkerOffers, .noWorkerHasLabels, .workersLost, .cannotStartWorkers, .notRunning, .invalidWorker: return true
        case .quarantined, .unsendableValue, .preparationFailed, .protocolViolation, .unanswered: return false
        }
    }

    /// Whether `retry` may try the task again: not for a value that cannot be sent, a task that
    /// keeps losing workers, or a cluster without the op; yes for a worker's protocol slip, and for
    /// a try its worker left unanswered past its time limit (a time limit, as on the worker).
    public var isPermanent: Bool {
        switch self {
        case .protocolViolation, .unanswered: return false
        default: return true
        }
    }

    public var description: String {
        switch self {
        case .cannotBind(let endpoint, let reason):
            return "cannot bind \(endpoint): \(reason); choose another --bind endpoint or stop the process using it"
        case .cannotConnect(let endpoint, let reason):
            // Said by a worker (its --connect), a run on a pool and `status --pool` (their --pool) alike.
            return "cannot connect to \(endpoint): \(reason); check the endpoint"
        case .noWorkerOffers(let op, let waited, let count):
            return "no worker offers op '\(op)' (waited \(waited.secondsText), \(count) worker(s) connected); "
                + "start a flow-worker that registers '\(op)' (flow-worker --list-ops shows a worker's ops) or raise --worker-timeout"
        case .noWorkerHasLabels(let op, let labels, let waited, let workers):
            let names = workers.count <= 4 ? workers.joined(separator: ", ") : workers.prefix(3).joined(separator: ", ") + " and \(workers.count - 3) more"
            let flags = labels.split(separator: ",").map { "--label \($0.trimmingCharacters(in: .whitespaces))" }.joined(separator: " ")
            return "no worker has the labels \(labels) that the step of op '\(op)' asks with on: (waited \(waited.secondsText); "
                + "connected: \(workers.isEmpty ? "none" : names)); start a flow-worker with \(flags), check the step's on: "
                + "against flow-coordinator status, or raise --worker-timeout"
        case .workersLost(let op, let lost, let reason, let waited):
            let names = lost.count <= 4 ? lost.joined(separator: ", ") : lost.prefix(3).joined(separator: ", ") + " and \(lost.count - 3) more"
            return "no worker offers op '\(op)' any more: the \(lost.count == 1 ? "worker" : "\(lost.count) workers") that offered it "
                + "\(lost.count == 1 ? "was" : "were") lost (\(names); last: \(reason)) and none came back in \(waited.secondsText); "
                + "they may have crashed on a task: check their logs, then resume the run"
        case .quarantined(let op, let attempts, let worker, let reason):
            return "task of op '\(op)' was given up: \(attempts) worker(s) were lost running it (last: \(worker), \(reason)); "
                + "it may be crashing its workers: check their logs"
        case .unsendableValue(let text):
            return text
        case .cannotStartWorkers(let reason):
            return "cannot start local workers: \(reason)"
        case .preparationFailed(let op, let reason):
            return "\(op): \(reason)"
        case .protocolViolation(let text):
            return "protocol violation: \(text)"
        case .unanswered(let limit, let worker):
            return "\(FlowTimeLimitExceeded(limit: limit)) (no answer from worker \(worker))"
        case .notRunning:
            return "the coordinator is not running: call start() before running a flow on it"
        case .invalidWorker(let text):
            return text
        }
    }
}
