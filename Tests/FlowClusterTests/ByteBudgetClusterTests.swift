import FlowTestSupport
import Foundation
import Testing

/// A group's `bytesPerSecond` across real worker processes (issue 38, PROTOCOL.md §15): the bytes
/// nginx took, by nginx's clock, stay near the limit whatever the number of workers, and `limit`
/// from another terminal changes it while the run goes on.
@Suite struct ByteBudgetClusterTests {
    static let fileSize = 256 * 1024

    /// The bytes a second nginx took between its first and last PUT (each PUT one file, logged at
    /// its end), not counting the first.
    static func serverRate(_ server: NginxServer) -> (puts: Int, rate: Double) {
        let times = server.accessLog().filter { $0.method == "PUT" && $0.status < 300 }.compactMap(\.time).sorted()
        guard times.count > 1 else { return (times.count, 0) }
        return (times.count, Double((times.count - 1) * fileSize) / max(0.001, times.last! - times.first!))
    }

    /// 96 files of 256 KiB (24 MiB) at 4 MiB/s on 3 workers of 8 slots: about 6 s by nginx's
    /// clock, where unlimited they take well under a second; never much faster than the limit over
    /// the run, every worker took part, `status` counted the bytes, and the run no longer says the
    /// limit is not enforced.
    @Test func theBytesBudgetHoldsAcrossThreeWorkers() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let folder = try GroupLimitClusterTests.makeFolder(cluster, count: 96, size: Self.fileSize)
            // Held after the uploads until `status` counted them all (RunControlTests.gateStep).
            let gate = cluster.path("counted")
            let flow = GroupLimitClusterTests.uploadFlow(maxConcurrent: 24,
                                                         extra: "      limit: {bytesPerSecond: 4MiB}\n" + RunControlTests.gateStep(gate))
            let run = try await GroupLimitClusterTests.start(cluster, flow: flow, folder: folder, url: server.url("/b"), workers: 3)
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            let total = 96 * Self.fileSize
            let (status, failures) = await RunControlTests.pollStatus(cluster, id, run: run) {
                RunControlTests.firstLimit($0, "bytesSent") >= total
            }
            try Data().write(to: URL(fileURLWithPath: gate))
            #expect(RunControlTests.firstLimit(status, "bytesSent") >= total, "status counts the bytes sent: \(status)\n\(failures)")
            #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript)")
            let (puts, rate) = Self.serverRate(server)
            try #require(puts == 96, "\(puts) PUTs logged")
            let limit = 4.0 * 1_048_576
            #expect(rate <= limit * 1.3, "\(rate / 1_048_576) MiB/s")
            #expect(rate >= limit * 0.5, "\(rate / 1_048_576) MiB/s: far below the limit")
            #expect(!run.stderr.contains("not enforced"), "\(run.stderr)")
            let summary = try String(contentsOfFile: cluster.path("summary.txt"), encoding: .utf8)
            for name in ["w1", "w2", "w3"] { #expect(summary.contains("@ \(name)]"), "\(name) ran none") }
        }
    }

    /// A run held to 1 MiB/s (100 files of 256 KiB would take 25 s) is lifted from another
    /// terminal (`limit --bytes-per-second off`) after a second or two: it ends within seconds.
    @Test func aBytesLimitChangedWhileRunningTakesEffect() async throws {
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try await withCluster { cluster in
            let folder = try GroupLimitClusterTests.makeFolder(cluster, count: 100, size: Self.fileSize)
            // The uploads start once the test can steer the run (a loaded machine's first `status`
            // took long enough for half of them to go).
            let gate = cluster.path("steerable")
            let flow = GroupLimitClusterTests.uploadFlow(maxConcurrent: 8, extra: "      limit: {bytesPerSecond: 1MiB}\n",
                                                         before: RunControlTests.gateStep(gate))
            let run = try await GroupLimitClusterTests.start(cluster, flow: flow, folder: folder, url: server.url("/c"), workers: 2)
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            try Data().write(to: URL(fileURLWithPath: gate))
            try await Task.sleep(for: .seconds(2))
            let before = Self.serverRate(server).puts
            #expect(before < 50, "\(before) uploads before the limit was lifted")
            let lifted = try await RunControlTests.command(cluster, ["limit", id, "--step", "UploadFileOp", "--bytes-per-second", "off"])
            let liftedAt = Date()
            #expect(lifted.termination == .exit(0), "\(lifted.transcript)")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(Date().timeIntervalSince(liftedAt) < 15, "the rest took \(Date().timeIntervalSince(liftedAt)) s")
            #expect(Self.serverRate(server).puts == 100)
        }
    }
}
