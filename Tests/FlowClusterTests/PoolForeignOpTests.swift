import FlowWire
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// A flow whose op only a worker of another make offers (built with its own registry, or in
    /// another language) runs on a pool as it runs with `--bind`: `run --pool` once refused it
    /// as an `unknown op` (exit 2), though §14.4 says such a task waits at the pool for a worker
    /// that offers it.
    @Suite struct PoolForeignOp {
        @Test func aRunOnAPoolTakesAnOpOnlyAnotherWorkerOffers() async throws {
            try await withCluster { cluster in
                let (_, endpoint) = try await PoolTests.startPool(cluster)
                let file = try cluster.write("foreign.yaml", """
                    flow: foreign
                    steps:
                      - op: ForeignOp
                        with: {answer: 42}
                    """)
                let run = try PoolTests.run(cluster, file, pool: endpoint, label: "run")
                // The worker that offers it joins after the run started: the task waits at the pool.
                let ran = try await Self.offThread { () throws -> [String] in
                    let worker = try RawWorker(endpoint: endpoint, name: "foreign", slots: 1, ops: ["ForeignOp"])
                    defer { worker.close() }
                    guard let tasks = try worker.nextTasksBlocking(timeout: 60) else { return [] }
                    for task in tasks { try worker.send(.result([RawWorker.result(for: task)])) }
                    return tasks.map(\.op)
                }
                #expect(ran == ["ForeignOp"], "\(run.transcript)")
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                #expect(!run.stderr.contains("unknown op"), "\(run.transcript)")
            }
        }

        /// Runs blocking work on a thread of its own, so that no cooperative thread waits for it.
        static func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try work() }) }.start()
            }
        }
    }
}
