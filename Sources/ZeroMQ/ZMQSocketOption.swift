import CZeroMQ
public import Foundation

/// A socket option and its value, set with ``ZMQSocket/set(_:)``.
///
/// Options that change how a socket connects (CURVE keys, routing id, heartbeats) take effect
/// only for `bind` and `connect` calls made after them.
public enum ZMQSocketOption: Sendable, Equatable, CustomStringConvertible {
    /// How long `close` keeps unsent messages (`ZMQ_LINGER`); sockets start at 0, -1 is forever.
    case linger(milliseconds: Int)
    /// The most messages queued for sending per peer (`ZMQ_SNDHWM`); 0 is unlimited.
    case sendHighWaterMark(Int)
    /// The most messages queued for receiving per peer (`ZMQ_RCVHWM`); 0 is unlimited.
    case receiveHighWaterMark(Int)
    /// The id a ROUTER peer sees for this socket (`ZMQ_ROUTING_ID`): 1–255 bytes, not starting
    /// with a zero byte.
    case routingID(Data)
    /// Make a ROUTER fail with `EHOSTUNREACH` on an unknown peer instead of dropping the
    /// message (`ZMQ_ROUTER_MANDATORY`).
    case routerMandatory(Bool)
    /// How long a blocking receive waits before returning `nil` (`ZMQ_RCVTIMEO`); -1 is forever.
    case receiveTimeout(milliseconds: Int)
    /// How long a blocking send waits before returning `false` (`ZMQ_SNDTIMEO`); -1 is forever.
    case sendTimeout(milliseconds: Int)
    /// Queue messages only to peers whose connection is complete (`ZMQ_IMMEDIATE`).
    case immediate(Bool)
    /// How often to send a ZMTP heartbeat PING (`ZMQ_HEARTBEAT_IVL`); 0 turns heartbeats off.
    case heartbeatInterval(milliseconds: Int)
    /// How long the peer may wait for the next PING before dropping us (`ZMQ_HEARTBEAT_TTL`).
    case heartbeatTimeToLive(milliseconds: Int)
    /// How long to wait for traffic after a PING before closing the connection
    /// (`ZMQ_HEARTBEAT_TIMEOUT`).
    case heartbeatTimeout(milliseconds: Int)
    /// The first wait before reconnecting (`ZMQ_RECONNECT_IVL`); -1 never reconnects.
    case reconnectInterval(milliseconds: Int)
    /// The longest wait between reconnection attempts, doubling up to it
    /// (`ZMQ_RECONNECT_IVL_MAX`); 0 keeps the first interval.
    case reconnectIntervalMax(milliseconds: Int)
    /// The largest message accepted from a peer, which is disconnected otherwise
    /// (`ZMQ_MAXMSGSIZE`); -1 is unlimited.
    case maxMessageSize(Int)
    /// Receive messages that start with this prefix on a SUB socket (`ZMQ_SUBSCRIBE`); empty
    /// means every message.
    case subscribe(Data)
    /// Undo one ``subscribe(_:)`` of the same prefix (`ZMQ_UNSUBSCRIBE`).
    case unsubscribe(Data)
    /// Act as the CURVE server of this socket's connections (`ZMQ_CURVE_SERVER`).
    case curveServer(Bool)
    /// This socket's long-term public key, 40 Z85 characters (`ZMQ_CURVE_PUBLICKEY`).
    case curvePublicKey(String)
    /// This socket's long-term secret key, 40 Z85 characters (`ZMQ_CURVE_SECRETKEY`).
    case curveSecretKey(String)
    /// The server's public key a CURVE client expects, 40 Z85 characters
    /// (`ZMQ_CURVE_SERVERKEY`).
    case curveServerKey(String)
    /// The ZAP authentication domain of a server socket (`ZMQ_ZAP_DOMAIN`).
    case zapDomain(String)

    /// The libzmq option name and value to pass to `zmq_setsockopt`.
    var encoded: (code: Int32, value: EncodedValue) {
        switch self {
        case .linger(let ms): (ZMQ_LINGER, .int(ms))
        case .sendHighWaterMark(let count): (ZMQ_SNDHWM, .int(count))
        case .receiveHighWaterMark(let count): (ZMQ_RCVHWM, .int(count))
        case .routingID(let id): (ZMQ_ROUTING_ID, .bytes(Array(id)))
        case .routerMandatory(let on): (ZMQ_ROUTER_MANDATORY, .int(on ? 1 : 0))
        case .receiveTimeout(let ms): (ZMQ_RCVTIMEO, .int(ms))
        case .sendTimeout(let ms): (ZMQ_SNDTIMEO, .int(ms))
        case .immediate(let on): (ZMQ_IMMEDIATE, .int(on ? 1 : 0))
        case .heartbeatInterval(let ms): (ZMQ_HEARTBEAT_IVL, .int(ms))
        case .heartbeatTimeToLive(let ms): (ZMQ_HEARTBEAT_TTL, .int(ms))
        case .heartbeatTimeout(let ms): (ZMQ_HEARTBEAT_TIMEOUT, .int(ms))
        case .reconnectInterval(let ms): (ZMQ_RECONNECT_IVL, .int(ms))
        case .reconnectIntervalMax(let ms): (ZMQ_RECONNECT_IVL_MAX, .int(ms))
        case .maxMessageSize(let size): (ZMQ_MAXMSGSIZE, .int64(Int64(size)))
        case .subscribe(let prefix): (ZMQ_SUBSCRIBE, .bytes(Array(prefix)))
        case .unsubscribe(let prefix): (ZMQ_UNSUBSCRIBE, .bytes(Array(prefix)))
        case .curveServer(let on): (ZMQ_CURVE_SERVER, .int(on ? 1 : 0))
        case .curvePublicKey(let key): (ZMQ_CURVE_PUBLICKEY, .bytes(Self.curveKeyBytes(key)))
        case .curveSecretKey(let key): (ZMQ_CURVE_SECRETKEY, .bytes(Self.curveKeyBytes(key)))
        case .curveServerKey(let key): (ZMQ_CURVE_SERVERKEY, .bytes(Self.curveKeyBytes(key)))
        case .zapDomain(let domain): (ZMQ_ZAP_DOMAIN, .bytes(Array(domain.utf8)))
        }
    }

    /// The case and its value, with the secret key left out so errors and logs cannot leak it.
    public var description: String {
        switch self {
        case .linger(let ms): "linger(\(ms) ms)"
        case .sendHighWaterMark(let count): "sendHighWaterMark(\(count))"
        case .receiveHighWaterMark(let count): "receiveHighWaterMark(\(count))"
        case .routingID(let id): "routingID(\(id.count) bytes)"
        case .routerMandatory(let on): "routerMandatory(\(on))"
        case .receiveTimeout(let ms): "receiveTimeout(\(ms) ms)"
        case .sendTimeout(let ms): "sendTimeout(\(ms) ms)"
        case .immediate(let on): "immediate(\(on))"
        case .heartbeatInterval(let ms): "heartbeatInterval(\(ms) ms)"
        case .heartbeatTimeToLive(let ms): "heartbeatTimeToLive(\(ms) ms)"
        case .heartbeatTimeout(let ms): "heartbeatTimeout(\(ms) ms)"
        case .reconnectInterval(let ms): "reconnectInterval(\(ms) ms)"
        case .reconnectIntervalMax(let ms): "reconnectIntervalMax(\(ms) ms)"
        case .maxMessageSize(let size): "maxMessageSize(\(size))"
        case .subscribe(let prefix): "subscribe(\(prefix.count) bytes)"
        case .unsubscribe(let prefix): "unsubscribe(\(prefix.count) bytes)"
        case .curveServer(let on): "curveServer(\(on))"
        case .curvePublicKey(let key): "curvePublicKey(\(key))"
        case .curveSecretKey: "curveSecretKey(<redacted>)"
        case .curveServerKey(let key): "curveServerKey(\(key))"
        case .zapDomain(let domain): "zapDomain(\(domain))"
        }
    }

    /// A value in the C type its option takes.
    enum EncodedValue {
        case int(Int)
        case int64(Int64)
        case bytes([UInt8])
    }

    /// libzmq reads a Z85 key as 41 bytes ending in NUL; any other length is passed unchanged
    /// and rejected with `EINVAL` unless it is a raw 32-byte key.
    private static func curveKeyBytes(_ key: String) -> [UInt8] {
        let bytes = Array(key.utf8)
        return bytes.count == 40 ? bytes + [0] : bytes
    }
}
