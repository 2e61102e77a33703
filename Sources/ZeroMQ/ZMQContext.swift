import CZeroMQ
import Synchronization

/// A libzmq context: the I/O threads and the registry that every socket of a process shares.
///
/// The context is thread-safe. Every ``ZMQSocket`` keeps its context alive, so the context is
/// terminated in `deinit` only after its sockets are gone.
public final class ZMQContext: Sendable {
    /// The libzmq context, `nil` once ``close()`` took it: every use holds the lock, so that a
    /// concurrent `close()` cannot free it in between.
    private let handle: Mutex<UnsafeMutableRawPointer?>

    /// Creates a context.
    ///
    /// - Parameter ioThreads: The number of libzmq I/O threads (`ZMQ_IO_THREADS`); one carries
    ///   about a gigabyte per second.
    /// - Throws: ``ZMQError`` if libzmq cannot create the context or rejects the thread count.
    public init(ioThreads: Int = 1) throws {
        guard let handle = zmq_ctx_new() else {
            throw ZMQError.last("zmq_ctx_new")
        }
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(clamping: ioThreads)) != 0 {
            let error = ZMQError.last("set ZMQ_IO_THREADS \(ioThreads)")
            zmq_ctx_term(handle)
            throw error
        }
        self.handle = Mutex(handle)
    }

    deinit {
        close()
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool {
        handle.withLock { $0 == nil }
    }

    /// Makes blocking calls on this context's sockets, on any thread, fail with `ETERM`.
    ///
    /// Use it to stop an I/O thread blocked in a receive or a poll; the sockets still have to be
    /// closed before ``close()`` returns. Does nothing once the context is closed.
    public func shutdown() {
        handle.withLock { handle in
            if let handle { _ = zmq_ctx_shutdown(handle) }
        }
    }

    /// Terminates the context (`zmq_ctx_term`); safe to call more than once.
    ///
    /// It blocks until every socket of the context is closed, and each closes at once because
    /// sockets are created with a linger of zero: close your sockets first.
    public func close() {
        // Taken out under the lock, terminated outside it: `zmq_ctx_term` waits for the sockets
        // to close, and `shutdown()` from another thread must not wait behind it.
        let taken = handle.withLock { handle -> UnsafeMutableRawPointer? in
            defer { handle = nil }
            return handle
        }
        guard let taken else { return }
        while zmq_ctx_term(taken) != 0, zmq_errno() == ZMQError.interrupted {}
    }

    /// Creates a socket of this context.
    ///
    /// - Parameter type: The socket's pattern.
    /// - Returns: A socket with a linger of zero.
    /// - Throws: ``ZMQError`` if the context is closed or libzmq refuses the socket.
    public func socket(_ type: ZMQSocketType) throws -> ZMQSocket {
        try ZMQSocket(context: self, type: type)
    }

    /// Calls `zmq_socket` while the context is known to be open.
    func makeSocketHandle(_ type: ZMQSocketType) throws -> UnsafeMutableRawPointer {
        // The socket and errno are read under the lock, so that a concurrent close() cannot
        // free the context in between.
        let (socket, code): (UnsafeMutableRawPointer?, Int32) = handle.withLock { handle in
            guard let handle else { return (nil, ZMQError.terminated) }
            let socket = zmq_socket(handle, type.cValue)
            return (socket, socket == nil ? zmq_errno() : 0)
        }
        guard let socket else {
            throw ZMQError(code: code, operation: "socket \(type)")
        }
        return socket
    }
}
