import CZeroMQ
public import Foundation

/// Socket events a monitor reports (`ZMQ_EVENT_*`).
public struct ZMQMonitorEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// A peer's handshake failed for no reason libzmq can name (`ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`).
    public static let handshakeFailedNoDetail = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    /// A peer broke the ZMTP handshake: another security mechanism, or bytes that do not decrypt
    /// (`ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`).
    public static let handshakeFailedProtocol = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    /// The ZAP handler refused a peer (`ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`).
    public static let handshakeFailedAuth = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// A listening socket accepted a connection; the value is its descriptor (`ZMQ_EVENT_ACCEPTED`).
    public static let accepted = ZMQMonitorEvents(rawValue: ZMQ_EVENT_ACCEPTED)
    /// A connection ended; the value is its descriptor, still open when the event is sent
    /// (`ZMQ_EVENT_DISCONNECTED`).
    public static let disconnected = ZMQMonitorEvents(rawValue: ZMQ_EVENT_DISCONNECTED)
}

/// One event read from a monitor socket.
public struct ZMQMonitorEvent: Sendable, Hashable {
    /// Which event.
    public var event: ZMQMonitorEvents
    /// The event's value (for handshake failures, an errno or a ZMTP protocol error code).
    public var value: UInt32
    /// The peer's or the socket's endpoint, e.g. `tcp://127.0.0.1:40312`.
    public var endpoint: String

    /// Decodes a monitor message: a 6-byte frame (event, value) and the endpoint.
    public init?(frames: [Data]) {
        guard frames.count >= 2, frames[0].count >= 6 else { return nil }
        let bytes = [UInt8](frames[0])
        event = ZMQMonitorEvents(rawValue: Int32(UInt16(bytes[0]) | UInt16(bytes[1]) << 8))
        value = UInt32(bytes[2]) | UInt32(bytes[3]) << 8 | UInt32(bytes[4]) << 16 | UInt32(bytes[5]) << 24
        endpoint = String(decoding: frames[1], as: UTF8.self)
    }
}

extension ZMQSocket {
    /// Publishes `events` of this socket on a PAIR socket at `endpoint` (an `inproc://` name):
    /// connect a PAIR socket of the same context there and read ``ZMQMonitorEvent``s.
    ///
    /// - Throws: ``ZMQError``.
    public func monitor(_ endpoint: String, events: ZMQMonitorEvents) throws {
        let handle = try openHandle("monitor \(type)")
        if zmq_socket_monitor(handle, endpoint, events.rawValue) != 0 { throw ZMQError.last("monitor \(type) on \(endpoint)") }
    }
}
