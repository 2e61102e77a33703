import CZeroMQ
import Foundation
import Synchronization

/// Wakes a thread blocked in ``ZMQPoller/poll(timeout:)`` from any thread or task.
///
/// An `inproc://` PUSH/PULL pair: ``signal()`` sends an empty frame on the PUSH side under a
/// lock, so any thread may call it; the PULL side, ``receiver``, belongs to the I/O thread that
/// polls it and calls ``drain()`` after each wake-up. That is how async code hands work to a
/// thread that owns the sockets: queue the work, then signal.
public final class ZMQWakeup: @unchecked Sendable {
    // `@unchecked`: the PUSH side is only reached under `sender`'s lock, and `receiver` is
    // documented as the polling thread's alone.
    private let sender: Mutex<ZMQSocket?>

    /// The PULL socket to register with the I/O thread's ``ZMQPoller``.
    ///
    /// Only the thread that polls it may touch it.
    public let receiver: ZMQSocket

    /// The `inproc://` endpoint that joins the pair.
    public let endpoint: String

    private static let nextID = Atomic<Int>(0)

    /// Creates a connected pair in a context.
    ///
    /// - Parameter context: The context; the I/O thread's sockets need not share it.
    /// - Throws: ``ZMQError`` if the context is closed.
    public init(context: ZMQContext) throws {
        let id = Self.nextID.wrappingAdd(1, ordering: .relaxed).newValue
        let endpoint = "inproc://zmq-wakeup-\(ProcessInfo.processInfo.processIdentifier)-\(id)"
        let receiver = try ZMQSocket(context: context, type: .pull)
        try receiver.bind(endpoint)
        let sender = try ZMQSocket(context: context, type: .push)
        try sender.connect(endpoint)
        self.endpoint = endpoint
        self.receiver = receiver
        self.sender = Mutex(sender)
    }

    /// Wakes the thread polling ``receiver``; never blocks, safe from any thread.
    ///
    /// Signals that pile up before a ``drain()`` wake the thread once, and a full queue or a
    /// closed pair is not an error: either the thread will wake anyway or nobody is left to wake.
    ///
    /// - Returns: Whether a new signal was queued.
    @discardableResult
    public func signal() -> Bool {
        sender.withLock { socket in
            guard let socket else { return false }
            return (try? socket.send(Data(), dontWait: true)) ?? false
        }
    }

    /// Empties the PULL side, on the polling thread, so the next poll waits for a new signal.
    ///
    /// - Returns: How many signals were waiting.
    /// - Throws: ``ZMQError`` if the context is shut down or the pair closed.
    @discardableResult
    public func drain() throws -> Int {
        var count = 0
        while try receiver.discardFrame() {
            count += 1
        }
        return count
    }

    /// Closes both sockets; safe to call more than once, and from the polling thread only.
    public func close() {
        sender.withLock { socket in
            socket?.close()
            socket = nil
        }
        receiver.close()
    }

    deinit {
        close()
    }
}
