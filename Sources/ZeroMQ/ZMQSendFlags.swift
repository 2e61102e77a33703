import CZeroMQ

/// Flags for ``ZMQSocket/send(_:flags:)``.
public struct ZMQSendFlags: OptionSet, Sendable, Hashable {
    /// The libzmq flag bits (`ZMQ_DONTWAIT`, `ZMQ_SNDMORE`).
    public let rawValue: Int32

    /// Creates flags from libzmq bits.
    ///
    /// - Parameter rawValue: A combination of `ZMQ_DONTWAIT` and `ZMQ_SNDMORE`.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Return `false` instead of blocking when the message cannot be queued (`ZMQ_DONTWAIT`).
    public static let dontWait = ZMQSendFlags(rawValue: ZMQ_DONTWAIT)
    /// More frames of the same message follow this send (`ZMQ_SNDMORE`).
    public static let sendMore = ZMQSendFlags(rawValue: ZMQ_SNDMORE)
}
