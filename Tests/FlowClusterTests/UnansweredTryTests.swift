import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A step's `timeout` is enforced by the coordinator too (docs/PROTOCOL.md §8.9): a worker
    /// that takes tasks and only heartbeats held them for good, and a group stalled at `0/N done`
    /// beside an idle honest worker.
    @Suite struct TimeLimitsOnTheCoordinator {
        @Test func aWorkerThatTakesTasksAndOnlyHeartbeatsHasItsTriesFailedAndRetriedElsewhereAndGetsNoMore() async throws {
            try await withCluster { cluster in
                let count = 200
                let elements = (0..<count).map { "e\($0)" }
                let file = try cluster.write("silent.yaml", """
                    flow: silent-worker
                    bucket: {items: [\(elements.joined(separator: ", "))]}
                    steps:
                      - group: {op: SleepOp, input: items, output: outs, maxConcurrent: 8,
                                timeout: 2, retry: {attempts: 3, delay: 0.01}, with: {ms: 40}}
                    """)
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30",
                                                           "--full-summary", "--log-level", "debug"])
                let endpoint = try await coordinator.listeningEndpoint()
                let silent = try SilentWorker(endpoint: endpoint, name: "silent", slots: 8, ops: ["SleepOp"])
                defer { silent.stop() }
                // Alone, it takes all the group may run at once; then the honest worker joins.
                #expect(await silent.waitForTasks(8, timeout: 15), "\(coordinator.transcript)")
                _ = try cluster.worker(connect: endpoint, name: "honest")

                let quarantine = "worker silent gets no more tasks: it left "
                guard await coordinator.waitForStderr(containing: quarantine, timeout: 20) else { return }
                let quarantinedAt = ContinuousClock.now
                // Its answers now come too late: dropped, each element counted once.
                silent.answerLate()
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")

                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("outs") == "[" + elements.map { "\"\($0)\"" }.joined(separator: ", ") + "]",
                        "every element, once, in order, none of the late answers\n\(summary)")
                #expect(summary.components(separatedBy: "@ honest] DidFinish: successfully").count - 1 == count, "\(summary)")
                #expect(!summary.contains("\"late\""), "\(summary)")
                // Each try it held past 2 s + the 2 s grace failed with the worker's name; `retry` ran it again.
                let failedTries = summary.components(
                    separatedBy: "attempt 1 of 3 failed: time limit of 2 s exceeded (no answer from worker silent); retrying in ").count - 1
                let held = silent.arrivals
                #expect(failedTries >= 3 && failedTries <= held.count, "\(failedTries) failed tries of \(held.count) held\n\(summary)")
                #expect(summary.contains("[Cluster] \(quarantine)"), "why it gets no more tasks is in the summary\n\(summary)")
                // Nothing was sent to it once it was set aside.
                #expect(held.allSatisfy { $0.at < quarantinedAt }, "\(held.count) tasks, the last one after the quarantine")
                #expect(coordinator.stderr.contains("from silent: it came after that try had failed at its time limit"),
                        "\(coordinator.stderr)")
                #expect(silent.failure == nil, "\(silent.failure ?? "")")
            }
        }
    }
}
