import CZeroMQ

/// A failed libzmq call: the error number, libzmq's text for it and the operation that failed.
///
/// The code is an opaque `errno` value rather than an enum so that codes libzmq adds later do not
/// break callers; the `is…` properties name the ones callers act on.
public struct ZMQError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The `errno` value libzmq reported (`EAGAIN`, `ETERM`, …).
    public let code: Int32
    /// What was being done, with its argument where there is one, e.g. `bind tcp://127.0.0.1:1`.
    public let operation: String
    /// libzmq's text for the code (`zmq_strerror`).
    public let message: String

    /// Creates an error for a code, taking its text from `zmq_strerror`.
    ///
    /// - Parameters:
    ///   - code: The `errno` value.
    ///   - operation: What was being done when the call failed.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
        self.message = String(cString: zmq_strerror(code))
    }

    /// The error for the calling thread's last libzmq failure (`zmq_errno`).
    static func last(_ operation: @autoclosure () -> String) -> ZMQError {
        ZMQError(code: zmq_errno(), operation: operation())
    }

    /// A text such as `bind tcp://127.0.0.1:99999: Invalid argument (errno 22)`.
    public var description: String {
        "\(operation): \(message) (errno \(code))"
    }

    /// Whether the call would have blocked, or timed out (`EAGAIN`).
    public var isAgain: Bool { code == ZMQError.again }
    /// Whether the context was terminated or shut down (`ETERM`).
    public var isTerminated: Bool { code == ZMQError.terminated }
    /// Whether a ROUTER with `routerMandatory` had no peer for the routing id (`EHOSTUNREACH`).
    public var isHostUnreachable: Bool { code == ZMQError.hostUnreachable }
    /// Whether a signal interrupted the call (`EINTR`).
    public var isInterrupted: Bool { code == ZMQError.interrupted }
    /// Whether the socket was already closed (`ENOTSOCK`).
    public var isNotSocket: Bool { code == ZMQError.notSocket }

    /// `EAGAIN`: the operation would block, or its time-out passed.
    public static let again = czmq_eagain()
    /// `ETERM`: the socket's context was terminated.
    public static let terminated = czmq_eterm()
    /// `EHOSTUNREACH`: a ROUTER could not route a message to the named peer.
    public static let hostUnreachable = czmq_ehostunreach()
    /// `EINTR`: a signal interrupted the call.
    public static let interrupted = czmq_eintr()
    /// `EINVAL`: an argument was invalid (an endpoint, an option value, a key).
    public static let invalidArgument = czmq_einval()
    /// `ENOTSOCK`: the socket is closed.
    public static let notSocket = czmq_enotsock()
    /// `ENOTSUP`: the operation is not supported (e.g. CURVE without libsodium).
    public static let notSupported = czmq_enotsup()
    /// `EFSM`: the socket is in the wrong state for the operation (e.g. REQ sending twice).
    public static let wrongState = czmq_efsm()
}
