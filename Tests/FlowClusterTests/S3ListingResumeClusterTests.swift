import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A run whose `ListObjectsOp` fed a group and was killed goes on listing, when resumed, from
    /// the page its journal names instead of listing the prefix again (issue 49), from real
    /// coordinator and worker processes against moto.
    @Suite struct S3ListingResume {
        /// The keys of the elements the log's lines (each element's JSON text) name, in order.
        static func keys(in log: String) throws -> [String] {
            try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return object?["key"] as? String ?? "?"
            }
        }

        @Test(arguments: [1, 4])
        func aKilledListingGoesOnFromItsLastPageWhenResumed(concurrency: Int) async throws {
            try await S3Uploads.withS3 { s3, cluster in
                let folder = try S3Uploads.makeFolder(cluster, count: 30, bigFile: false)
                // Two folders below 2026/, so that four paginators list them apart.
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("a"), withIntermediateDirectories: true)
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("b"), withIntermediateDirectories: true)
                for index in 0..<10 {
                    for sub in ["a", "b"] {
                        try Data("\(sub) \(index)".utf8).write(to: folder.appendingPathComponent("\(sub)/part \(index).txt"))
                    }
                }
                let upload = try await S3Uploads.run(cluster, try cluster.write("s3.yaml", S3Uploads.flow(endpoint: s3.endpoint)
                    .replacingOccurrences(of: "with: {path: \"${folder}\"}", with: "with: {path: \"${folder}\", recursive: true}")),
                                                     folder: folder, environment: s3.credentialsEnvironment)
                #expect(upload.termination == .exit(0), "\(upload.transcript)")
                #expect(try await s3.objects().count == 50)

                // Each element's key goes to a log and announces its start on a FIFO; the run is
                // killed once 22 have started, one at a time, from pages of 5 keys.
                let log = cluster.path("keys.log")
                let starts = try ElementStarts(cluster.path("starts.fifo"))
                defer { starts.close() }
                let flowFile = try cluster.write("list.yaml", """
                    flow: s3-list
                    steps:
                      - op: ListObjectsOp
                        with: {url: "s3://photos/2026/", endpoint: "\(s3.endpoint)", concurrency: \(concurrency), pageSize: 5}
                      - group:
                          op: ShellOp
                          input: objects
                          output: seen
                          maxConcurrent: 1
                          with: {shell: true, command: "echo \\"$1\\" >> '\(log)'; echo x >> '\(starts.path)'; sleep 0.02"}
                    """)
                let killed = try cluster.start("flow-coordinator", ["run", flowFile, "--workers", "1"], label: "killed",
                                               extraEnvironment: s3.credentialsEnvironment)
                let runID = try await killed.killAfterStarts(starts, count: 22)
                let before = try Self.keys(in: log)
                #expect(before.count < 50, "the run finished before the kill")

                let resumed = try cluster.start("flow-coordinator", ["resume", runID, "--workers", "1"], label: "resume",
                                                extraEnvironment: s3.credentialsEnvironment)
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript.suffix(3000))")
                #expect(resumed.stdout.contains("listing s3://photos/2026/ goes on where the run's earlier life left it"),
                        "\(resumed.stdout.suffix(3000))")
                // The resumed listing gave fewer objects than the prefix holds: it did not start over.
                let listed = try #require(resumed.stdout.firstMatch(of: /listed ([0-9]+) objects/)?.1).description
                #expect((Int(listed) ?? 50) < 50 && (Int(listed) ?? 0) >= 50 - before.count, "listed \(listed) after \(before.count) had started")
                // Every object ran, and the group's output holds all 50 (the first life's from the journal).
                let all = try Self.keys(in: log)
                #expect(all.allSatisfy { $0.hasPrefix("2026/") }, "\(all)")
                #expect(Set(all).count == 50, "\(Set(all).count) distinct keys ran")
                // Again only what the journal did not hold: the element in flight at the kill,
                // and those whose results were in the journal's last unwritten batch (at most
                // 100 ms of them; each element takes at least 20 ms).
                #expect(all.count - 50 <= 6, "\(all.count - 50) ran twice")
                #expect(resumed.stdout.contains("output size: 50"), "\(resumed.stdout.suffix(2000))")
            }
        }
    }
}
