import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// The default settings against a store that refuses trailing checksums (the checksum proxy in
    /// its `pacific` mode, in front of moto), from real coordinator and worker processes (issue 47
    /// items 1 and 5): every file arrives byte-identical, the manifest records what the store can
    /// check (MD5 for a single PUT), `verify` passes, and every request says `User-Agent: flow/…`.
    @Suite struct S3DefaultChecksum {
        @Test func theDefaultsUploadToAStoreWithoutTrailingChecksumsAndVerify() async throws {
            try await S3Uploads.withS3 { s3, cluster in
                let proxy = try await S3ChecksumProxy.start(in: s3, pacific: true)
                defer { proxy.stop() }
                let folder = try S3Uploads.makeFolder(cluster, count: 20, bigFile: true)
                let flowFile = try cluster.write("s3.yaml", S3Uploads.flow(endpoint: proxy.endpoint, extra: "skipExisting: checksum"))
                let manifest = cluster.path("manifest.jsonl")
                let run = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment,
                                                  extra: ["--workers", "2", "--manifest", manifest])
                #expect(run.termination == .exit(0), "\(run.transcript)")
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    #expect(try await s3.object("2026/" + name) == Data(contentsOf: folder.appendingPathComponent(name)), "\(name)")
                }
                let said = run.stdoutLines.filter { $0.contains("does not take trailing checksums; sending Content-MD5 and a signed payload") }
                #expect((1...2).contains(said.count), "once per worker process at most: \(said)")
                #expect(!run.stdout.contains("changed on the way"), "\(run.stdout)")
                let entries = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n")
                #expect(entries.count == 21)
                #expect(entries.filter { $0.contains(#""algorithm":"md5""#) }.count == 20, "single PUTs record MD5: \(entries)")
                let runID = try #require(run.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                let verify = try cluster.start("flow-coordinator", ["verify", runID], label: "verify", extraEnvironment: s3.credentialsEnvironment)
                #expect(await verify.waitForExit(timeout: 120) == .exit(0), "\(verify.transcript)")
                let stats = try proxy.stats()
                #expect(stats["other_agents"] == 0 && (stats["flow_agents"] ?? 0) > 21, "\(stats)")

                // Again: the store keeps no CRC64NVME of a single PUT sent with Content-MD5, so
                // `skipExisting: checksum` compares size and modification time, saying so (issue 47
                // item 4), and sends none of the small files again.
                let again = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: s3.credentialsEnvironment,
                                                    extra: ["--workers", "1"])
                #expect(again.termination == .exit(0), "\(again.transcript)")
                #expect(again.stdoutLines.filter { $0.contains("keeps no crc64nvme checksum: skipExisting: checksum compares size and "
                                                               + "modification time there") }.count == 1, "\(again.stdout)")
                for index in 0..<20 {
                    #expect(again.stdout.contains(String(format: "skipped photo %02d.jpg: the store has it already", index)), "\(again.stdout)")
                }
                // At most the video's 4 parts go again (moto keeps a FULL_OBJECT CRC64NVME of its own
                // making for a multipart object, which is not the file's).
                let sentAgain = (try proxy.stats()["puts"] ?? 0) - (stats["puts"] ?? 0)
                #expect(sentAgain <= 4, "\(sentAgain) PUTs in the second run")
            }
        }

        /// `AWS_REQUEST_CHECKSUM_CALCULATION=when_required` on the machine that runs the ops: an
        /// upload whose flow names no checksum sends none, as the AWS SDKs then do (issue 47 item
        /// 2), so a store without trailing checksums is never asked for one.
        @Test func requestChecksumCalculationWhenRequiredSendsNone() async throws {
            try await S3Uploads.withS3 { s3, cluster in
                let proxy = try await S3ChecksumProxy.start(in: s3, pacific: true)
                defer { proxy.stop() }
                let folder = try S3Uploads.makeFolder(cluster, count: 5, bigFile: false)
                let flowFile = try cluster.write("s3.yaml", S3Uploads.flow(endpoint: proxy.endpoint))
                let manifest = cluster.path("manifest.jsonl")
                var environment = s3.credentialsEnvironment
                environment["AWS_REQUEST_CHECKSUM_CALCULATION"] = "when_required"
                let run = try await S3Uploads.run(cluster, flowFile, folder: folder, environment: environment, extra: ["--manifest", manifest])
                #expect(run.termination == .exit(0), "\(run.transcript)")
                #expect(try proxy.stats()["trailers_refused"] == 0)
                #expect(!run.stdout.contains("does not take trailing checksums"), "\(run.stdout)")
                let entries = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n")
                #expect(entries.count == 5 && entries.allSatisfy { $0.contains(#""algorithm":"none""#) }, "\(entries)")
            }
        }
    }
}
