import Foundation

/// A cluster problem: what went wrong and what to do about it.
public enum ClusterError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The coordinator could not bind its endpoint.
    case cannotBind(endpoint: String, reason: String)
    /// A worker could not connect.
    case cannotConnect(endpoint: String, reason: String)
    /// No connected worker offered an op within the worker time-out.
    case noWorkerOffers(op: String, waited: Double, connectedWorkers: Int)
    /// A task was running on `attempts` workers that all died: it is not tried again.
    case quarantined(op: String, attempts: Int, lastWorker: String)
    /// A bucket value cannot be sent to a worker.
    case unsendableValue(String)
    /// Local workers could not be started.
    case cannotStartWorkers(String)
    /// The coordinator could not prepare a task (for example, read the file it ships).
    case preparationFailed(op: String, reason: String)

    /// Whether the cluster itself failed (exit status 3), rather than one task (exit status 1).
    public var isClusterFailure: Bool {
        switch self {
        case .cannotBind, .cannotConnect, .noWorkerOffers, .cannotStartWorkers: return true
        case .quarantined, .unsendableValue, .preparationFailed: return false
        }
    }

    public var description: String {
        switch self {
        case .cannotBind(let endpoint, let reason):
            return "cannot bind \(endpoint): \(reason); choose another --bind endpoint or stop the process using it"
        case .cannotConnect(let endpoint, let reason):
            return "cannot connect to \(endpoint): \(reason); check the --connect endpoint"
        case .noWorkerOffers(let op, let waited, let count):
            return "no worker offers op '\(op)' (waited \(String(format: "%.1f", waited)) s, \(count) worker(s) connected); "
                + "start a flow-worker that registers '\(op)' (flow-worker --list-ops shows a worker's ops) or raise --worker-timeout"
        case .quarantined(let op, let attempts, let worker):
            return "task of op '\(op)' was quarantined: \(attempts) worker(s) died running it (last: \(worker))"
        case .unsendableValue(let text):
            return text
        case .cannotStartWorkers(let reason):
            return "cannot start local workers: \(reason)"
        case .preparationFailed(let op, let reason):
            return "\(op): \(reason)"
        }
    }
}

/// Something that happened in the cluster, for progress output and the summary.
public enum ClusterEvent: Sendable, Equatable, CustomStringConvertible {
    case workerJoined(name: String, host: String, slots: Int, ops: Int)
    /// A serial op's task went to a worker (group elements are not reported one by one).
    case dispatched(op: String, worker: String)
    case workerLost(name: String, silentFor: Double, requeued: Int)
    case workerLeft(name: String, reason: String, requeued: Int)
    case staleResult(worker: String, taskID: UInt64)
    case unknownPeer(command: String)
    case unexpectedMessage(worker: String, command: String)
    case malformedMessage(peer: String, reason: String)

    public var description: String {
        switch self {
        case .workerJoined(let name, let host, let slots, let ops):
            return "worker \(name) joined from \(host) (\(slots) slots, \(ops) ops)"
        case .dispatched(let op, let worker):
            return "\(op) -> \(worker)"
        case .workerLost(let name, let silence, let requeued):
            return "worker \(name) lost: no message for \(String(format: "%.1f", silence)) s; \(requeued) task(s) given to other workers"
        case .workerLeft(let name, let reason, let requeued):
            return "worker \(name) left (\(reason))" + (requeued > 0 ? "; \(requeued) task(s) given to other workers" : "")
        case .staleResult(let worker, let taskID):
            return "discarded a late result for task \(taskID) from \(worker): the task was already given to another worker"
        case .unknownPeer(let command):
            return "\(command) from an unknown peer: told it to send READY"
        case .unexpectedMessage(let worker, let command):
            return "unexpected \(command) from worker \(worker): dropped"
        case .malformedMessage(let peer, let reason):
            return "dropped a malformed message from \(peer): \(reason)"
        }
    }

    /// Whether the event belongs in the flow's summary (not just in diagnostics).
    public var belongsInSummary: Bool {
        switch self {
        case .workerLost, .staleResult: return true
        case .workerLeft(_, _, let requeued): return requeued > 0
        default: return false
        }
    }
}
