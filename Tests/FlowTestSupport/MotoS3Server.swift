import Foundation

/// A real S3 API on 127.0.0.1: moto's server (`moto[server]` from PyPI, at the versions
/// `Resources/requirements-test.txt` pins, installed when the installed ones differ) in
/// its signature-checking mode. After four unsigned set-up requests (an IAM user `flow` with an S3
/// policy, its access key, and the bucket) every request must carry a valid SigV4 signature of
/// that user's key. It is `Resources/moto_s3.py`.
///
/// ```swift
/// let s3 = try await MotoS3Server.start(bucket: "photos")
/// defer { s3.stop() }
/// // AWS_ACCESS_KEY_ID = s3.accessKeyID, AWS_SECRET_ACCESS_KEY = s3.secretAccessKey, endpoint s3.endpoint
/// let bytes = try await s3.object("2026/a.jpg")
/// ```
public final class MotoS3Server: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The bucket made at start.
    public let bucket: String
    /// The IAM user's access key id and secret.
    public let accessKeyID: String
    public let secretAccessKey: String
    /// For files read back.
    public let scratch: TemporaryDirectory
    /// Held open: moto stops when its standard input closes, so it never outlives the tests.
    private var stdinPipe: Pipe?

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/moto_s3.py").path

    /// Installs moto when missing, starts it, and sets up the user and the bucket, on a thread of
    /// its own (``TestCommand/offThread(_:)``): the caller's task is suspended while pip, moto's
    /// start and the set-up run, and no thread of the cooperative pool waits for them.
    ///
    /// - Throws: when moto cannot be installed or does not print its readiness line within 30 s
    ///   (three ports tried: a free port can be taken before moto binds it), with its output.
    public static func start(bucket: String = "photos") async throws -> MotoS3Server {
        try await TestCommand.offThread { try MotoS3Server(bucket: bucket) }
    }

    /// What ``start(bucket:)`` runs on its own thread: blocks until moto is ready or has failed.
    private init(bucket: String) throws {
        try Self.installIfMissingBlocking()
        self.bucket = bucket
        scratch = try TemporaryDirectory(prefix: "moto-s3")
        var started: (endpoint: String, keys: [String: String])?
        var lastError = ""
        // A free port can be taken before moto binds it: try a few.
        for _ in 0..<3 where started == nil {
            let port = try LoopbackPort.free()
            let stdin = Pipe()
            let candidate: Started
            do {
                candidate = try Self.launchScript(["serve", String(port)], listeningOn: port, stdin: stdin, within: 30)
            } catch {
                lastError = "\(error)"
                continue
            }
            let endpoint = "http://127.0.0.1:\(port)"
            let setup = try TestCommand.runBlocking(["python3", Self.script, "setup", endpoint, bucket])
            guard setup.status == 0, let keys = try? JSONDecoder().decode([String: String].self, from: Data(setup.output.utf8)) else {
                candidate.kill()
                lastError = "setting up moto failed: \(setup.output)"
                continue
            }
            started = (endpoint, keys)
            processBox = candidate
            stdinPipe = stdin
        }
        guard let started, let id = started.keys["accessKeyID"], let secret = started.keys["secretAccessKey"] else {
            throw TestSupportError("the S3 server did not start: \(lastError)")
        }
        endpoint = started.endpoint
        accessKeyID = id
        secretAccessKey = secret
    }

    private var processBox: Started?

    deinit { stop() }

    /// The environment that signs as the IAM user.
    public var credentialsEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_SESSION_TOKEN": "",
         "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": ""]
    }

    /// An object's bytes, read back through the S3 API (boto3, signed).
    public func object(_ key: String) async throws -> Data { try await readObject(key, in: bucket) }

    /// The bucket's keys and sizes.
    public func objects() async throws -> [String: Int] { try await listObjects(in: bucket) }

    /// The multipart uploads in progress (`ListMultipartUploads`): their keys.
    public func multipartUploads() async throws -> [String] { try await listUploads(in: bucket) }

    /// Stops the server, reaps it, and removes its scratch folder.
    public func stop() {
        processBox?.kill()
        scratch.remove()
    }

    /// A script started by ``startScript(_:script:listeningOn:stdin:within:)``: the process and its exit.
    struct Started {
        let process: Process
        let exit: OneTimeEvent<ProcessLaunch.Exit>

        /// SIGKILLs it and reaps it.
        func kill() { ProcessLaunch.kill(process, exit: exit) }
    }

    /// Starts `moto_s3.py ARGUMENTS` (or another script of `Resources` that prints `listening`
    /// once bound) and waits until it is ready, blocking the calling thread (a proxy's start runs
    /// on a thread of its own); never `nil`: it throws what went wrong instead.
    static func startScript(_ arguments: [String], script: String = MotoS3Server.script, listeningOn port: Int, stdin: Pipe,
                            within seconds: Double) throws -> Process? {
        try launchScript(arguments, script: script, listeningOn: port, stdin: stdin, within: seconds).process
    }

    /// Starts `moto_s3.py ARGUMENTS` and waits until it prints its readiness line (`listening`,
    /// printed once its server is bound to `port`), blocking the calling thread: for a start that
    /// runs on a thread of its own (``start(bucket:)``, the proxies' `start`).
    ///
    /// - Throws: when it cannot be started, or when it did not print the line within `seconds`
    ///   (it is killed and reaped then); the message has what it wrote to stdout and stderr.
    static func launchScript(_ arguments: [String], script: String = MotoS3Server.script, listeningOn port: Int, stdin: Pipe,
                             within seconds: Double) throws -> Started {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.standardInput = stdin
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let exit = try ProcessLaunch.run(process)
        let changes = EventWaiters()
        let stdout = PipeReader(output, notifying: changes)
        let stderr = PipeReader(errors, notifying: changes)
        exit.whenHappened { _ in changes.changed() }
        let name = URL(fileURLWithPath: script).lastPathComponent + " " + arguments.joined(separator: " ")
        // Its port taken before it bound it, moto's server thread dies and moto waits for good.
        _ = changes.waitBlocking(timeout: .milliseconds(Int64(seconds * 1000))) {
            stdout.hasLine(containing: "listening") || exit.hasHappened || stderr.text.contains("Address already in use")
        }
        guard stdout.hasLine(containing: "listening"), !exit.hasHappened else {
            let ended = exit.current
            ProcessLaunch.kill(process, exit: exit)
            _ = stderr.waitBlocking(forEndWithin: .seconds(2))
            throw TestSupportError("\(name) did not print its readiness line ('listening' on port \(port)) within \(seconds) s"
                + " (\(ended.map { "it ended, \($0)" } ?? "it was killed")); its stdout: \(stdout.text)\nits stderr: \(stderr.text)")
        }
        return Started(process: process, exit: exit)
    }

    /// `Resources/requirements-test.txt`: moto, boto3 and what they run on, pinned.
    static let requirements = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/requirements-test.txt").path

    /// Installs the pinned moto, boto3, botocore and their server's packages with pip when the
    /// installed versions differ (a moto other than the pinned one can refuse valid signatures);
    /// the tests that compare Flow's signatures with botocore's call it too. The check (and pip)
    /// run on a thread of its own (``TestCommand/offThread(_:)``).
    ///
    /// - Throws: when pip cannot install them.
    public static func installIfMissing() async throws {
        try await TestCommand.offThread { try installIfMissingBlocking() }
    }

    /// As ``installIfMissing()``, blocking the calling thread: for a start already on a thread of
    /// its own.
    static func installIfMissingBlocking() throws {
        try pinnedPackages.get()
    }

    /// Checked and installed once per process: tests start servers side by side, and two pips
    /// installing into the same folder at once break each other.
    private static let pinnedPackages: Result<Void, TestSupportError> = Result {
        let check = try TestCommand.runBlocking(["python3", "-c", MotoS3Server.versionCheck, requirements])
        if check.status == 0 { return }
        let installed = try TestCommand.runBlocking(["python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements])
        guard installed.status == 0 else {
            throw TestSupportError("pip install -r \(requirements) failed (installed: \(check.output)): \(installed.output)")
        }
    }.mapError { $0 as? TestSupportError ?? TestSupportError("\($0)") }

    /// Exits 1 printing each `name==version` of a requirements file that is not what is installed.
    private static let versionCheck = """
        import sys, importlib.metadata as metadata
        wrong = []
        for line in open(sys.argv[1]):
            line = line.split("#")[0].strip()
            if not line:
                continue
            name, version = line.split("==")
            name = name.split("[")[0]
            try:
                have = metadata.version(name)
            except metadata.PackageNotFoundError:
                have = "none"
            if have != version:
                wrong.append("%s %s, wants %s" % (name, have, version))
        print("; ".join(wrong))
        sys.exit(1 if wrong else 0)
        """
}

/// A proxy in front of a ``MotoS3Server`` that answers the first try of chosen part numbers with
/// 503 `SlowDown` and forwards everything else unchanged: a failed part for the upload to retry.
public final class S3FaultProxy: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`: the endpoint to give the op.
    public let endpoint: String
    private let process: MotoS3Server.Started
    private let stdinPipe = Pipe()

    /// Starts the proxy and waits for its readiness line on a thread of its own
    /// (``TestCommand/offThread(_:)``), the caller's task suspended meanwhile.
    ///
    /// - Parameters:
    ///   - server: where requests go.
    ///   - failingParts: part numbers whose first try fails.
    ///   - failingAborts: how many multipart aborts, the first ones, fail with 500 InternalError.
    /// - Throws: when it does not print its readiness line within 10 s, with its output.
    public static func start(in server: MotoS3Server, failingParts: [Int], failingAborts: Int = 0) async throws -> S3FaultProxy {
        try await TestCommand.offThread { try S3FaultProxy(in: server, failingParts: failingParts, failingAborts: failingAborts) }
    }

    /// What ``start(in:failingParts:failingAborts:)`` runs on its own thread.
    private init(in server: MotoS3Server, failingParts: [Int], failingAborts: Int) throws {
        let port = try LoopbackPort.free()
        process = try MotoS3Server.launchScript(["proxy", String(port), server.endpoint, failingParts.map(String.init).joined(separator: ","),
                                                 String(failingAborts)],
                                                listeningOn: port, stdin: stdinPipe, within: 10)
        endpoint = "http://127.0.0.1:\(port)"
    }

    deinit { stop() }

    /// Tries the proxy saw, by part number.
    public func partTries() throws -> [Int: Int] {
        let data = try Data(contentsOf: URL(string: endpoint + "/_proxy_stats")!)
        let decoded = try JSONDecoder().decode([String: Int].self, from: data)
        return Dictionary(uniqueKeysWithValues: decoded.compactMap { key, value in Int(key).map { ($0, value) } })
    }

    /// How many multipart aborts the proxy saw, failed ones included.
    public func abortTries() throws -> Int {
        let data = try Data(contentsOf: URL(string: endpoint + "/_proxy_stats")!)
        return try JSONDecoder().decode([String: Int].self, from: data)["aborts"] ?? 0
    }

    /// Stops the proxy and reaps it.
    public func stop() {
        process.kill()
    }
}
