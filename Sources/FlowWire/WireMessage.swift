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

    /// The message's command byte.
    public var command: WireCommand {
        switch self {
        case .ready: return .ready
        case .task: return .task
        case .result: return .result
        case .heartbeat: return .heartbeat
        case .disconnect: return .disconnect
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
        }
    }
}
