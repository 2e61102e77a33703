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
        try server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let (pool, endpoint) = try await PoolTests.startPool(cluster)
            for index in 1...2 { _ = try cluster.worker(connect: endpoint, name: "w\(index)", concurrency: 8) }
            let folder = try GroupLimitClusterTests.makeFolder(cluster, count: 64, size: ByteBudgetClusterTests.fileSize)
            let flow = GroupLimitClusterTests.uploadFlow(maxConcurrent: 16, extra: "      limit: {bytesPerSecond: 4MiB}\n")
            let file = try cluster.write("limited.yaml", flow)
            let run = try PoolTests.run(cluster, file, pool: endpoint, label: "run",
                                        extra: ["--set", "folder=\(folder.path)", "--set", "uploadURL=\(server.url("/p"))",
                                                "--summary", cluster.path("summary.txt")])
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            try await Task.sleep(for: .seconds(2))
            let status = try await RunControlTests.status(cluster, id)
            let sent = ((status["limits"] as? [[String: Any]])?.first?["bytesSent"] as? Int) ?? 0
            #expect(sent > 0, "status counts the bytes the pool relayed: \(status)")
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
}
