import FlowTestSupport
import Foundation
import Synchronization
import Testing

/// A FIFO the elements of an ``PoolTests/echoFlow(_:count:sleep:maxConcurrent:announcingTo:gatedBy:)`` write to
/// as they start on a worker, read on a thread of its own: each start is an event a test waits
/// for (it samples the pool's status then), where it slept between samples.
final class ElementStarts: Sendable {
    let path: String
    private let descriptor: Int32
    private let names = Mutex([String]())
    private let changes = EventWaiters()

    init(_ path: String) throws {
        guard mkfifo(path, 0o600) == 0 else { throw HarnessError("mkfifo \(path): \(String(cString: strerror(errno)))") }
        // Read and write: opening does not wait for a writer, and the FIFO never ends while open.
        descriptor = open(path, O_RDWR)
        guard descriptor >= 0 else { throw HarnessError("open \(path): \(String(cString: strerror(errno)))") }
        self.path = path
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let read = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if read < 0, errno == EINTR { continue }
                guard read > 0 else { return }
                // Lines of at most PIPE_BUF bytes come whole: one per element, or the end.
                let lines = String(decoding: buffer[0..<read], as: UTF8.self).split(separator: "\n")
                names.withLock { $0 += lines.filter { $0 != "end of test" }.map(String.init) }
                changes.changed()
                if lines.contains("end of test") { return }
            }
        }
        thread.name = "element-starts"
        thread.start()
    }

    /// Element starts read so far.
    var started: Int { names.withLock { $0.count } }

    /// The elements started so far, in the order they announced it.
    var order: [String] { names.withLock { $0 } }

    /// Waits until more than `seen` elements have started; whether they did before `deadline`.
    func waitForMore(than seen: Int, before deadline: ContinuousClock.Instant) async -> Bool {
        await changes.wait(timeout: ContinuousClock.now.duration(to: deadline)) { self.started > seen }
    }

    /// Ends the reading thread. The FIFO stays open for reading, so that an element still
    /// running (a test that failed early) never blocks on opening it.
    func close() {
        _ = "end of test\n".withCString { write(descriptor, $0, strlen($0)) }
    }
}

extension ChildProcess {
    /// Kills this coordinator with SIGKILL once more than `count - 1` of its run's elements have
    /// announced their start on `starts`, and returns its run's id (from its first lines) once it
    /// and the local workers it started are gone: what its journal holds is then final.
    func killAfterStarts(_ starts: ElementStarts, count: Int) async throws -> String {
        let runID = try #require(await waitForOutput(timeout: 30) { _, stderr in stderr.contains("journal ") } ?
            stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1.description : nil, "\(transcript)")
        let enough = await starts.waitForMore(than: count - 1, before: ContinuousClock.now + .seconds(60))
        #expect(enough, "\(count) elements never ran within 60 s (\(starts.started) did)\n\(transcript)")
        let workers = ProcessTable.children(of: processIdentifier, named: "flow-worker")
        send(SIGKILL)
        #expect(await waitForExit(timeout: 10) == .signal(SIGKILL))
        let survivors = await ProcessTable.waitUntilGone(workers, timeout: 10)
        #expect(survivors.isEmpty, "local workers outlived their killed coordinator: \(survivors)")
        return runID
    }
}
