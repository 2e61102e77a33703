import Foundation

/// A throwaway nginx on 127.0.0.1 for tests that talk real HTTP.
///
/// Everything lives in a temporary folder: configuration, logs, nginx's temporary files and the
/// served tree. nginx runs in the foreground as one process (`master_process off`), so it serves
/// as the user running the tests and needs no privileges.
///
/// What it answers:
/// - `PUT /any/path` stores the body at `documentRoot/any/path`, creating folders (WebDAV
///   `PUT`, no size limit), and answers 201 (204 when replacing).
/// - any path containing `/fail` (a `/fail/` folder, or a file name starting with `fail`)
///   answers `500` with the body `boom`.
/// - `POST /form/...` goes to a ``FormUploadReceiver`` when the server was created with
///   `receivesFormPosts: true` (the multipart `file` field lands at `formRoot/form/...`), else
///   answers 501.
///
/// ```swift
/// let server = try NginxServer()
/// try await server.start()
/// defer { server.stop() }
/// // PUT to server.url("/uploads/a.txt"), then read server.storedFile("/uploads/a.txt")
/// ```
public final class NginxServer: @unchecked Sendable {
    /// Where nginx is looked for first.
    public static let defaultExecutable = "/usr/sbin/nginx"

    /// The temporary folder holding everything.
    public let directory: TemporaryDirectory
    /// The folder `PUT` stores into.
    public let documentRoot: URL
    /// The folder the form receiver stores `POST`ed files into.
    public let formRoot: URL
    /// Request headers written to the access log (see ``accessLog()``).
    public let loggedHeaders: [String]
    /// The port nginx listens on, once started.
    public private(set) var port = 0

    private let lock = NSLock()
    private var process: Process?
    private let formReceiver: FormUploadReceiver?

    var formReceiverPort: Int? { formReceiver?.port }

    /// Prepares a server; nothing runs until ``start()``.
    ///
    /// - Parameters:
    ///   - receivesFormPosts: whether `POST /form/...` is passed to a python3 ``FormUploadReceiver``.
    ///   - loggedHeaders: request headers the access log records.
    /// - Throws: when the temporary folder cannot be made.
    public init(receivesFormPosts: Bool = false, loggedHeaders: [String] = ["X-Flow-Token", "Authorization"]) throws {
        directory = try TemporaryDirectory(prefix: "flow-nginx")
        documentRoot = try directory.folder("www")
        formRoot = try directory.folder("form-received")
        self.loggedHeaders = loggedHeaders
        formReceiver = receivesFormPosts ? FormUploadReceiver(directory: formRoot) : nil
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The full URL of a path on the server (`path` starts with `/`).
    public func url(_ path: String) -> String {
        baseURL + path
    }

    /// Where a file `PUT` to `path` is stored.
    public func storedFile(_ path: String) -> URL {
        documentRoot.appendingPathComponent(String(path.drop { $0 == "/" }))
    }

    /// Where the `file` field of a form `POST`ed to `path` (starting `/form/`) is stored.
    public func receivedFormFile(_ path: String) -> URL {
        formRoot.appendingPathComponent(String(path.drop { $0 == "/" }))
    }

    /// Starts nginx (and the form receiver) and waits until it is ready: nginx also logs to its
    /// stderr at `notice`, and says `getrlimit(RLIMIT_NOFILE)` there once its configuration is
    /// loaded and its listening socket bound (the last of the start-up lines, before it serves).
    ///
    /// The wait runs on a thread of its own (``TestCommand/offThread(_:)``): the caller's task is
    /// suspended, and no thread of the cooperative pool is held while nginx starts.
    ///
    /// - Throws: ``TestSupportError`` when nginx is not installed (run `scripts/test`, which
    ///   installs it) or does not start within 10 s; its error log is in the message.
    public func start() async throws {
        try await TestCommand.offThread { try self.startBlocking() }
    }

    /// What ``start()`` runs on its own thread: blocks until nginx is ready or has failed.
    private func startBlocking() throws {
        let executable = try Self.findExecutable()
        try formReceiver?.start()
        var lastLog = ""
        for _ in 0..<8 {
            let port = try LoopbackPort.free()
            try writeConfiguration(port: port)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-p", directory.path, "-c", configurationFile.path, "-e", errorLogFile.path,
                                 "-g", "error_log stderr notice;"]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            let exit = try ProcessLaunch.run(process)
            let changes = EventWaiters()
            // Read to its end, so that nginx never blocks on a full pipe.
            let stderr = PipeReader(errors, notifying: changes)
            exit.whenHappened { _ in changes.changed() }
            _ = changes.waitBlocking(timeout: .seconds(10)) { stderr.hasLine(containing: Self.readinessMark) || exit.hasHappened }
            if stderr.hasLine(containing: Self.readinessMark), !exit.hasHappened {
                lock.withLock {
                    self.process = process
                    self.port = port
                }
                return
            }
            let ended = exit.current
            ProcessLaunch.terminate(process, exit: exit)
            _ = stderr.waitBlocking(forEndWithin: .seconds(2))
            lastLog = "\(errorLog())\n(\(ended.map { "nginx ended, \($0)" } ?? "no readiness line within 10 s")); its stderr:\n\(stderr.text)"
            // Another process took the port between our probe and nginx's bind: try another.
            guard lastLog.contains("Address already in use") else { break }
        }
        formReceiver?.stop()
        throw TestSupportError("nginx did not start; its error log:\n\(lastLog)")
    }

    /// What nginx logs at `notice` once it is bound and about to serve.
    static let readinessMark = "getrlimit(RLIMIT_NOFILE)"

    /// Stops nginx and the form receiver and reaps them. The files stay until the server goes away.
    public func stop() {
        let process = lock.withLock {
            defer { self.process = nil }
            return self.process
        }
        if let process { Self.terminate(process) }
        formReceiver?.stop()
    }

    /// The requests logged so far, oldest first.
    public func accessLog() -> [NginxAccessLogEntry] {
        guard let text = try? String(contentsOf: accessLogFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 + loggedHeaders.count, let status = Int(fields[2]) else { return nil }
            var headers: [String: String] = [:]
            for (index, name) in loggedHeaders.enumerated() where !fields[4 + index].isEmpty {
                headers[name] = fields[4 + index]
            }
            return NginxAccessLogEntry(method: fields[0], uri: fields[1], status: status, headers: headers, time: Double(fields[3]))
        }
    }

    /// The requests logged once at least `count` of them match `matching`, or those logged when
    /// `within` passed (the caller's expectation then fails on what is there). nginx writes a
    /// request's line after it has sent the response, so a client that has its answer can read the
    /// log before the line is in it. No event says a line was written: the file is read every 10 ms.
    public func accessLog(waitingFor count: Int, within: Duration = .seconds(10),
                          matching: (NginxAccessLogEntry) -> Bool) async -> [NginxAccessLogEntry] {
        let deadline = ContinuousClock.now + within
        var log = accessLog()
        while log.filter(matching).count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
            log = accessLog()
        }
        return log
    }

    /// nginx's error log so far.
    public func errorLog() -> String {
        (try? String(contentsOf: errorLogFile, encoding: .utf8)) ?? ""
    }

    /// Ends a child process started by ``ProcessLaunch``: SIGTERM, then SIGKILL after 3 s;
    /// returns once it has exited.
    static func terminate(_ process: Process) {
        // `nil`: it has ended already (its exit was seen); Foundation reaps it in its own time.
        guard let exit = ProcessLaunch.exit(of: process) else { return }
        ProcessLaunch.terminate(process, exit: exit)
    }

    private static func findExecutable() throws -> String {
        var candidates = [defaultExecutable]
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(folder + "/nginx")
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestSupportError("nginx is not installed (looked for \(defaultExecutable) and nginx in PATH): "
                + "run scripts/test, which installs nginx-light")
        }
        return found
    }
}
