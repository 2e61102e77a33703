import CZeroMQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Wakes a thread blocked in ``ZMQPoller/poll(timeout:)`` from any thread or task.
///
/// A Linux `eventfd` (a pipe elsewhere) that the polling thread registers with
/// ``ZMQPoller/register(_:)-(ZMQWakeup)``: ``signal()`` is one `write`, safe from any thread, and
/// ``drain()``, on the polling thread after each wake-up, one `read`. That is how async code
/// hands work to a thread that owns the sockets: queue the work, then signal.
///
/// It is not a ZeroMQ socket on purpose: an `inproc://` PUSH/PULL pair, which this used to be,
/// costs a message, a pipe and libzmq's command processing (a `getpid` and a `poll` for each
/// socket in every `zmq_poll`) on both sides of every wake-up, about a fifth of a serial step's
/// CPU (measured with perf on a chain of 10,000 no-op steps).
public final class ZMQWakeup: Sendable {
    // The write end is used under `writeEnd`'s lock; the read end by the polling thread alone,
    // as documented.
    /// The descriptor signals are written to; -1 once closed.
    private let writeEnd: Mutex<Int32>
    /// The descriptor the polling thread waits on and drains (the same as the write end for an
    /// eventfd).
    public let fileDescriptor: Int32
    private let closed = Atomic<Bool>(false)

    /// Creates a wake-up.
    ///
    /// - Throws: ``ZMQError`` with the system's error number when no descriptor can be made (the
    ///   process is out of file descriptors).
    public init() throws {
        #if os(Linux)
        let descriptor = czmq_eventfd()
        guard descriptor >= 0 else { throw ZMQError(code: errno, operation: "eventfd") }
        fileDescriptor = descriptor
        writeEnd = Mutex(descriptor)
        #else
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw ZMQError(code: errno, operation: "pipe") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = ends[0]
        writeEnd = Mutex(ends[1])
        #endif
    }

    /// Wakes the thread polling ``fileDescriptor``; never blocks, safe from any thread.
    ///
    /// Signals that pile up before a ``drain()`` wake the thread once, and a closed wake-up is
    /// not an error: nobody is left to wake.
    ///
    /// - Returns: Whether the signal was written.
    @discardableResult
    public func signal() -> Bool {
        writeEnd.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            #if os(Linux)
            var one: UInt64 = 1
            return write(descriptor, &one, MemoryLayout<UInt64>.size) == MemoryLayout<UInt64>.size
            #else
            var one: UInt8 = 1
            // A full pipe already wakes the poller.
            return write(descriptor, &one, 1) == 1 || errno == EAGAIN
            #endif
        }
    }

    /// Empties the wake-up, on the polling thread, so the next poll waits for a new signal.
    ///
    /// - Returns: How many signals were waiting (for a pipe, how many bytes).
    /// - Throws: ``ZMQError`` once the wake-up is closed.
    @discardableResult
    public func drain() throws -> Int {
        guard !closed.load(ordering: .acquiring) else { throw ZMQError(code: EBADF, operation: "drain a closed wake-up") }
        #if os(Linux)
        var count: UInt64 = 0
        let read = Glibc.read(fileDescriptor, &count, MemoryLayout<UInt64>.size)
        if read == MemoryLayout<UInt64>.size { return Int(count) }
        #else
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let read = Darwin.read(fileDescriptor, &buffer, buffer.count)
            guard read > 0 else { break }
            count += read
        }
        if count > 0 { return count }
        #endif
        guard errno == EAGAIN || errno == EINTR else { throw ZMQError(code: errno, operation: "drain a wake-up") }
        return 0
    }

    /// Closes the wake-up; safe to call more than once, and from the polling thread only.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        writeEnd.withLock { descriptor in
            #if os(Linux)
            descriptor = -1
            #else
            _ = Darwin.close(descriptor)
            descriptor = -1
            #endif
        }
        #if os(Linux)
        _ = Glibc.close(fileDescriptor)
        #else
        _ = Darwin.close(fileDescriptor)
        #endif
    }

    deinit {
        close()
    }
}

extension ZMQPoller {
    /// Registers a wake-up, to be drained (``ZMQWakeup/drain()``) when ``events(at:)`` says it is
    /// readable.
    ///
    /// - Returns: The wake-up's index for ``events(at:)``.
    @discardableResult
    public func register(_ wakeup: ZMQWakeup) -> Int {
        register(fileDescriptor: wakeup.fileDescriptor)
    }
}
