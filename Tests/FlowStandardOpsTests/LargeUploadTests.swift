import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

@Suite("UploadFileOp with a 200 MB file")
struct LargeUploadTests {
    static let size = 200 * 1024 * 1024

    @Test func largeFileIsStreamedAndArrivesIntact() async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory(prefix: "flow-large")
        defer { folder.remove() }
        let file = folder.file("large.bin")
        try PseudoRandomFile.write(to: file, size: Self.size)

        // Memory is checked where it can be measured alone: in a worker process
        // (FlowClusterTests, aWorkerStreamsA200MBUploadWithoutHoldingTheFile); this process runs
        // other suites at the same time.
        let result = try await runOperation("UploadFileOp", ["url": .string(server.url("/big"))], bucket: ["file": file.path])

        #expect(result.state == .successfully, "\(result.state)")
        #expect(result.bucket["url"] as? String == server.url("/big/large.bin"))
        let stored = server.storedFile("/big/large.bin")
        let sent = try await TestCommand.sha256sum(file.path)
        #expect(try await TestCommand.sha256sum(stored.path) == sent)
        let hashed = try await runOperation("HashFileOp", bucket: ["file": stored.path])
        #expect(hashed.bucket["sha256"] as? String == sent)
        try? FileManager.default.removeItem(at: stored)
    }
}
