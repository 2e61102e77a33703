import CZeroMQ

/// Waits until any of a set of sockets or file descriptors is ready (`zmq_poll`).
///
/// The poller keeps one buffer of `zmq_pollitem_t` and reuses it on every ``poll(timeout:)``, so
/// an event loop allocates nothing per iteration. Like its sockets, it belongs to one thread.
public final class ZMQPoller {
    private var items: [zmq_pollitem_t] = []
    /// The socket of each item, `nil` for a file descriptor; kept alive while registered.
    private var sockets: [ZMQSocket?] = []

    /// Creates an empty poller.
    public init() {}

    /// The number of registered sockets and file descriptors.
    public var count: Int { items.count }

    /// Registers a socket, or changes the events it is polled for if already registered.
    ///
    /// - Parameters:
    ///   - socket: The socket; the poller keeps it alive until ``unregister(_:)``.
    ///   - events: What to wait for: `.readable`, `.writable` or both.
    /// - Returns: The socket's index for ``events(at:)``; it moves down when an earlier
    ///   item is unregistered.
    @discardableResult
    public func register(_ socket: ZMQSocket, for events: ZMQEvents = .readable) -> Int {
        if let index = index(of: socket) {
            items[index].events = events.rawValue
            return index
        }
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: events.rawValue, revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Registers a plain file descriptor, such as a pipe or a TCP socket of another library.
    ///
    /// - Parameters:
    ///   - fileDescriptor: The descriptor, which the caller keeps open while registered.
    ///   - events: What to wait for; `.error` is reported whether asked for or not.
    /// - Returns: The descriptor's index for ``events(at:)``.
    @discardableResult
    public func register(fileDescriptor: Int32, for events: ZMQEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        sockets.append(nil)
        return items.count - 1
    }

    /// Stops polling a socket; does nothing if it is not registered.
    ///
    /// - Parameter socket: The socket.
    public func unregister(_ socket: ZMQSocket) {
        guard let index = index(of: socket) else { return }
        items.remove(at: index)
        sockets.remove(at: index)
    }

    /// Waits until at least one item is ready or the time-out passes.
    ///
    /// A signal that interrupts the wait restarts it for the time that is left.
    ///
    /// - Parameter milliseconds: The longest wait; 0 returns at once, -1 waits forever.
    /// - Returns: How many items are ready (0 after a time-out); read each with
    ///   ``events(at:)`` or ``events(for:)``.
    /// - Throws: ``ZMQError``: `ETERM` once the context is shut down, `ENOTSOCK` if a
    ///   registered socket was closed.
    public func poll(timeout milliseconds: Int) throws -> Int {
        for index in items.indices {
            items[index].revents = 0
            guard let socket = sockets[index] else { continue }
            // A closed socket's pointer may already be freed: never hand it to zmq_poll.
            items[index].socket = try socket.openHandle("poll \(socket.type)")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(milliseconds))
        var timeout = milliseconds
        while true {
            let ready = items.withUnsafeMutableBufferPointer { buffer in
                zmq_poll(buffer.baseAddress, Int32(buffer.count), timeout)
            }
            if ready >= 0 { return Int(ready) }
            let code = zmq_errno()
            guard code == ZMQError.interrupted else {
                throw ZMQError(code: code, operation: "poll \(items.count) items")
            }
            if milliseconds > 0 {
                let left = clock.now.duration(to: deadline)
                timeout = max(0, Int((left / .milliseconds(1)).rounded(.up)))
            }
        }
    }

    /// The events the last poll found for an item.
    ///
    /// - Parameter index: The index ``register(_:for:)`` returned.
    /// - Returns: The ready events; empty if none, or if the index is out of range.
    public func events(at index: Int) -> ZMQEvents {
        guard items.indices.contains(index) else { return [] }
        return ZMQEvents(rawValue: items[index].revents)
    }

    /// The events the last poll found for a socket.
    ///
    /// - Parameter socket: A registered socket.
    /// - Returns: The ready events; empty if none or not registered.
    public func events(for socket: ZMQSocket) -> ZMQEvents {
        guard let index = index(of: socket) else { return [] }
        return ZMQEvents(rawValue: items[index].revents)
    }

    /// Whether the last poll found a message waiting on a socket.
    ///
    /// - Parameter socket: A registered socket.
    /// - Returns: `true` if it is readable.
    public func isReadable(_ socket: ZMQSocket) -> Bool {
        events(for: socket).contains(.readable)
    }

    private func index(of socket: ZMQSocket) -> Int? {
        sockets.firstIndex { $0 === socket }
    }
}

@available(*, unavailable, message: "a ZMQPoller belongs to the thread that owns its sockets")
extension ZMQPoller: Sendable {}
