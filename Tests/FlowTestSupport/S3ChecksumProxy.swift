import Foundation

/// A proxy in front of a ``MotoS3Server`` that checks upload checksums as S3 does (moto keeps them
/// without recomputing them) and flips one byte of the first try of every object and part `PUT`,
/// so that each is refused with 400 `BadDigest` once and then goes through:
/// `Resources/s3_checksum_proxy.py`.
public final class S3ChecksumProxy: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`: the endpoint to give the op.
    public let endpoint: String
    private let process: Process
    private let stdinPipe = Pipe()

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/s3_checksum_proxy.py").path

    /// Starts the proxy in front of `server` and waits for its readiness line on a thread of its
    /// own (``TestCommand/offThread(_:)``), the caller's task suspended meanwhile.
    ///
    /// - Parameters:
    ///   - pacific: be a store that refuses trailing checksums as Ceph RGW 16 does (400
    ///     `XAmzContentSHA256Mismatch` to `STREAMING-UNSIGNED-PAYLOAD-TRAILER`), flipping no byte.
    ///   - b2: be a store that refuses every checksum header as Backblaze B2 does (400
    ///     `InvalidArgument: Unsupported header '…'`), flipping no byte.
    /// - Throws: when it does not print its readiness line within 10 s, with its output.
    public static func start(in server: MotoS3Server, pacific: Bool = false, b2: Bool = false) async throws -> S3ChecksumProxy {
        try await TestCommand.offThread { try S3ChecksumProxy(in: server, pacific: pacific, b2: b2) }
    }

    /// What ``start(in:pacific:b2:)`` runs on its own thread.
    private init(in server: MotoS3Server, pacific: Bool, b2: Bool) throws {
        let port = try LoopbackPort.free()
        let mode = pacific ? ["pacific"] : b2 ? ["b2"] : []
        guard let process = try MotoS3Server.startScript([String(port), server.endpoint] + mode, script: Self.script,
                                                          listeningOn: port, stdin: stdinPipe,
                                                          within: 10) else {
            throw TestSupportError("the S3 checksum proxy did not start on port \(port)")
        }
        self.process = process
        endpoint = "http://127.0.0.1:\(port)"
    }

    deinit { stop() }

    /// `puts`, `corrupted`, `refused`, `forwarded` and `trailers_refused` requests so far, and
    /// `flow_agents` and `other_agents`: requests with and without `User-Agent: flow/…`.
    public func stats() throws -> [String: Int] {
        try JSONDecoder().decode([String: Int].self, from: Data(contentsOf: URL(string: endpoint + "/_proxy_stats")!))
    }

    /// Stops the proxy and waits until it has exited.
    public func stop() {
        ProcessLaunch.kill(process)
    }
}
