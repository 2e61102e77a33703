import Foundation

/// A real S3 API on 127.0.0.1: moto's server (`moto[server]` from PyPI, at the versions
/// `Resources/requirements-test.txt` pins, installed when the installed ones differ) in
/// its signature-checking mode. After four unsigned set-up requests (an IAM user `flow` with an S3
/// policy, its access key, and the bucket) every request must carry a valid SigV4 signature of
/// that user's key. It is `Resources/moto_s3.py`.
///
/// ```swift
/// let s3 = try MotoS3Server(bucket: "photos")
/// defer { s3.stop() }
/// // AWS_ACCESS_KEY_ID = s3.accessKeyID, AWS_SECRET_ACCESS_KEY = s3.secretAccessKey, endpoint s3.endpoint
/// let bytes = try s3.object("2026/a.jpg")
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

    /// Installs moto when missing, starts it, and sets up the user and the bucket.
    ///
    /// - Throws: when moto cannot be installed or does not start within 30 s.
    public init(bucket: String = "photos") throws {
        try Self.installIfMissing()
        self.bucket = bucket
        scratch = try TemporaryDirectory(prefix: "moto-s3")
        var started: (endpoint: String, keys: [String: String])?
        var lastError = ""
        // A free port can be taken before moto binds it: try a few.
        for _ in 0..<3 where started == nil {
            let port = try LoopbackPort.free()
            let stdin = Pipe()
            guard let candidate = try Self.startScript(["serve", String(port)], listeningOn: port, stdin: stdin, within: 30) else {
                lastError = "moto did not listen on port \(port)"
                continue
            }
            let endpoint = "http://127.0.0.1:\(port)"
            let setup = try TestCommand.run(["python3", Self.script, "setup", endpoint, bucket])
            guard setup.status == 0, let keys = try? JSONDecoder().decode([String: String].self, from: Data(setup.output.utf8)) else {
                kill(candidate.processIdentifier, SIGKILL)
                candidate.waitUntilExit()
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

    private var processBox: Process?

    deinit { stop() }

    /// The environment that signs as the IAM user.
    public var credentialsEnvironment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_SESSION_TOKEN": "",
         "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": ""]
    }

    /// An object's bytes, read back through the S3 API (boto3, signed).
    public func object(_ key: String) throws -> Data { try readObject(key, in: bucket) }

    /// The bucket's keys and sizes.
    public func objects() throws -> [String: Int] { try listObjects(in: bucket) }

    /// The multipart uploads in progress (`ListMultipartUploads`): their keys.
    public func multipartUploads() throws -> [String] { try listUploads(in: bucket) }

    /// Stops the server, reaps it, and removes its scratch folder.
    public func stop() {
        if let process = processBox, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        scratch.remove()
    }

    /// Starts `moto_s3.py ARGUMENTS` and waits until it accepts connections on `port`; `nil`
    /// (and the process reaped) when it does not within `seconds`.
    static func startScript(_ arguments: [String], script: String = MotoS3Server.script, listeningOn port: Int, stdin: Pipe,
                            within seconds: Double) throws -> Process? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, process.isRunning, !LoopbackPort.accepts(port) { usleep(20_000) }
        guard process.isRunning, LoopbackPort.accepts(port) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return nil
        }
        return process
    }

    /// `Resources/requirements-test.txt`: moto, boto3 and what they run on, pinned.
    static let requirements = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/requirements-test.txt").path

    /// Installs the pinned moto, boto3, botocore and their server's packages with pip when the
    /// installed versions differ (a moto other than the pinned one can refuse valid signatures);
    /// the tests that compare Flow's signatures with botocore's call it too.
    ///
    /// - Throws: when pip cannot install them.
    public static func installIfMissing() throws {
        try pinnedPackages.get()
    }

    /// Checked and installed once per process: tests start servers side by side, and two pips
    /// installing into the same folder at once break each other.
    private static let pinnedPackages: Result<Void, TestSupportError> = Result {
        let check = try TestCommand.run(["python3", "-c", MotoS3Server.versionCheck, requirements])
        if check.status == 0 { return }
        let installed = try TestCommand.run(["python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements])
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
    private let process: Process
    private let stdinPipe = Pipe()

    /// Starts the proxy.
    ///
    /// - Parameters:
    ///   - server: where requests go.
    ///   - failingParts: part numbers whose first try fails.
    ///   - failingAborts: how many multipart aborts, the first ones, fail with 500 InternalError.
    public init(in server: MotoS3Server, failingParts: [Int], failingAborts: Int = 0) throws {
        let port = try LoopbackPort.free()
        guard let started = try MotoS3Server.startScript(["proxy", String(port), server.endpoint, failingParts.map(String.init).joined(separator: ","),
                                                          String(failingAborts)],
                                                        listeningOn: port, stdin: stdinPipe, within: 10) else {
            throw TestSupportError("the S3 fault proxy did not start on port \(port)")
        }
        process = started
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
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
