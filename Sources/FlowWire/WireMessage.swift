/// One protocol message, as the frames after any routing id carry it (docs/PROTOCOL.md).
public enum WireMessage: Sendable, Hashable {
    /// A worker announces itself. Worker to coordinator; the first message a worker sends.
    case ready(WireReady)
    /// One or more tasks to run. Coordinator to worker; never an empty batch.
    case task([WireTask])
    /// One or more finished tasks. Worker to coordinator; never an empty batch.
    case result([WireResult])
    /// A sign of life. Both directions.
    case heartbeat
    /// The sender is leaving, or does not know the receiver. Both directions.
    case disconnect(reason: String)
    /// Queued tasks the coordinator wants back if they have not started. Coordinator to worker, to
    /// a worker that announced ``WireReady/Feature/queue``; never an empty list.
    case recall([UInt64])
    /// Queued tasks the worker gives back unrun (after a RECALL, or because a task of its failed).
    /// Worker to coordinator; never an empty list.
    case returned([WireTaskReference])

    /// The message's command byte.
    public var command: WireCommand {
        switch self {
        case .ready: return .ready
        case .task: return .task
        case .result: return .result
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
        case .recall: return .recall
        case .returned: return .returned
        }
    }
}

extension WireMessage: CustomStringConvertible {
    /// A one-line summary for logs: the command and its size, never the payload.
    public var description: String {
        switch self {
        case .ready(let ready):
            return "READY \(ready.workerName) slots=\(ready.slotCount) ops=\(ready.ops.count)"
        case .task(let tasks): return "TASK ×\(tasks.count)"
        case .result(let results): return "RESULT ×\(results.count)"
        case .heartbeat: return "HEARTBEAT"
        case .disconnect(let reason): return "DISCONNECT \(reason)"
        case .recall(let ids): return "RECALL ×\(ids.count)"
        case .returned(let tasks): return "RETURNED ×\(tasks.count)"
        }
    }
}

/// One dispatch of a task: its id and attempt, as a RETURNED names the tasks it gives back.
public struct WireTaskReference: Sendable, Hashable {
    /// The task's id, from its TASK.
    public var taskID: UInt64
    /// The attempt, from its TASK.
    public var attempt: UInt32

    /// Creates a reference.
    public init(taskID: UInt64, attempt: UInt32) {
        self.taskID = taskID
        self.attempt = attempt
    }

    /// Bytes of one reference on the wire.
    static let encodedSize = 8 + 4
}
