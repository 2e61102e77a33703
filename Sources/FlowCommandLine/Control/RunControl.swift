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
        /// `nil` while the group's input file is still being read (``listed`` counts so far).
        var total: Int?
        /// The elements known so far while the group's input file is still being read.
        var listed: Int?
        var perSecond: Double?
        var etaSeconds: Double?
        /// The groups' budgets: rates in force, adaptive concurrency, starts.
        var limits: [GroupBudgetStatus]?
        /// The workers connected now (not for a run through a pool: `status --pool` lists those).
        var workerList: [FlowCoordinator.ConnectedWorker]?
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
///
/// The thread binds the socket, then waits in a blocking receive (no time-out to look at a flag):
/// ``stop()`` shuts the context down, the receive fails with `ETERM`, and the thread closes the
/// socket and the context, removes the socket file and resumes whoever waits. Neither the start
/// nor the stop blocks a caller's thread: both are awaited through continuations.
final class RunControlServer: Sendable {
    let path: String
    private let context: ZMQContext
    private let ended = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private init(path: String, context: ZMQContext) {
        self.path = path
        self.context = context
    }

    /// Binds the socket at `path` and serves `handle` for each request; returns once it is bound.
    ///
    /// - Throws: when the socket cannot be bound.
    static func start(path: String, handle: @escaping @Sendable (RunControl.Request) -> RunControl.Reply) async throws -> RunControlServer {
        let server = RunControlServer(path: path, context: try ZMQContext())
        unlink(path)
        let bound: Result<Void, any Error> = await withCheckedContinuation { continuation in
            let ready = ResumeOnce(continuation)
            // The socket lives on the thread that serves it, as ZeroMQ sockets must.
            let thread = Thread { [server] in
                server.serve(ready: ready, handle: handle)
                server.end()
            }
            thread.name = "flow-control"
            thread.start()
        }
        try bound.get()
        return server
    }

    /// Binds, says so through `ready`, and answers requests until the context is shut down.
    private func serve(ready: ResumeOnce<Result<Void, any Error>>, handle: @Sendable (RunControl.Request) -> RunControl.Reply) {
        let socket: ZMQSocket
        do {
            socket = try ZMQSocket(context: context, type: .rep)
            try socket.set(.linger(milliseconds: 0))
            // Created owner-only, then kept so: the socket must not let another account pause
            // or cancel the run.
            let mask = umask(0o077)
            defer { umask(mask) }
            try socket.bind("ipc://" + path)
            chmod(path, 0o600)
        } catch {
            ready.resume(returning: .failure(error))
            return
        }
        defer { socket.close() }
        ready.resume(returning: .success(()))
        while true {
            let frames: [Data]?
            do {
                frames = try socket.receiveMultipart()
            } catch {
                // ETERM: ``stop()`` shut the context down.
                return
            }
            guard let body = frames?.first else { continue }
            let reply: RunControl.Reply
            if let request = try? JSONDecoder().decode(RunControl.Request.self, from: body) {
                reply = handle(request)
            } else {
                reply = RunControl.Reply(ok: false, error: "not a control request")
            }
            do {
                _ = try socket.send([(try? JSONEncoder().encode(reply)) ?? Data("{\"ok\":false}".utf8)])
            } catch {
                if (error as? ZMQError)?.isTerminated == true { return }
            }
        }
    }

    /// On the thread, its socket closed: closes the context, removes the socket file, wakes the
    /// waiters.
    private func end() {
        context.close()
        unlink(path)
        let waiters = ended.withLock { ended in
            ended.done = true
            defer { ended.waiters = [] }
            return ended.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops serving and removes the socket file; returns once the thread has, resumed by it.
    /// Safe to call more than once.
    func stop() async {
        context.shutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { ended in
                if !ended.done { ended.waiters.append(continuation) }
                return ended.done
            }
            if done { continuation.resume() }
        }
    }
}
