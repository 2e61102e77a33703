import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

/// `caFile`: an HTTPS server whose certificate a private authority signed (here the server's own
/// self-signed one, which is its own authority), trusted for the op that names it and for no other.
@Suite("UploadFileOp with caFile")
struct UploadCertificateAuthorityTests {
    func file(_ name: String = "photo.bin", size: Int = 300_000) throws -> (TemporaryDirectory, String, Data) {
        let folder = try TemporaryDirectory()
        let bytes = PatternBytes.make(count: size, multiplier: 31, offset: 7)
        let url = folder.file(name)
        try bytes.write(to: url)
        return (folder, url.path, bytes)
    }

    /// The stream from disk, the `HEAD` of `skipExisting` and the bytes a coordinator sent all go
    /// through the trusted connection; without `caFile` the same server is refused.
    @Test func aServerSignedByTheGivenAuthorityIsTrusted() async throws {
        let certificate = try await SelfSignedCertificate()
        let server = try await FaultyHTTPServer.start(tls: certificate)
        defer { server.stop() }
        let (folder, path, bytes) = try file()
        defer { withExtendedLifetime(folder) {} }

        let streamed = try await runOperation("UploadFileOp", ["url": .string(server.url("/up")), "caFile": .string(certificate.certificate),
                                                               "skipExisting": .bool(true)], bucket: ["file": path])
        #expect(streamed.state == .successfully, "\(streamed.state)")
        #expect(try Data(contentsOf: server.storedFile("/up/photo.bin")) == bytes)

        let element = try UploadFileSource.coordinatorElement(forPath: path)
        let sent = try await runOperation("UploadFileOp", ["url": .string(server.url("/again")), "caFile": .string(certificate.certificate)],
                                          bucket: ["file": element])
        #expect(sent.state == .successfully, "\(sent.state)")
        #expect(try Data(contentsOf: server.storedFile("/again/photo.bin")) == bytes)

        let without = try await runOperation("UploadFileOp", ["url": .string(server.url("/not"))], bucket: ["file": path])
        guard case .withError(let text) = without.state else {
            Issue.record("without caFile the server must not be trusted: \(without.state)")
            return
        }
        #expect(text.hasSuffix("or name it in the op's caFile parameter"), "\(text)")
    }

    /// A CA file that cannot be used fails the op at once, by name, and is not retried; a named
    /// pipe is refused rather than waited on.
    @Test func anUnusableCAFileFailsAtOnceByName() async throws {
        let server = try await FaultyHTTPServer.start(tls: try await SelfSignedCertificate())
        defer { server.stop() }
        let (folder, path, _) = try file()
        defer { withExtendedLifetime(folder) {} }
        let notPEM = folder.file("ca.txt")
        try Data("this is no certificate\n".utf8).write(to: notPEM)
        let pipe = folder.file("ca.pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let watchdog = PipeWriterWatchdog(pipe.path, every: 20)
        defer { watchdog.stop() }
        let missing = folder.file("missing.pem").path
        let cases: [(String, String)] = [
            (missing, "caFile: cannot read \(missing): No such file or directory"),
            (notPEM.path, "caFile: \(notPEM.path) holds no PEM certificate (-----BEGIN CERTIFICATE----- ...)"),
            (pipe.path, "caFile: cannot read \(pipe.path): it is a named pipe, not a file"),
            (folder.path, "caFile: cannot read \(folder.path): it is a folder"),
        ]
        for (caFile, says) in cases {
            let result = try await runOperation("UploadFileOp", ["url": .string(server.url("/up")), "caFile": .string(caFile)],
                                                bucket: ["file": path])
            #expect(result.state == .withError(says), "\(caFile)")
            #expect(result.isPermanentFailure, "\(caFile)")
        }
        #expect(!FileManager.default.fileExists(atPath: server.storedFile("/up/photo.bin").path))
    }

    @Test func anEmptyCAFileParameterIsRefusedAndAGivenOneTravelsToWorkers() throws {
        #expect(throws: FlowParameterError.self) {
            _ = try FlowOperationRegistry.standard.makeOperation(named: "UploadFileOp", parameters: ["url": "https://h/up", "caFile": ""])
        }
        let operation = try FlowOperationRegistry.standard.makeOperation(
            named: "UploadFileOp", parameters: ["url": "https://h/up", "caFile": "/etc/flow/ca.pem"])
        #expect((operation as? any FlowRemoteOperation)?.remoteParameters["caFile"] == .string("/etc/flow/ca.pem"))
        let s3 = try FlowOperationRegistry.standard.makeOperation(
            named: "UploadFileOp", parameters: ["url": "s3://bucket/p", "endpoint": "https://minio:9000", "caFile": "/etc/flow/ca.pem"])
        #expect((s3 as? any FlowRemoteOperation)?.remoteParameters["caFile"] == .string("/etc/flow/ca.pem"))
    }
}
