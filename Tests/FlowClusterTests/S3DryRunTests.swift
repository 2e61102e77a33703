import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests.S3Uploads {
    /// `run --dry-run` to moto's S3: signed HEADs only, nothing stored, a multipart file counted
    /// in parts, and after a real run only the changed file would go.
    @Test func aDryRunToS3StoresNothingAndCountsWhatWouldGo() async throws {
        try await Self.withS3 { s3, cluster in
            let folder = try Self.makeFolder(cluster, count: 4, bigFile: true)
            let flowFile = try cluster.write("s3.yaml", Self.flow(endpoint: s3.endpoint, extra: "skipExisting: true"))
            let bytes = (0..<4).reduce(35 * 512 * 1024) { $0 + 900 + $1 * 53 }

            let first = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--dry-run"])
            #expect(first.termination == .exit(0), "\(first.transcript)")
            let (stored, begun) = (try await s3.objects(), try await s3.multipartUploads())
            #expect(stored.isEmpty && begun.isEmpty, "a dry run stored something")
            #expect(first.stdout.contains("Dry run: to send 5 files, \(bytes) bytes (17.5 MiB); skipped 0; "
                                          + "requests made HEAD 5, not made POST 2, PUT 8; steps not run 0."), "\(first.stdout)")

            let real = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment)
            #expect(real.termination == .exit(0), "\(real.transcript)")
            try Data(repeating: 1, count: 10).write(to: folder.appendingPathComponent("photo 00.jpg"))

            let second = try await Self.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment, extra: ["--dry-run"])
            #expect(second.termination == .exit(0), "\(second.transcript)")
            #expect(second.stdout.contains("Dry run: to send 1 file, 10 bytes; skipped 4; requests made HEAD 5, not made PUT 1;"), "\(second.stdout)")
            #expect(second.stdout.contains("    skipped video.mp4: exists with the same size (\(35 * 512 * 1024) bytes) at s3://photos/2026/video.mp4"),
                    "\(second.stdout)")
            #expect(try await s3.object("2026/photo 00.jpg") != Data(repeating: 1, count: 10), "the dry run sent the changed file")
        }
    }
}
