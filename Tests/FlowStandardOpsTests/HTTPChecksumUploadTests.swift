import Flow
import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

/// `checksum` on HTTP uploads: computed while the file is streamed to nginx and recorded in the
/// op's `manifest {…}` line (an HTTP server has no header to check it against a streamed body).
@Suite("UploadFileOp checksums over HTTP")
struct HTTPChecksumUploadTests {
    @Test(arguments: [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5, .none])
    func theManifestLineHoldsTheChecksumOfWhatWasSent(_ checksum: UploadChecksum) async throws {
        let server = try NginxServer()
        try await server.start()
        let folder = try TemporaryDirectory()
        let file = folder.file("clip.bin")
        try PseudoRandomFile.write(to: file, size: 2 * 1024 * 1024 + 99)
        let bytes = try Data(contentsOf: file)
        let flow = await runFlow(bucket: ["files": strings([file.path])], steps: [
            group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 2,
                  ["url": .string(server.url("/uploads/")), "checksum": .string(checksum.rawValue)]),
        ])
        #expect(flow.isSuccess, "\(flow.errorText)")
        #expect(try Data(contentsOf: server.storedFile("/uploads/clip.bin")) == bytes)
        let entries = flow.lines.compactMap { line in line.range(of: UploadManifestEntry.logPrefix).flatMap {
            UploadManifestEntry(logLine: String(line[$0.lowerBound...]))
        } }
        #expect(entries.count == 1, "\(flow.lines)")
        let entry = try #require(entries.first)
        #expect(entry.target == server.url("/uploads/clip.bin"))
        #expect(entry.size == Int64(bytes.count))
        #expect(entry.algorithm == checksum.rawValue)
        #expect(entry.checksum == checksum.base64(of: bytes))
    }

    @Test func anUnknownChecksumIsRefusedNamingTheChoices() async throws {
        let flow = await runFlow(bucket: ["files": strings(["/nonexistent"])], steps: [
            group("UploadFileOp", input: "files", output: "urls", maxConcurrent: 1,
                  ["url": .string("http://127.0.0.1:9/"), "checksum": .string("crc99")]),
        ])
        #expect(!flow.isSuccess)
        #expect(flow.errorText.contains("checksum"), "\(flow.errorText)")
    }
}
