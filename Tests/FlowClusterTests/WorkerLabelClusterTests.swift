import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// Worker labels (`flow-worker --label`, issue 50 item 1) with real processes: a run's
    /// coordinator asks a labelled worker for them, logs them, and `status RUN` lists them.
    @Suite struct WorkerLabels {
        @Test func aRunsStatusListsItsWorkersWithTheirLabels() async throws {
            try await withCluster { cluster in
                let gate = cluster.path("GO")
                let file = try cluster.write("labels.yaml", RunControlTests.gatedFlow(count: 4, gate: gate))
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30"]
                                                  + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "labelled", concurrency: 2, extra: ["--label", "role=recorder", "--label", "host=node-7"])
                _ = try cluster.worker(connect: endpoint, name: "plain", concurrency: 1)
                let id = try await RunControlTests.runID(of: run)
                let answer = await RunControlTests.pollStatus(cluster, id, run: run) { status in
                    let workers = status["workerList"] as? [[String: Any]] ?? []
                    return workers.count == 2 && workers.contains { ($0["labels"] as? [String: String])?["role"] == "recorder" }
                }
                let workers = answer.status["workerList"] as? [[String: Any]] ?? []
                #expect(workers.map { $0["name"] as? String } == ["labelled", "plain"], "\(answer)")
                #expect(workers.first?["labels"] as? [String: String] == ["role": "recorder", "host": "node-7"], "\(answer)")
                #expect(workers.last?["labels"] as? [String: String] == [:], "\(answer)")
                let text = try await RunControlTests.command(cluster, ["status", id])
                #expect(text.stdout.contains("worker labelled on ") && text.stdout.contains("labels host=node-7,role=recorder"), "\(text.stdout)")
                FileManager.default.createFile(atPath: gate, contents: Data())
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            }
        }
    }
}
