import FlowStandardOps
import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests.S3Uploads {
    /// `run --manifest FILE --json FILE` of an upload to S3 (moto) from real processes: one JSON
    /// line per object with its size, the default CRC64NVME checksum of its bytes, its ETag and its
    /// target; the same lines are in the `--json` report and in the journal.
    @Test func theManifestTheReportAndTheJournalHoldEachObjectsSizeChecksumAndETag() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeFolder(cluster, count: 4, bigFile: true)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint))
            let manifestPath = cluster.path("manifest.jsonl")
            let reportPath = cluster.path("report.json")
            let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment,
                                         extra: ["--manifest", manifestPath, "--json", reportPath])
            #expect(run.termination == .exit(0), "\(run.transcript)")
            let lines = try String(contentsOfFile: manifestPath, encoding: .utf8).split(separator: "\n")
            let entries = try lines.map { try JSONDecoder().decode(UploadManifestEntry.self, from: Data($0.utf8)) }
            #expect(entries.count == 5, "\(lines)")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            for name in names {
                let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
                let entry = try #require(entries.first { $0.target == "s3://photos/2026/\(name)" }, "\(name) is not in the manifest")
                #expect(entry.size == Int64(bytes.count))
                #expect(entry.algorithm == "crc64nvme")
                #expect(entry.etag?.isEmpty == false)
                if name == "video.mp4" {
                    // A multipart upload's FULL_OBJECT CRC64NVME is the store's to say; moto says none.
                    #expect(entry.etag?.hasSuffix("-4\"") == true)
                } else {
                    #expect(entry.checksum == UploadChecksum.crc64nvme.base64(of: bytes))
                }
            }
            let report = try String(contentsOfFile: reportPath, encoding: .utf8)
            // Each op's log lines, and the summary's text, both hold them.
            #expect(report.components(separatedBy: "manifest {").count - 1 >= 5, "the --json report lacks the manifest lines")
            for entry in entries {
                let escaped = entry.json.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                #expect(report.contains(escaped), "the --json report lacks \(entry.json)")
            }
            var journalHasThem = false
            let enumerator = FileManager.default.enumerator(at: cluster.directory, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                // The journal and its write-ahead log.
                guard url.lastPathComponent.contains(".sqlite") else { continue }
                let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
                if text.contains("manifest {") && text.contains("s3://photos/2026/photo 01.jpg") { journalHasThem = true }
            }
            #expect(journalHasThem, "no journal holds the manifest lines")
        }
    }
}

extension ClusterIntegrationTests.S3Uploads {
    /// Every object `PUT` and part `PUT` has a byte flipped on its first try by a proxy that checks
    /// checksums as S3 does: each is refused with `BadDigest` for its checksum (CRC64NVME, CRC32C,
    /// SHA-256, or Content-MD5), said so, sent again
    /// under the step's `retry` (parts alone), and every object arrives byte-identical.
    @Test(arguments: [UploadChecksum.crc64nvme, .crc32c, .sha256, .md5])
    func aBodyCorruptedOnTheWayIsRefusedForItsChecksumAndSentAgain(_ checksum: UploadChecksum) async throws {
        try await Self.withS3 { s3, cluster in
            let proxy = try await S3ChecksumProxy.start(in: s3)
            defer { proxy.stop() }
            let folder = try Self.makeFolder(cluster, count: 3, bigFile: true)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: proxy.endpoint, extra: "checksum: \(checksum.rawValue)",
                                                                  retry: "{attempts: 3, delay: 0.05}"))
            let run = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
            #expect(run.termination == .exit(0), "\(run.transcript)")
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                #expect(try await s3.object("2026/" + name) == Data(contentsOf: folder.appendingPathComponent(name)), "\(name)")
            }
            let stats = try proxy.stats()
            // 3 small files and 4 parts, each corrupted and refused once.
            #expect(stats["corrupted"] == 7 && stats["refused"] == 7, "\(stats)")
            let name = checksum.s3Name ?? "MD5"
            #expect(run.stdout.contains("the store refused the body because its \(name) checksum did not match"), "\(run.stdout)")
            #expect(run.stdout.contains("part 1 of 4 failed (try 1 of 3)"), "\(run.stdout)")
        }
    }
}
