import Flow
import FlowCluster
import Foundation
import Logging
import Testing

extension ClusterIntegrationTests {
    /// The cluster names no op: what the coordinator does before dispatch comes from each op's
    /// registry entry, and a user's own entry can ask for the same.
    @Suite struct OpsPrepareTheirOwnTasks {
        /// A coordinator used as a Swift blueprint's executor, with a stock `flow-worker`.
        func runOnCluster(_ registry: FlowOperationRegistry, _ definition: FlowDefinition) async throws -> Flow {
            try await withCluster { cluster in
                var configuration = FlowCoordinator.Configuration(endpoint: cluster.ipcEndpoint("c.sock"))
                configuration.registry = registry
                let coordinator = try FlowCoordinator(configuration: configuration, logger: Logger(label: "test"))
                return try await withStarted(coordinator) { endpoint in
                    _ = try cluster.worker(connect: endpoint, name: "w1")
                    #expect(await coordinator.waitForWorkers(1, timeout: .seconds(10)))
                    let flow = Flow(definition: definition).setExecutor(coordinator)
                    await flow.run()
                    return flow
                }
            }
        }

        @Test func aUsersEntryPreparesTheInputBeforeItLeavesForAWorker() async throws {
            // The worker's SleepOp passes its item through; the coordinator's entry for it
            // upper-cases the item first, so the output shows the preparation ran, once each.
            var registry = FlowOperationRegistry()
            registry.register("SleepOp", primaryInputParamKey: "item", primaryOutputParamKey: "item",
                              prepareInput: { _, input in .string((input.stringValue ?? "?").uppercased()) }) { _ in
                FlowClosureOperation(name: "SleepOp") { _ in }
            }
            let definition = FlowDefinition(name: "prep", bucket: ["items": ["a", "b", "c"]], steps: [
                .group(FlowGroupStep(op: "SleepOp", input: "items", output: "outs", maxConcurrent: 3)),
            ])
            let flow = try await runOnCluster(registry, definition)
            #expect(flow.isSuccess, "\(flow.generateSummary())")
            #expect(flow.dataBucket["outs"] as? [String] == ["A", "B", "C"])
            #expect(flow.generateSummary().contains("@ w1]"))
        }

        @Test func anEntryPlacedOnTheCoordinatorRunsThereAndNeverReachesAWorker() async throws {
            var registry = FlowOperationRegistry()
            registry.register("SimplePrintOp", placement: .coordinator) { _ in
                FlowClosureOperation(name: "SimplePrintOp") { op in op.log(message: "ran on pid \(getpid())") }
            }
            let definition = FlowDefinition(name: "placed", steps: [.operation(FlowOperationStep(op: "SimplePrintOp", parameters: ["message": "x"]))])
            let flow = try await runOnCluster(registry, definition)
            let summary = flow.generateSummary()
            #expect(flow.isSuccess, "\(summary)")
            #expect(summary.contains("[SimplePrintOp @ coordinator] ran on pid \(getpid())"), "\(summary)")
        }
    }
}
