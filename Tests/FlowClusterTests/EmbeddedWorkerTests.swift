import Foundation
import Testing

extension ClusterIntegrationTests {
    /// The local workers `flow-coordinator run` starts for itself never outlive it.
    @Suite struct EmbeddedWorkersLifecycle {
        private static let slowGroup = """
            flow: slow
            bucket: {images: [a, b, c, d, e, f, g, h]}
            steps:
              - group: {op: UploadSingleImageOp, input: images, output: urls, maxConcurrent: 4, with: {delay: 1.0}}
            """

        @Test func sigtermToTheCoordinatorCancelsTheFlowPrintsTheSummaryAndStopsItsWorkers() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("slow.yaml", Self.slowGroup)
                let coordinator = try cluster.coordinator(["run", file])
                try #require(await coordinator.waitForOutput(timeout: 10) { _, stderr in
                    stderr.contains("worker-1 joined") && stderr.contains("worker-2 joined")
                })
                let workers = ProcessTable.children(of: coordinator.processIdentifier)
                #expect(workers.count == 2, "want two local workers, found \(workers)")
                try await Task.sleep(for: .milliseconds(300))

                coordinator.send(SIGTERM)
                let end = await coordinator.waitForExit(timeout: 10)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("[Flow] cancelled"), "\(coordinator.stdout)")
                #expect(coordinator.stdout.contains("Flow isSuccess: false"))
                #expect(coordinator.stdout.contains("====== Flow Summary ======"))
                let survivors = await ProcessTable.waitUntilGone(workers, timeout: 2)
                #expect(survivors.isEmpty, "local workers outlived their coordinator: \(survivors)")
            }
        }

        @Test func localWorkersLeaveCleanlySoonAfterTheirCoordinatorIsKilled() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("slow.yaml", Self.slowGroup)
                let coordinator = try cluster.coordinator(["run", file])
                try #require(await coordinator.waitForOutput(timeout: 10) { _, stderr in
                    stderr.contains("worker-1 joined") && stderr.contains("worker-2 joined")
                })
                let workers = ProcessTable.children(of: coordinator.processIdentifier)
                #expect(workers.count == 2, "want two local workers, found \(workers)")

                coordinator.send(SIGKILL)
                #expect(await coordinator.waitForExit(timeout: 5) == .signal(SIGKILL))
                // They drain their running 1 s tasks, then exit: well within 5 s.
                let survivors = await ProcessTable.waitUntilGone(workers, timeout: 5)
                #expect(survivors.isEmpty, "local workers outlived their killed coordinator: \(survivors)")
                // Their stderr is still the pipe the test reads: draining because the parent died
                // is a normal stop, not a failure.
                try await Task.sleep(for: .milliseconds(300))
                #expect(!coordinator.stderr.contains("finished unexpectedly"),
                        "a worker whose coordinator died must stop cleanly\n\(coordinator.stderr)")
            }
        }
    }
}
