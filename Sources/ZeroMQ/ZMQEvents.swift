import CZeroMQ

/// Readiness of a socket or file descriptor: what ``ZMQPoller`` waits for and reports, and what
/// ``ZMQSocket/events`` reads.
public struct ZMQEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The libzmq poll bits (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
    public let rawValue: Int16

    /// Creates events from libzmq poll bits.
    ///
    /// - Parameter rawValue: A combination of `ZMQ_POLLIN`, `ZMQ_POLLOUT` and `ZMQ_POLLERR`.
    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// At least one whole message can be received without blocking (`ZMQ_POLLIN`).
    public static let readable = ZMQEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without blocking (`ZMQ_POLLOUT`).
    public static let writable = ZMQEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a plain file descriptor (`ZMQ_POLLERR`); never set for sockets.
    public static let error = ZMQEvents(rawValue: Int16(ZMQ_POLLERR))

    /// The set names, e.g. `[readable, writable]`.
    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writable) { names.append("writable") }
        if contains(.error) { names.append("error") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
