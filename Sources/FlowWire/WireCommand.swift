/// The one-byte command in frame 1 of every message (docs/PROTOCOL.md, "Commands").
public enum WireCommand: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A worker announces itself and what it offers. Worker to coordinator.
    case ready = 0x01
    /// A batch of tasks to run. Coordinator to worker.
    case task = 0x02
    /// A batch of finished tasks. Worker to coordinator.
    case result = 0x03
    /// A sign of life when nothing else was sent. Both directions; no body frame.
    case heartbeat = 0x04
    /// The sender is leaving, or refuses the receiver. Both directions.
    case disconnect = 0x05
    /// Give back these queued tasks if they have not started. Coordinator to worker.
    case recall = 0x06
    /// Tasks given back unrun. Worker to coordinator.
    case returned = 0x07

    /// The command's name as the spec writes it (`READY`, `TASK`, …).
    public var description: String {
        switch self {
        case .ready: return "READY"
        case .task: return "TASK"
        case .result: return "RESULT"
        case .heartbeat: return "HEARTBEAT"
        case .disconnect: return "DISCONNECT"
        case .recall: return "RECALL"
        case .returned: return "RETURNED"
        }
    }

    /// Whether the message carries a body frame (frame 2).
    public var hasBody: Bool { self != .heartbeat }

    /// Whether a peer in the given role may send this command.
    ///
    /// A peer that receives a command its counterpart may not send treats the message as
    /// unexpected: it drops and logs it (docs/PROTOCOL.md, "Error handling").
    /// - Parameter role: the role of the sending peer.
    /// - Returns: `true` when the spec allows that role to send the command.
    public func canBeSent(by role: WirePeerRole) -> Bool {
        switch self {
        case .ready, .result, .returned: return role == .worker
        case .task, .recall: return role == .coordinator
        case .heartbeat, .disconnect: return true
        }
    }
}
