import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A named pipe (FIFO) in a test's folder, through which a program the test started (a shell
/// command of an op) says that something happened: the test waits for the line, woken by its
/// arrival, instead of looking for the program's effects again and again.
public struct NamedPipe: Sendable {
    /// The pipe's path, for the program to write to (`echo started > PATH`).
    public let path: String

    /// Creates the pipe as `name` in `folder`.
    ///
    /// - Throws: when `mkfifo` fails.
    public init(in folder: TemporaryDirectory, named name: String = "announce") throws {
        path = folder.file(name).path
        guard mkfifo(path, 0o600) == 0 else {
            throw TestSupportError("cannot make the named pipe \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The first line written to the pipe (without its newline), or `nil` when none came within
    /// `timeout`. It waits on a thread of its own, in `poll`, so no cooperative thread is held.
    ///
    /// - Throws: when the pipe cannot be opened or read.
    public func firstLine(within timeout: Duration) async throws -> String? {
        try await TestCommand.offThread { [path] in try Self.readLine(path, timeout: timeout) }
    }

    /// Opens the pipe for reading and writing, so that it neither blocks in `open` waiting for a
    /// writer nor reports an end when a writer closes before the line is read (Linux allows a FIFO
    /// opened so), and reads until a newline or the deadline.
    private static func readLine(_ path: String, timeout: Duration) throws -> String? {
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TestSupportError("cannot open the named pipe \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while received.firstIndex(of: UInt8(ascii: "\n")) == nil {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(Double(Int32.max), EventWaiters.seconds(remaining) * 1000 + 1))
            let ready = poll(&watched, 1, milliseconds)
            if ready < 0, errno != EINTR { throw TestSupportError("poll on \(path): \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 { received += buffer.prefix(count) }
        }
        let line = received.prefix { $0 != UInt8(ascii: "\n") }
        return String(decoding: line, as: UTF8.self)
    }
}
