import CZeroMQ

/// A libzmq socket: endpoints, multipart messages and options.
///
/// A socket belongs to one thread: create it, use it and close it on the thread that owns it,
/// which is why it is not `Sendable`. It is created with a linger of zero, so closing it and
/// terminating its context never wait for unsent messages.
public final class ZMQSocket {
    /// The socket's messaging pattern.
    public let type: ZMQSocketType
    /// The context the socket belongs to, kept alive by the socket.
    public let context: ZMQContext
    /// The libzmq socket, `nil` once closed.
    private(set) var handle: UnsafeMutableRawPointer?
    /// The one `zmq_msg_t` receives use: libzmq forbids moving one after `zmq_msg_init`, so it
    /// lives at a fixed address for the socket's lifetime.
    let message: UnsafeMutablePointer<zmq_msg_t>

    /// Creates a socket with a linger of zero.
    ///
    /// - Parameters:
    ///   - context: The context the socket belongs to.
    ///   - type: The socket's messaging pattern.
    /// - Throws: ``ZMQError`` if the context is closed or libzmq refuses the socket.
    public init(context: ZMQContext, type: ZMQSocketType) throws {
        let handle = try context.makeSocketHandle(type)
        var linger: Int32 = 0
        if zmq_setsockopt(handle, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size) != 0 {
            let error = ZMQError.last("set ZMQ_LINGER 0 on \(type)")
            zmq_close(handle)
            throw error
        }
        self.type = type
        self.context = context
        self.handle = handle
        self.message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
    }

    deinit {
        close()
        message.deallocate()
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket (`zmq_close`); safe to call more than once.
    ///
    /// Unsent messages are dropped (linger zero unless changed). Any call after this throws a
    /// ``ZMQError`` with ``ZMQError/isNotSocket``.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        zmq_close(handle)
    }

    /// Binds the socket to a local endpoint.
    ///
    /// - Parameter endpoint: For example `tcp://127.0.0.1:*` (a free port: read
    ///   ``lastEndpoint`` afterwards), `ipc:///absolute/path` or `inproc://name`.
    /// - Throws: ``ZMQError`` naming the endpoint if libzmq refuses it.
    public func bind(_ endpoint: String) throws {
        let handle = try openHandle("bind \(endpoint)")
        try Self.checkTCPPort(endpoint, operation: "bind")
        if zmq_bind(handle, endpoint) != 0 {
            throw ZMQError.last("bind \(endpoint)")
        }
    }

    /// Connects the socket to an endpoint; libzmq connects, and reconnects, in the background.
    ///
    /// - Parameter endpoint: For example `tcp://127.0.0.1:5555`.
    /// - Throws: ``ZMQError`` naming the endpoint if it is malformed or its transport unknown.
    public func connect(_ endpoint: String) throws {
        let handle = try openHandle("connect \(endpoint)")
        try Self.checkTCPPort(endpoint, operation: "connect")
        if zmq_connect(handle, endpoint) != 0 {
            throw ZMQError.last("connect \(endpoint)")
        }
    }

    /// Disconnects the socket from an endpoint it connected to.
    ///
    /// - Parameter endpoint: The endpoint exactly as given to ``connect(_:)``.
    /// - Throws: ``ZMQError`` if the socket is not connected there (`ENOENT`) or is closed.
    public func disconnect(_ endpoint: String) throws {
        let handle = try openHandle("disconnect \(endpoint)")
        if zmq_disconnect(handle, endpoint) != 0 {
            throw ZMQError.last("disconnect \(endpoint)")
        }
    }

    /// Stops listening on an endpoint the socket bound.
    ///
    /// - Parameter endpoint: The endpoint as bound; for a wildcard bind, ``lastEndpoint``.
    /// - Throws: ``ZMQError`` if the socket is not bound there (`ENOENT`) or is closed.
    public func unbind(_ endpoint: String) throws {
        let handle = try openHandle("unbind \(endpoint)")
        if zmq_unbind(handle, endpoint) != 0 {
            throw ZMQError.last("unbind \(endpoint)")
        }
    }

    /// Rejects a numeric TCP port outside 0...65535, which libzmq 4.3.4 silently wraps
    /// (`tcp://127.0.0.1:99999` binds port 34463, `:-1` port 65535).
    private static func checkTCPPort(_ endpoint: String, operation: String) throws {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return }
        let port = endpoint[endpoint.index(after: colon)...]
        let digits = port.hasPrefix("-") ? port.dropFirst() : port
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return }
        if port.hasPrefix("-") || Int(digits).map({ $0 > 65535 }) ?? true {
            throw ZMQError(code: ZMQError.invalidArgument, operation: "\(operation) \(endpoint)")
        }
    }

    /// The libzmq socket for an operation, or `ENOTSOCK` if the socket is closed.
    func openHandle(_ operation: @autoclosure () -> String) throws -> UnsafeMutableRawPointer {
        guard let handle else {
            throw ZMQError(code: ZMQError.notSocket, operation: operation())
        }
        return handle
    }
}

@available(*, unavailable, message: "a ZMQSocket belongs to the thread that created it")
extension ZMQSocket: Sendable {}
