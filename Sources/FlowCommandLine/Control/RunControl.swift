import FlowCluster
import Foundation
import Synchronization
import ZeroMQ

/// A run's control socket (issue 38): `flow-coordinator status|pause|continue|cancel RUN_ID` from
/// another terminal reach the run through it. A ZeroMQ REP socket on `ipc://` beside the run's
/// journal (`RUN_ID.control`), the socket file readable and writable by its owner only; one JSON
/// request, one JSON reply.
enum RunControl {
    /// What another terminal asks.
    struct Request: Codable, Sendable {
        var command: String
        /// For `limit`: the group (its name, op or line), and its new rates as the user wrote
        /// them (`50MiB`, `off`); a rate not given stays as it is.
        var step: String?
        var bytesPerSecond: String?
        var requestsPerSecond: String?
    }

    /// The run as `status RUN_ID` shows it.
    struct Status: Codable, Sendable, Equatable {
        var run: String
        var flow: String
        var paused: Bool
        var elapsedSeconds: Double
        var workers: Int
        var slots: Int
        var running: Int
        var queued: Int
        /// The group that runs now (or ran last).
        var step: String?
        var done: Int?
        var failed: Int?
        var total: Int?
        var perSecond: Double?
        var etaSeconds: Double?
        /// The groups' budgets: rates in force, adaptive concurrency, starts.
        var limits: [GroupBudgetStatus]?
    }

    /// The answer: `ok`, or an error; and the status for `status`.
    struct Reply: Codable, Sendable {
        var ok: Bool
        var error: String?
        var status: Status?
    }

    /// The control socket's file for a journal at `journalPath`.
    static func socketPath(forJournal journalPath: String) -> String {
        (journalPath.hasSuffix(".sqlite") ? String(journalPath.dropLast(7)) : journalPath) + ".control"
    }

    /// The file that says a run was paused, beside its journal: a run resumed after a crash
    /// starts paused while it exists.
    static func pausedMarker(forJournal journalPath: String) -> String {
        (journalPath.hasSuffix(".sqlite") ? String(journalPath.dropLast(7)) : journalPath) + ".paused"
    }

    /// The longest `ipc://` path libzmq takes (sun_path less its terminator).
    static let longestSocketPath = 107

    /// Sends one request to the run whose control socket is at `path`.
    ///
    /// - Throws: a message for the user when nothing answers.
    static func send(_ command: String, to path: String, timeout: Duration = .seconds(5)) throws -> Reply {
        try send(Request(command: command), to: path, timeout: timeout)
    }

    /// Sends one request to the run whose control socket is at `path`.
    ///
    /// - Throws: a message for the user when nothing answers.
    static func send(_ request: Request, to path: String, timeout: Duration = .seconds(5)) throws -> Reply {
        try checkReachable(path)
        let context = try ZMQContext()
        defer { context.close() }
        let socket = try ZMQSocket(context: context, type: .req)
        defer { socket.close() }
        // Whole milliseconds, at least 1 (0 would not wait at all), at most an hour.
        let milliseconds = Int(clamping: min(3_600_000, max(1, timeout.components.seconds &* 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)))
        try socket.set(.linger(milliseconds: 0), .receiveTimeout(milliseconds: milliseconds), .sendTimeout(milliseconds: milliseconds))
        try socket.connect("ipc://" + path)
        _ = try socket.send([try JSONEncoder().encode(request)])
        guard let frames = try socket.receiveMultipart(), let body = frames.first else {
            throw RunControlError("the run did not answer within \(String(format: "%g", Double(milliseconds) / 1000)) s at \(path): it may have stopped without cleaning up")
        }
        return try JSONDecoder().decode(Reply.self, from: body)
    }
}

/// Why a control request failed, for the user.
struct RunControlError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Serves a run's control socket on a thread of its own until ``stop()``.
final class RunControlServer: Sendable {
    let path: String
    private let context: ZMQContext
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds the socket at `path` and serves `handle` for each request.
    ///
    /// - Throws: when the socket cannot be bound.
    init(path: String, handle: @escaping @Sendable (RunControl.Request) -> RunControl.Reply) throws {
        self.path = path
        context = try ZMQContext()
        unlink(path)
        let bound = Mutex<(any Error)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        // The socket lives on the thread that serves it, as ZeroMQ sockets must.
        let thread = Thread { [self, context] in
            defer { finished.signal() }
            let socket: ZMQSocket
            do {
                socket = try ZMQSocket(context: context, type: .rep)
                try socket.set(.linger(milliseconds: 0), .receiveTimeout(milliseconds: 100))
                // Created owner-only, then kept so: the socket must not let another account pause
                // or cancel the run.
                let mask = umask(0o077)
                defer { umask(mask) }
                try socket.bind("ipc://" + path)
                chmod(path, 0o600)
            } catch {
                bound.withLock { $0 = error }
                ready.signal()
                return
            }
            defer { socket.close() }
            ready.signal()
            while !stopping.load(ordering: .acquiring) {
                guard let frames = try? socket.receiveMultipart(), let body = frames.first else { continue }
                let reply: RunControl.Reply
                if let request = try? JSONDecoder().decode(RunControl.Request.self, from: body) {
                    reply = handle(request)
                } else {
                    reply = RunControl.Reply(ok: false, error: "not a control request")
                }
                _ = try? socket.send([(try? JSONEncoder().encode(reply)) ?? Data("{\"ok\":false}".utf8)])
            }
        }
        thread.name = "flow-control"
        thread.start()
        ready.wait()
        if let error = bound.withLock({ $0 }) {
            finished.wait()
            context.close()
            throw error
        }
    }

    /// Stops serving and removes the socket file.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        context.close()
        unlink(path)
    }
}
