/// The two roles of the protocol: the coordinator's ROUTER socket and a worker's DEALER socket.
public enum WirePeerRole: Sendable, Hashable, CustomStringConvertible {
    /// The peer that hands out tasks (ZeroMQ ROUTER; binds).
    case coordinator
    /// A peer that runs tasks (ZeroMQ DEALER; connects).
    case worker

    public var description: String {
        switch self {
        case .coordinator: return "coordinator"
        case .worker: return "worker"
        }
    }
}
