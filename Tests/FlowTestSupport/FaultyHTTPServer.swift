import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real HTTP server on 127.0.0.1 that stores `PUT` bodies and injects faults on purpose: 503
/// (with or without `Retry-After`), connection resets before and during the body, stalls, and
/// permanent 403s. It is `Resources/faulty_http_server.py` (Python's standard library only).
///
/// ```swift
/// let server = try await FaultyHTTPServer.start(rules: [.init(kind: "503", every: 3)])
/// defer { server.stop() }
/// // PUT to server.url("/up/a.bin"); then server.storedFile("/up/a.bin"), try server.stats()
/// ```
public final class FaultyHTTPServer: @unchecked Sendable {
    /// One fault; the first rule whose selectors all match a `PUT` acts on it.
    public struct Rule: Encodable, Sendable {
        /// `503`, `403`, `reset-before`, `reset-during`, `stall` (before reading the body) or `hold`
        /// (after it, until the client closes or `seconds` pass).
        public var kind: String
        /// Every Nth `PUT`, counting all of them from 1.
        public var every: Int?
        /// Only the first N `PUT`s, by the same count.
        public var upTo: Int?
        /// The first K tries of each path.
        public var first: Int?
        /// Only these file names.
        public var names: [String]?
        /// For `503`: the `Retry-After` seconds sent.
        public var retryAfter: Int?
        /// For `stall` and `hold`: how long the request is held.
        public var seconds: Double?
        /// Only while more than this many `PUT`s arrived in the second before (S3's SlowDown).
        public var abovePerSecond: Int?
        /// For `stall`: it also ends at ``FaultyHTTPServer/release()``.
        public var untilReleased: Bool?

        public init(kind: String, every: Int? = nil, first: Int? = nil, names: [String]? = nil, retryAfter: Int? = nil,
                    seconds: Double? = nil, abovePerSecond: Int? = nil, untilReleased: Bool? = nil, upTo: Int? = nil) {
            self.upTo = upTo
            self.abovePerSecond = abovePerSecond
            self.untilReleased = untilReleased
            self.kind = kind
            self.every = every
            self.first = first
            self.names = names
            self.retryAfter = retryAfter
            self.seconds = seconds
        }
    }

    /// What the server saw.
    public struct Stats: Decodable, Sendable {
        /// `PUT` requests received.
        public var puts: Int
        /// Tries per path.
        public var byPath: [String: Int]
        /// Stored files: path to size.
        public var stored: [String: Int]
        /// Answers by status code (and `reset`).
        public var status: [String: Int]
        /// Requests being handled now, and the most at once.
        public var inFlight: Int
        public var maxInFlight: Int
        /// Requests held now by a `stall` that waits for ``FaultyHTTPServer/release()``.
        public var held: Int?
        /// Each answered `PUT`: when it arrived (seconds since 1970) and its status.
        public var times: [[Double]]?
    }

    /// Where `PUT` bodies are stored.
    public let root: TemporaryDirectory
    /// The port it listens on.
    public private(set) var port = 0
    private let scheme: String
    private let process = Process()
    private let output = Pipe()

    /// The server script, beside this file.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/faulty_http_server.py").path

    /// Starts the server and waits until it listens, on a thread of its own
    /// (``TestCommand/offThread(_:)``): the caller's task is suspended meanwhile.
    ///
    /// - Parameter tls: PEM files of a certificate and its key: the server speaks HTTPS with them
    ///   (``SelfSignedCertificate`` makes a pair). Its ``stats()`` are then out of reach.
    /// - Throws: when python3 is missing or the server does not start within 10 s.
    public static func start(rules: [Rule] = [], tls: SelfSignedCertificate? = nil) async throws -> FaultyHTTPServer {
        try await TestCommand.offThread { try FaultyHTTPServer(rules: rules, tls: tls) }
    }

    /// What ``start(rules:tls:)`` runs on its own thread: blocks until the server prints its
    /// `listening on PORT` line, exits, or 10 s pass. Its stdout is read on a thread of its own
    /// (``PipeReader``), so the deadline holds even when the server prints nothing.
    private init(rules: [Rule], tls: SelfSignedCertificate?) throws {
        root = try TemporaryDirectory(prefix: "faulty-http")
        scheme = tls == nil ? "http" : "https"
        let rulesJSON = String(decoding: try JSONEncoder().encode(rules), as: UTF8.self)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = (tls.map { ["FAULTY_TLS_CERT=\($0.certificate)", "FAULTY_TLS_KEY=\($0.key)"] } ?? [])
            + ["python3", Self.script, root.url.path, rulesJSON]
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let exit = try ProcessLaunch.run(process)
        let changes = EventWaiters()
        let stdout = PipeReader(output, notifying: changes)
        exit.whenHappened { _ in changes.changed() }
        _ = changes.waitBlocking(timeout: .seconds(10)) { Self.listeningPort(in: stdout) != nil || exit.hasHappened }
        guard let port = Self.listeningPort(in: stdout) else {
            stop()
            throw TestSupportError("the faulty HTTP server did not start within 10 s (is python3 installed?"
                + "\(exit.current.map { " it ended, \($0)" } ?? "")): \(stdout.text)")
        }
        self.port = port
    }

    /// The port of a whole `listening on PORT` line the server wrote, `nil` before it came.
    private static func listeningPort(in stdout: PipeReader) -> Int? {
        let lines = stdout.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard let line = lines.first(where: { $0.contains("listening on ") }), let range = line.range(of: "listening on ") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber }).flatMap { $0 > 0 ? $0 : nil }
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT` (`https` with TLS) and `path`.
    public func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }

    /// Where a `PUT` to `path` was stored.
    public func storedFile(_ path: String) -> URL {
        root.url.appendingPathComponent(String(path.drop { $0 == "/" }))
    }

    /// Ends the stalls of rules with `untilReleased`, those held now and those to come.
    public func release() throws {
        _ = try Data(contentsOf: URL(string: url("/_release"))!)
    }

    /// What the server has seen so far.
    public func stats() throws -> Stats {
        let data = try Data(contentsOf: URL(string: url("/_stats"))!)
        return try JSONDecoder().decode(Stats.self, from: data)
    }

    /// Stops the server (SIGKILL: it holds no state worth a clean exit) and waits until it has exited.
    public func stop() {
        ProcessLaunch.kill(process)
    }
}
