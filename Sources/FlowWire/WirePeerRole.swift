/// The roles of the protocol: the coordinator's (or pool's) ROUTER socket, a worker's DEALER
/// socket, and a pool client's DEALER socket (§14).
package enum WirePeerRole: Sendable, Hashable, CustomStringConvertible {
    /// The peer that hands out tasks (ZeroMQ ROUTER; binds).
    case coordinator
    /// A peer that runs tasks (ZeroMQ DEALER; connects).
    case worker
    /// A coordinator that runs one flow on a pool's workers (ZeroMQ DEALER; connects to the pool).
    case client

    package var description: String {
        switch self {
        case .coordinator: return "coordinator"
        case .worker: return "worker"
        case .client: return "client"
        }
    }
}
