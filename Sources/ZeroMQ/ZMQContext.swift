import CZeroMQ
import Synchronization

/// A libzmq context: the I/O threads and the registry that every socket of a process shares.
///
/// The context is thread-safe. Every ``ZMQSocket`` keeps its context alive, so the context is
/// terminated in `deinit` only after its sockets are gone.
// `@unchecked` for the raw handle: a libzmq context is thread-safe; `isOpen` guards it against `close()`.
public final class ZMQContext: @unchecked Sendable {
    // `handle` never changes; `isOpen` guards its use against a concurrent `close()`, after
    // which libzmq has freed it.
    private let handle: UnsafeMutableRawPointer
    private let isOpen = Mutex(true)

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
        self.handle = handle
    }

    deinit {
        close()
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool {
        isOpen.withLock { !$0 }
    }

    /// Makes blocking calls on this context's sockets, on any thread, fail with `ETERM`.
    ///
    /// Use it to stop an I/O thread blocked in a receive or a poll; the sockets still have to be
    /// closed before ``close()`` returns. Does nothing once the context is closed.
    public func shutdown() {
        isOpen.withLock { open in
            if open { _ = zmq_ctx_shutdown(handle) }
        }
    }

    /// Terminates the context (`zmq_ctx_term`); safe to call more than once.
    ///
    /// It blocks until every socket of the context is closed, and each closes at once because
    /// sockets are created with a linger of zero: close your sockets first.
    public func close() {
        let wasOpen = isOpen.withLock { open in
            defer { open = false }
            return open
        }
        guard wasOpen else { return }
        while zmq_ctx_term(handle) != 0, zmq_errno() == ZMQError.interrupted {}
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
        let (socket, code): (UnsafeMutableRawPointer?, Int32) = isOpen.withLock { open in
            guard open else { return (nil, ZMQError.terminated) }
            let socket = zmq_socket(handle, type.cValue)
            return (socket, socket == nil ? zmq_errno() : 0)
        }
        guard let socket else {
            throw ZMQError(code: code, operation: "socket \(type)")
        }
        return socket
    }
}
