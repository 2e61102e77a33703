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

    /// Starts the proxy in front of `server`.
    public init(in server: MotoS3Server) throws {
        let port = try LoopbackPort.free()
        guard let process = try MotoS3Server.startScript([String(port), server.endpoint], script: Self.script, listeningOn: port, stdin: stdinPipe,
                                                          within: 10) else {
            throw TestSupportError("the S3 checksum proxy did not start on port \(port)")
        }
        self.process = process
        endpoint = "http://127.0.0.1:\(port)"
    }

    deinit { stop() }

    /// `puts`, `corrupted`, `refused` and `forwarded` requests so far.
    public func stats() throws -> [String: Int] {
        try JSONDecoder().decode([String: Int].self, from: Data(contentsOf: URL(string: endpoint + "/_proxy_stats")!))
    }

    /// Stops the proxy and reaps it.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
