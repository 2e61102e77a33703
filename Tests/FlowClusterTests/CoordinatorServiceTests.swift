import Flow
import FlowCluster
import Foundation
import Logging
import ServiceLifecycle
import Testing

extension ClusterIntegrationTests {
    /// `FlowCoordinator` as a `Service`: a `ServiceGroup` binds it and stops it on graceful shutdown.
    @Suite struct CoordinatorAsAService {
        @Test func aServiceGroupRunsTheCoordinatorAndGracefulShutdownStopsIt() async throws {
            try await withCluster { cluster in
                let coordinator = try FlowCoordinator(configuration: .init(endpoint: cluster.ipcEndpoint("svc.sock")), logger: Logger(label: "test"))
                let group = ServiceGroup(services: [coordinator], logger: Logger(label: "test"))
                // Bound first (start() returns once the socket is), so the endpoint is there to
                // connect to; the group's run() then serves on it without binding again.
                let endpoint = try await coordinator.start()
                async let running: Void = group.run()
                _ = try cluster.worker(connect: endpoint, name: "w1")
                #expect(await coordinator.waitForWorkers(1, timeout: .seconds(10)))
                let flow = Flow(definition: FlowDefinition(name: "svc", steps: [
                    .operation(FlowOperationStep(op: "SimplePrintOp", parameters: ["message": "hello"])),
                ])).setExecutor(coordinator)
                await flow.run()
                #expect(flow.isSuccess, "\(flow.generateSummary())")
                await group.triggerGracefulShutdown()
                try await running
                // Stopped: new work is refused at once rather than hanging.
                let late = await coordinator.execute(FlowTask(operation: .named("SimplePrintOp", parameters: [:]), bucket: [:],
                                                              operationName: "SimplePrintOp"))
                #expect(late.state == .cancelled)
            }
        }

        /// A run that has ended sees no task running: the coordinator publishes its status before
        /// it hands results back. `ClusterRun` relies on it to stop local workers first, so that
        /// each says goodbye to a coordinator still listening instead of lingering on its
        /// DISCONNECT (a lagging status added 0.5 s or more to a run's end).
        @Test func whenAGroupHasEndedTheCoordinatorCountsNoTaskRunning() async throws {
            try await withCluster { cluster in
                let coordinator = try FlowCoordinator(configuration: .init(endpoint: cluster.ipcEndpoint("status.sock")),
                                                      logger: Logger(label: "test"))
                try await withStarted(coordinator) { endpoint in
                    _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 8)
                    #expect(await coordinator.waitForWorkers(1, timeout: .seconds(10)))
                    for run in 1...30 {
                        let flow = Flow(definition: FlowDefinition(name: "status", bucket: ["items": [1, 2, 3, 4, 5, 6, 7, 8]], steps: [
                            .group(FlowGroupStep(op: "SleepOp", input: "items", output: "out", maxConcurrent: 8, parameters: ["ms": 1])),
                        ])).setExecutor(coordinator)
                        await flow.run()
                        #expect(flow.isSuccess, "\(flow.generateSummary())")
                        let running = coordinator.status.running
                        #expect(running == 0, "run \(run): \(running) task(s) still counted as running after the flow ended")
                    }
                }
            }
        }
    }
}
