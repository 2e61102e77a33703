import Foundation
import Synchronization

/// The test process's one Ceph object gateway: `scripts/lib/ceph-rgw` (one monitor, one memstore
/// OSD, radosgw with beast on 127.0.0.1, `auth none`, all in a temporary folder), started on first
/// use and stopped when the process exits. Start-up is the slow part (about 3 s, a minute more the
/// first time on a machine, when it installs Debian's `radosgw`, `ceph-mon`, `ceph-osd` and
/// `ceph-mgr`), so the tests share it and each takes a bucket of its own (``CephRGWServer``).
final class CephRGWGateway: Sendable {
    /// `http://127.0.0.1:PORT`.
    let endpoint: String
    /// The S3 user's keys (`radosgw-admin user create`).
    let accessKeyID: String
    let secretAccessKey: String
    /// The cluster's folder: its conf, data, logs (`log/`) and `pids`.
    let cluster: String
    private let folder: TemporaryDirectory

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/lib/ceph-rgw").standardizedFileURL.path

    private init(endpoint: String, accessKeyID: String, secretAccessKey: String, folder: TemporaryDirectory) {
        self.endpoint = endpoint
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.folder = folder
        cluster = folder.file("cluster").path
    }

    /// The start in flight or done: every caller awaits the same one, and a failed start fails them all.
    private static let started = Mutex<Task<CephRGWGateway, any Error>?>(nil)
    /// The started gateway, for the stop at exit (which cannot await).
    private static let running = Mutex<CephRGWGateway?>(nil)

    /// The gateway, started on the first call.
    ///
    /// - Throws: when `ceph-rgw start` fails (its message names the log to read).
    static func shared() async throws -> CephRGWGateway {
        let task = started.withLock { task in
            if let task { return task }
            let starting = Task { try await start() }
            task = starting
            return starting
        }
        return try await task.value
    }

    /// Runs `ceph-rgw start` on a thread of its own and resumes when the script has ended: it
    /// blocks for seconds, which a cooperative thread must not.
    private static func start() async throws -> CephRGWGateway {
        let gateway = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CephRGWGateway, any Error>) in
            Thread { continuation.resume(with: Result { try startScript() }) }.start()
        }
        running.withLock { $0 = gateway }
        atexit { CephRGWGateway.stopRunning() }
        return gateway
    }

    /// `ceph-rgw start`, waited for by its end: its standard output reaches end of file when it
    /// exits (the daemons write to their logs), and its one line gives the endpoint and keys.
    private static func startScript() throws -> CephRGWGateway {
        let folder = try TemporaryDirectory(prefix: "ceph-rgw")
        let errorsPath = folder.file("start.err").path
        FileManager.default.createFile(atPath: errorsPath, contents: nil)
        guard let errors = FileHandle(forWritingAtPath: errorsPath) else { throw TestSupportError("cannot write \(errorsPath)") }
        defer { try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = ["start", folder.file("cluster").path]
        // The script leaves a watcher that stops the daemons and removes the folder should this
        // process end without its exit handlers (SIGKILL, a crash).
        process.environment = ProcessInfo.processInfo.environment.merging(["CEPH_RGW_OWNER_PID": String(getpid())]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let exit = try ProcessLaunch.run(process)
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Its stdout ended: it exits now. The kernel's word, not Foundation's (ProcessLaunch.terminate says why).
        let ended = exit.waitBlocking(timeout: .seconds(60))
        let fields = Self.fields(of: printed)
        guard ended == ProcessLaunch.Exit(status: 0, signalled: false), let endpoint = fields["endpoint"], let key = fields["access_key"],
              let secret = fields["secret_key"] else {
            let said = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
            throw TestSupportError("ceph-rgw start failed (\(ended.map(\.description) ?? "still running 60 s after its output ended")): \(said)\(printed)")
        }
        return CephRGWGateway(endpoint: endpoint, accessKeyID: key, secretAccessKey: secret, folder: folder)
    }

    /// `endpoint=… access_key=… secret_key=…` as a dictionary.
    static func fields(of line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(whereSeparator: \.isWhitespace) {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        return fields
    }

    /// Stops the daemons (`ceph-rgw stop`, which waits until each has exited) and removes the
    /// folder; at exit, so it blocks.
    private static func stopRunning() {
        guard let gateway = running.withLock({ gateway in defer { gateway = nil }; return gateway }) else { return }
        let words = [script, "stop", gateway.cluster]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        if posix_spawn(&pid, script, nil, nil, argv, environ) == 0 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
        gateway.folder.remove()
    }
}
