import Foundation
import Testing

extension ClusterIntegrationTests {
    /// A step's `timeout` travels in the TASK; the worker's state machine stops the op at it.
    @Suite struct TimeLimitsOnWorkers {
        @Test func aWorkerStopsAnOpAtItsStepsTimeoutAndTheRetryRunsToo() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("limit.yaml", """
                    flow: limits
                    bucket: {items: [a, b]}
                    steps:
                      - group: {op: SleepOp, input: items, output: outs, maxConcurrent: 2,
                                timeout: 0.3, retry: {attempts: 2, delay: 0.01}, with: {ms: 20000}}
                    """)
                let started = ContinuousClock.now
                let coordinator = try cluster.coordinator(["run", file, "--workers", "2", "--concurrency", "2"])
                let end = await coordinator.waitForExit(timeout: 60)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(ContinuousClock.now - started < .seconds(15), "each try sleeps 20 s; the limit must stop it")
                let summary = coordinator.stdout
                #expect(summary.contains("attempt 1 of 2 failed: time limit of 300 ms exceeded; retrying in "), "\(summary)")
                #expect(summary.contains("DidFinish: withError: time limit of 300 ms exceeded"), "\(summary)")
                #expect(summary.contains("@ worker-"), "the ops ran on workers\n\(summary)")
            }
        }
    }
}
