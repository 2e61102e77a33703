import FlowTestSupport
import Foundation
import Testing

/// What one test starts: its children and a temporary directory, all cleaned up when the test
/// ends, passed or failed.
///
/// ```swift
/// try await withCluster { cluster in
///     let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*"])
///     ...
/// }
/// ```
final class ClusterScope: @unchecked Sendable {
    /// Heartbeat options for tests where a death must be noticed fast (both sides must agree).
    ///
    /// Under a sanitizer (`FLOW_TEST_SANITIZER`, which scripts/test sets for its ThreadSanitizer
    /// pass) the programs run several times slower, and a sanitized worker's I/O thread was seen
    /// silent for over 0.6 s while it ran tasks: there a death is noticed within 4 s instead.
    /// Suites whose tests depend on the 0.6 s window itself (a worker frozen past it) stay out of
    /// that pass.
    static let fastHeartbeat = ["--heartbeat-interval", "0.2", "--liveness", isSanitized ? "20" : "3"]

    /// Whether the test programs are built with a sanitizer (scripts/test says so).
    static let isSanitized = !(ProcessInfo.processInfo.environment["FLOW_TEST_SANITIZER"] ?? "").isEmpty

    /// The folder holding the test bundle and the built programs.
    static let productsDirectory: URL = {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent()
    }()

    /// The per-test temporary directory (short, so ipc paths stay under the 107-byte limit).
    let directory: URL
    private let lock = NSLock()
    private var children: [ChildProcess] = []

    init() throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let name = "flowct-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        directory = URL(fileURLWithPath: base).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    // MARK: Files

    /// Writes `text` to a file in the temporary directory and returns its absolute path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// An absolute path in the temporary directory.
    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// An `ipc://` endpoint with an absolute path in the temporary directory.
    func ipcEndpoint(_ name: String) -> String {
        "ipc://" + path(name)
    }

    // MARK: Children

    /// Starts a built program (`flow-coordinator`, `flow-worker`).
    /// The environment of the scope's programs: its TMPDIR and XDG_RUNTIME_DIR (where an embedded
    /// run's socket file goes), and its own folder for run journals
    /// (`$XDG_STATE_HOME/flow/runs`, see ``journalFolder``).
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        environment["XDG_RUNTIME_DIR"] = directory.path
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        return environment
    }

    /// Where the scope's coordinators keep their run journals.
    var journalFolder: String { directory.appendingPathComponent("state/flow/runs").path }

    func start(_ program: String, _ arguments: [String], label: String? = nil, extraEnvironment: [String: String] = [:]) throws -> ChildProcess {
        let executable = try Self.builtProgram(program)
        // TMPDIR here, so the private ipc endpoint of an embedded run lands in this directory and
        // goes with it even when the test kills the coordinator before it can clean up.
        let child = try ChildProcess(label: label ?? program, executable: executable, arguments: arguments,
                                     environment: environment.merging(extraEnvironment) { _, extra in extra })
        lock.withLock { children.append(child) }
        return child
    }

    /// A built program (`flow-coordinator`, `flow-worker`) beside the test bundle.
    static func builtProgram(_ program: String) throws -> URL {
        let executable = productsDirectory.appendingPathComponent(program)
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw HarnessError("no \(program) at \(executable.path): run swift build first")
        }
        return executable
    }

    /// Starts a program of the system (`/usr/bin/script`, `/usr/bin/setpriv`) with the scope's TMPDIR.
    func startSystem(_ path: String, _ arguments: [String], label: String? = nil) throws -> ChildProcess {
        let child = try ChildProcess(label: label ?? URL(fileURLWithPath: path).lastPathComponent,
                                     executable: URL(fileURLWithPath: path), arguments: arguments, environment: environment)
        lock.withLock { children.append(child) }
        return child
    }

    /// Starts `flow-coordinator` with `arguments` (the subcommand first).
    func coordinator(_ arguments: [String], label: String = "coordinator") throws -> ChildProcess {
        try start("flow-coordinator", arguments, label: label)
    }

    /// Starts `flow-worker --connect ENDPOINT --name NAME` with a fast heartbeat.
    func worker(connect endpoint: String, name: String, concurrency: Int = 4, extra: [String] = []) throws -> ChildProcess {
        try start("flow-worker", ["--connect", endpoint, "--name", name, "--concurrency", String(concurrency)]
                  + Self.fastHeartbeat + extra, label: name)
    }

    /// Kills every child still running, waits for each, and removes the temporary directory.
    func finish() {
        let all = lock.withLock {
            defer { children = [] }
            return children
        }
        for child in all where child.isRunning { child.send(SIGKILL) }
        for child in all { child.kill() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh ``ClusterScope`` and cleans it up however `body` ends.
func withCluster<T>(_ body: (ClusterScope) async throws -> T) async throws -> T {
    let scope = try ClusterScope()
    defer { scope.finish() }
    return try await body(scope)
}

/// Runs `body` with a started nginx that keeps what it is sent (``NginxServer``), a fresh
/// ``ClusterScope``, and an empty folder `files` in the scope for the files to upload; stops
/// and cleans up both however `body` ends.
func withUploadServer<T>(_ body: (NginxServer, ClusterScope, URL) async throws -> T) async throws -> T {
    let server = try NginxServer()
    try await server.start()
    defer { server.stop() }
    return try await withCluster { cluster in
        let folder = cluster.directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await body(server, cluster, folder)
    }
}

/// A harness problem (a missing program), as a thrown error.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension ChildProcess {
    /// The endpoint from a bound coordinator's `[cluster] listening on ENDPOINT; ...` line.
    func listeningEndpoint(timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        guard await waitForStderr(containing: "; start workers with:", timeout: timeout, sourceLocation: sourceLocation) else {
            throw HarnessError("\(label) never said where it listens")
        }
        let line = stderr.split(separator: "\n").first { $0.contains("[cluster] listening on ") } ?? ""
        guard let start = line.range(of: "listening on ")?.upperBound, let end = line.range(of: ";", range: start..<line.endIndex)?.lowerBound else {
            throw HarnessError("cannot parse the endpoint from '\(line)'")
        }
        return String(line[start..<end])
    }

    /// The summary lines on stdout.
    var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
}
