import CZeroMQ

/// The messaging pattern of a ``ZMQSocket``.
public enum ZMQSocketType: Sendable, CaseIterable, CustomStringConvertible {
    /// Routes by peer routing id: the first frame of every message names the peer.
    case router
    /// Load-balances outgoing and fair-queues incoming messages, with no envelope of its own.
    case dealer
    /// Sends to PULL peers in turn.
    case push
    /// Receives from PUSH peers.
    case pull
    /// Talks to exactly one other PAIR.
    case pair
    /// Strict request then reply.
    case req
    /// Strict reply to each request.
    case rep
    /// Publishes to every matching subscriber.
    case pub
    /// Subscribes to publishers; needs a ``ZMQSocketOption/subscribe(_:)`` to receive anything.
    case sub

    /// The libzmq constant (`ZMQ_ROUTER`, …).
    public var cValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        }
    }

    /// The upper-case libzmq name, e.g. `ROUTER`.
    public var description: String {
        switch self {
        case .router: "ROUTER"
        case .dealer: "DEALER"
        case .push: "PUSH"
        case .pull: "PULL"
        case .pair: "PAIR"
        case .req: "REQ"
        case .rep: "REP"
        case .pub: "PUB"
        case .sub: "SUB"
        }
    }
}
