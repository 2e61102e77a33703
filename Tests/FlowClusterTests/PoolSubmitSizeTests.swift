import Flow
import FlowCluster
import FlowWire
import Foundation
import Logging
import Testing

extension ClusterIntegrationTests {
    /// A task too large for the pool's frame limit fails at once with its size and what to do,
    /// where the pool would drop the run's connection at each try and the run would never end;
    /// the run's other tasks, in the same batch, still run on the pool's worker.
    @Suite struct PoolSubmitSize {
        @Test func aTaskOverThePoolsLimitFailsSayingSoAndTheOthersRun() async throws {
            try await withCluster { cluster in
                var poolConfiguration = FlowPool.Configuration(endpoint: "tcp://127.0.0.1:*")
                poolConfiguration.maximumInboundFrameSize = 64 << 10
                let pool = try FlowPool(configuration: poolConfiguration, logger: Logger(label: "pool"))
                try await withStarted(pool) { endpoint in
                    _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 4)
                    var configuration = FlowCoordinator.Configuration(endpoint: endpoint)
                    var connection = FlowCoordinator.PoolConnection(
                        endpoint: endpoint, hello: WireHello(clientName: "test", runID: "big-task", flowName: "big", origin: "test"))
                    connection.maximumSubmitSize = 64 << 10
                    configuration.pool = connection
                    let coordinator = try FlowCoordinator(configuration: configuration, logger: Logger(label: "client"))
                    try await withStarted(coordinator) { _ in
                        #expect(await coordinator.waitForWorkers(1, timeout: .seconds(10)))
                        let big = String(repeating: "x", count: 100 << 10)
                        let flow = Flow(definition: FlowDefinition(name: "big", bucket: ["items": ["a", .string(big), "c", "d"]], steps: [
                            .group(FlowGroupStep(op: "SimplePrintOp", input: "items", output: "out", maxConcurrent: 4, allowFailure: true)),
                        ])).setExecutor(coordinator)
                        let ran = Task { await flow.run() }
                        let ended = await withTaskGroup(of: Bool.self) { group in
                            group.addTask { await ran.value; return true }
                            group.addTask { try? await Task.sleep(for: .seconds(60)); return false }
                            defer { group.cancelAll() }
                            return await group.next() ?? false
                        }
                        #expect(ended, "the run did not end within 60 s: the oversized task kept the pool link busy")
                        let summary = flow.generateSummary()
                        #expect(summary.contains("more than the 65536 bytes one task may carry to a pool"), "\(summary.prefix(2000))")
                        let failures = summary.components(separatedBy: "DidFinish: withError").count - 1
                        #expect(failures == 1, "exactly the oversized element fails: \(summary)")
                        #expect(summary.contains("out: [\"a\", \"c\", \"d\"]"), "the other elements ran on the pool's worker")
                    }
                }
            }
        }
    }
}
