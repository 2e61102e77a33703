import FlowTestSupport
import Foundation
import Testing

/// Numbers from outside never crash a process (issue 46 item 1): a server answering `503` with
/// `Retry-After: 99999999999999999` once crashed every worker that read it (a trap converting the
/// wait to milliseconds), one after another, until none was left.
@Suite struct HostileAnswerTests {
    /// Every file's first two tries get that answer; the step's third try stores it. The wait is
    /// the step's `maxDelay`, both workers are still running at the end, and every file is stored.
    @Test func anEndlessRetryAfterIsCappedAndKillsNoWorker() async throws {
        let server = try await FaultyHTTPServer.start(rules: [.init(kind: "503", first: 2, retryAfter: 99_999_999_999_999_999)])
        defer { server.stop() }
        try await withCluster { cluster in
            let folder = try GroupLimitClusterTests.makeFolder(cluster, count: 6)
            let flow = GroupLimitClusterTests.uploadFlow(maxConcurrent: 4, extra: "      retry: {attempts: 3, delay: 0.05, maxDelay: 0.2}\n")
            let flowFile = try cluster.write("hostile.yaml", flow)
            let coordinator = try cluster.coordinator(["run", flowFile, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                       "--set", "folder=\(folder.path)", "--set", "uploadURL=\(server.url("/h"))"]
                                                      + ClusterScope.fastHeartbeat)
            let endpoint = try await coordinator.listeningEndpoint()
            let workers = try (1...2).map { try cluster.worker(connect: endpoint, name: "w\($0)", concurrency: 4) }
            #expect(await coordinator.waitForExit(timeout: 120) == .exit(0), "\(coordinator.transcript)")
            let stats = try server.stats()
            #expect(stats.stored.count == 6, "\(stats.stored)")
            #expect(stats.status["503"] == 12, "\(stats.status)")
            for worker in workers {
                #expect(worker.termination == nil || worker.termination == .exit(0), "\(worker.transcript)")
                #expect(!worker.stderr.contains("Fatal error") && !worker.stderr.contains("crashed"), "\(worker.transcript)")
            }
        }
    }
}
