import Foundation
import Testing

extension ClusterIntegrationTests {
    /// Workers that die or stop in the middle of a flow: their tasks run elsewhere, exactly once
    /// in the result.
    @Suite struct WorkersDyingAndStopping {
        @Test func workerKilledMidGroupHasItsTasksRerunElsewhereAndIsReportedLost() async throws {
            try await withCluster { cluster in
                let images = FlowFixtures.imageNames(20)
                let file = try cluster.write("kill.yaml", FlowFixtures.groupedUpload(images: images, maxConcurrent: 8, delay: 0.3))
                let coordinator = try cluster.coordinator(
                    ["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let w1 = try cluster.worker(connect: endpoint, name: "w1")
                try #require(await coordinator.waitForStderr(containing: "worker w1 joined", timeout: 10))
                let w2 = try cluster.worker(connect: endpoint, name: "w2")
                try #require(await coordinator.waitForStderr(containing: "worker w2 joined", timeout: 10))

                // w1 took 4 elements at once and keeps 4 running while elements remain.
                try await Task.sleep(for: .milliseconds(500))
                w1.send(SIGKILL)
                #expect(await w1.waitForExit(timeout: 5) == .signal(SIGKILL))

                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images), "\(summary)")
                #expect(summary.contains("[FlowArrayGroupDispatcher] all finished. output size: 20"))
                let finished = summary.split(separator: "\n").filter { $0.contains("[UploadSingleImageOp ") && $0.hasSuffix("DidFinish: successfully") }
                #expect(finished.count == 20, "every element must finish exactly once\n\(summary)")

                let lost = summary.split(separator: "\n").first { $0.contains("[Cluster] worker w1 lost (") }
                #expect(lost != nil, "no '[Cluster] worker w1 lost' line\n\(summary)")
                let requeued = lost.flatMap { $0.firstMatch(of: #/; (\d+) task\(s\) given to other workers/#) }.flatMap { Int($0.1) }
                #expect((requeued ?? 0) >= 1, "w1 died with tasks in flight; they must go to w2: \(lost ?? "")")
                #expect(coordinator.stderr.contains("worker w1 lost ("))
                #expect(finished.contains { $0.contains("@ w2]") })
                _ = await w2.terminate()
            }
        }

        /// Runs a grouped upload on a bound coordinator with workers w1 and w2, lets the tasks run
        /// for `runningFor`, then freezes w1 (SIGSTOP) until the coordinator declares it lost and
        /// lets it go on (SIGCONT).
        static func freezeFirstWorkerPastLiveness(
            _ cluster: ClusterScope, images: [String], delay: Double, runningFor pause: Duration
        ) async throws -> (coordinator: ChildProcess, w1: ChildProcess, w2: ChildProcess) {
            let file = try cluster.write("freeze.yaml", FlowFixtures.groupedUpload(images: images, maxConcurrent: 8, delay: delay))
            let coordinator = try cluster.coordinator(
                ["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"] + ClusterScope.fastHeartbeat)
            let endpoint = try await coordinator.listeningEndpoint()
            let w1 = try cluster.worker(connect: endpoint, name: "w1")
            try #require(await coordinator.waitForStderr(containing: "worker w1 joined", timeout: 10))
            let w2 = try cluster.worker(connect: endpoint, name: "w2")
            try #require(await coordinator.waitForStderr(containing: "worker w2 joined", timeout: 10))
            try await Task.sleep(for: pause)
            w1.send(SIGSTOP)
            let lost = await coordinator.waitForStderr(containing: "worker w1 lost", timeout: 10)
            w1.send(SIGCONT)
            try #require(lost)
            return (coordinator, w1, w2)
        }

        @Test func workerFrozenPastLivenessIsReplacedAndItsLateResultsCountOnlyOnce() async throws {
            try await withCluster { cluster in
                let images = FlowFixtures.imageNames(16)
                // Slow rather than dead: frozen past liveness while running tasks, then it resumes
                // and sends results for tasks that were given to w2 meanwhile.
                let (coordinator, w1, w2) = try await Self.freezeFirstWorkerPastLiveness(
                    cluster, images: images, delay: 0.3, runningFor: .milliseconds(400))

                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)\n\(w1.transcript)")
                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images), "\(summary)")
                let finished = summary.split(separator: "\n").filter { $0.contains("[UploadSingleImageOp ") && $0.hasSuffix("DidFinish: successfully") }
                #expect(finished.count == 16, "every element must be counted exactly once\n\(summary)")
                #expect(summary.contains("[Cluster] worker w1 lost"), "\(summary)")
                #expect(w1.isRunning, "a frozen worker that resumes must carry on\n\(w1.transcript)")
                #expect(await w1.terminate() == .exit(0), "\(w1.transcript)")
                #expect(await w2.terminate() == .exit(0), "\(w2.transcript)")
            }
        }

        @Test func workerThatRejoinsWhileItsOldTasksStillRunDoesNotStallTheFlow() async throws {
            try await withCluster { cluster in
                let images = FlowFixtures.imageNames(16)
                // w1 is declared lost while its four 1.5 s tasks run, then resumes and registers
                // again before they end: the coordinator must not count on slots w1 still uses.
                let (coordinator, _, w2) = try await Self.freezeFirstWorkerPastLiveness(
                    cluster, images: images, delay: 1.5, runningFor: .milliseconds(300))

                // About 5 s when it works.
                let end = await coordinator.waitForExit(timeout: 12)
                #expect(end == .exit(0), "the flow stalled\n\(coordinator.transcript)")
                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images), "\(summary)")
                let finished = summary.split(separator: "\n").filter { $0.contains("[UploadSingleImageOp ") && $0.hasSuffix("DidFinish: successfully") }
                #expect(finished.count == 16, "\(summary)")
                _ = await w2.terminate()
            }
        }

        @Test func sigtermDrainsRunningTasksBeforeExitAndAnotherWorkerFinishesTheFlow() async throws {
            try await withCluster { cluster in
                let images = ["a", "b", "c", "d"]
                let file = try cluster.write("drain.yaml", """
                    flow: drain
                    bucket: {images: [\(images.joined(separator: ", "))]}
                    steps:
                      - group: {op: UploadSingleImageOp, input: images, output: imageURLs, maxConcurrent: 2, with: {delay: 1.0}}
                    """)
                let coordinator = try cluster.coordinator(
                    ["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let w1 = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2)
                try #require(await coordinator.waitForStderr(containing: "worker w1 joined", timeout: 10))

                // Two 1-second tasks are running on w1 now.
                try await Task.sleep(for: .milliseconds(300))
                let signalled = ContinuousClock.now
                w1.send(SIGTERM)
                try await Task.sleep(for: .milliseconds(300))
                #expect(w1.isRunning, "w1 exited before its running tasks finished\n\(w1.transcript)")
                let w1End = await w1.waitForExit(timeout: 10)
                let drainTime = ContinuousClock.now - signalled
                #expect(w1End == .exit(0), "\(w1.transcript)")
                #expect(drainTime >= .milliseconds(400), "w1 stopped after \(drainTime), before its tasks could finish")
                try #require(await coordinator.waitForStderr(containing: "worker w1 left", timeout: 5))
                #expect(coordinator.isRunning, "the coordinator must wait for another worker")

                let w2 = try cluster.worker(connect: endpoint, name: "w2", concurrency: 2)
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("imageURLs") == FlowFixtures.expectedURLs(images), "\(summary)")
                let finished = summary.split(separator: "\n").filter { $0.contains("[UploadSingleImageOp ") && $0.hasSuffix("DidFinish: successfully") }
                #expect(finished.count == 4, "\(summary)")
                #expect(finished.filter { $0.contains("@ w1]") }.count == 2, "w1's two running tasks must finish and count\n\(summary)")
                #expect(finished.filter { $0.contains("@ w2]") }.count == 2, "\(summary)")
                _ = await w2.terminate()
            }
        }
    }
}
