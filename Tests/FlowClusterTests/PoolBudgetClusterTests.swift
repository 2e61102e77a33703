import FlowTestSupport
import Foundation
import Testing

/// A run through a pool is held to its group's `bytesPerSecond` (issue 38, PROTOCOL.md §15.2
/// "Pools"): the pool takes the run's budget and RATE, divides it among its own workers and relays
/// their PROGRESS to the run.
@Suite struct PoolBudgetClusterTests {
    /// 64 files of 256 KiB (16 MiB) at 4 MiB/s through a pool with 2 workers of 8 slots: about
    /// 4 s by nginx's clock (unlimited, well under a second); never much faster than the limit,
    /// both pool workers took part, and `status` of the run counted the bytes the pool relayed.
    @Test func aRunThroughAPoolIsHeldToItsBytesBudgetAcrossThePoolsWorkers() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let (pool, endpoint) = try await PoolTests.startPool(cluster)
            for index in 1...2 { _ = try cluster.worker(connect: endpoint, name: "w\(index)", concurrency: 8) }
            let folder = try GroupLimitClusterTests.makeFolder(cluster, count: 64, size: ByteBudgetClusterTests.fileSize)
            // Held after the uploads until `status` counted them all (RunControlTests.gateStep).
            let gate = cluster.path("counted")
            let flow = GroupLimitClusterTests.uploadFlow(maxConcurrent: 16,
                                                         extra: "      limit: {bytesPerSecond: 4MiB}\n" + RunControlTests.gateStep(gate))
            let file = try cluster.write("limited.yaml", flow)
            let run = try PoolTests.run(cluster, file, pool: endpoint, label: "run",
                                        extra: ["--set", "folder=\(folder.path)", "--set", "uploadURL=\(server.url("/p"))",
                                                "--summary", cluster.path("summary.txt")])
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            let total = 64 * ByteBudgetClusterTests.fileSize
            let (status, failures) = await RunControlTests.pollStatus(cluster, id, run: run) {
                RunControlTests.firstLimit($0, "bytesSent") >= total
            }
            try Data().write(to: URL(fileURLWithPath: gate))
            #expect(RunControlTests.firstLimit(status, "bytesSent") >= total, "status counts the bytes the pool relayed: \(status)\n\(failures)")
            #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript)\n\(pool.transcript)")
            let (puts, rate) = ByteBudgetClusterTests.serverRate(server)
            try #require(puts == 64, "\(puts) PUTs logged")
            let limit = 4.0 * 1_048_576
            #expect(rate <= limit * 1.3, "\(rate / 1_048_576) MiB/s")
            #expect(rate >= limit * 0.5, "\(rate / 1_048_576) MiB/s: far below the limit")
            #expect(!run.stderr.contains("not enforced"), "\(run.stderr)")
            let summary = try String(contentsOfFile: cluster.path("summary.txt"), encoding: .utf8)
            for name in ["w1", "w2"] { #expect(summary.contains("@ \(name)]"), "\(name) ran none: \(summary)") }
        }
    }

    /// The requests rate through a pool: 9 multipart uploads of 3 parts to moto at 4 requests a
    /// second, through a pool with 2 workers of 2 slots: about 9 s of starts and parts by the
    /// proxy's clock, as on a coordinator's own workers (`RequestBudgetClusterTests`).
    @Test func aRunThroughAPoolIsHeldToItsRequestsBudgetPartsIncluded() async throws {
        let s3 = try await MotoS3Server.start()
        defer { s3.stop() }
        let proxy = try await S3ResumeProxy.start(in: s3)
        defer { proxy.stop() }
        try await withCluster { cluster in
            let (pool, endpoint) = try await PoolTests.startPool(cluster)
            for index in 1...2 {
                _ = try cluster.start("flow-worker", ["--connect", endpoint, "--name", "w\(index)", "--concurrency", "2"] + ClusterScope.fastHeartbeat,
                                      label: "w\(index)", extraEnvironment: s3.credentialsEnvironment)
            }
            let folder = cluster.directory.appendingPathComponent("files")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for index in 0..<RequestBudgetClusterTests.fileCount {
                try PseudoRandomFile.write(to: folder.appendingPathComponent("f-\(index).bin"), size: RequestBudgetClusterTests.fileSize)
            }
            let file = try cluster.write("parts.yaml", RequestBudgetClusterTests.flow(endpoint: proxy.endpoint))
            let run = try PoolTests.run(cluster, file, pool: endpoint, label: "run", extra: ["--set", "folder=\(folder.path)"])
            #expect(await run.waitForExit(timeout: 180) == .exit(0), "\(run.transcript)\n\(pool.transcript)")
            let stats = try proxy.stats()
            let parts = RequestBudgetClusterTests.fileCount * RequestBudgetClusterTests.partsPerFile
            try #require(stats.creates == RequestBudgetClusterTests.fileCount && stats.partPuts == parts, "\(stats)")
            let rate = RequestBudgetClusterTests.rate(stats.requestTimes)
            #expect(rate <= 4 * 1.3, "\(rate) requests a second (starts and parts) against a limit of 4")
            #expect(rate >= 4 * 0.5, "\(rate) requests a second: far below the limit of 4")
        }
    }
}
