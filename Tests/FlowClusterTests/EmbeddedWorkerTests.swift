import FlowTestSupport
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

        /// The group's elements wait at gates the test never opens, so the run is still at work
        /// when the signal comes: with elements of 1 s, a loaded machine once let the whole group
        /// end before the test had read that it began.
        @Test func sigtermToTheCoordinatorCancelsTheFlowPrintsTheSummaryAndStopsItsWorkers() async throws {
            try await withCluster { cluster in
                let starts = try ElementStarts(cluster.path("starts.fifo"))
                let gates = try ElementGates(cluster.path("gates"), names: (0..<8).map { "e-\($0)" })
                defer {
                    gates.close()
                    starts.close()
                }
                let file = try cluster.write("gated.yaml", PoolTests.echoFlow("e", count: 8, sleep: 0, maxConcurrent: 4,
                                                                              announcingTo: starts.path, gatedBy: gates))
                let coordinator = try cluster.coordinator(["run", file])
                try #require(await coordinator.waitForOutput(timeout: 10) { _, stderr in
                    stderr.contains("worker-1 joined") && stderr.contains("worker-2 joined")
                })
                let workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
                #expect(workers.count == 2, "want two local workers, found \(workers)")
                // The group's first 4 elements run on the workers when the signal comes.
                try #require(await starts.waitForMore(than: 3, before: .now + .seconds(10)), "\(starts.order)\n\(coordinator.transcript)")

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

        @Test func localWorkersBootWhileTheFlowFileLoads() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("three.yaml", """
                    flow: three
                    bucket: {images: [x]}
                    steps:
                      - group: {op: UploadSingleImageOp, input: images, output: urls, maxConcurrent: 4, with: {delay: 0}}
                    """)
                // The bucket comes through a named pipe: loading the flow waits until the test writes it.
                let pipe = cluster.path("bucket.pipe")
                try #require(mkfifo(pipe, 0o600) == 0)
                let coordinator = try cluster.coordinator(["run", file, "--bucket", pipe])
                // Nothing announces a local worker while the flow loads (the coordinator writes
                // nothing then, and a child's start is no event this process can wait on), so the
                // process table is looked at every 20 ms, until a deadline that fails the test.
                var workers: [Int32] = []
                let deadline = ContinuousClock.now + .seconds(10)
                while workers.count < 2, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
                }
                #expect(workers.count == 2, "the local workers must start before the flow file is read; found \(workers)\n\(coordinator.transcript)")
                #expect(!coordinator.stdout.contains("Flow Summary"), "the run must still wait for its bucket")

                // Opening the pipe for writing waits for the coordinator to open it for reading.
                let writer = Thread {
                    guard let handle = FileHandle(forWritingAtPath: pipe) else { return }
                    handle.write(Data(#"{"images": ["a", "b", "c"]}"#.utf8))
                    try? handle.close()
                }
                writer.start()
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains(#"urls: ["url_of_a", "url_of_b", "url_of_c"]"#), "\(coordinator.stdout)")
                // What the workers said while the flow loaded reaches the progress output too.
                #expect(coordinator.stderr.contains("worker-1 joined") && coordinator.stderr.contains("worker-2 joined"),
                        "\(coordinator.stderr)")
            }
        }

        @Test func localWorkersLeaveCleanlySoonAfterTheirCoordinatorIsKilled() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("slow.yaml", Self.slowGroup)
                let coordinator = try cluster.coordinator(["run", file])
                try #require(await coordinator.waitForOutput(timeout: 10) { _, stderr in
                    stderr.contains("worker-1 joined") && stderr.contains("worker-2 joined")
                })
                let workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
                #expect(workers.count == 2, "want two local workers, found \(workers)")

                coordinator.send(SIGKILL)
                #expect(await coordinator.waitForExit(timeout: 5) == .signal(SIGKILL))
                // They drain their running 1 s tasks, then exit: well within 5 s.
                let survivors = await ProcessTable.waitUntilGone(workers, timeout: 5)
                #expect(survivors.isEmpty, "local workers outlived their killed coordinator: \(survivors)")
                // Their stderr is still the pipe the test reads: draining because the parent died
                // is a normal stop, not a failure. All that they wrote is read once the pipe ends.
                #expect(await coordinator.waitForStreamsToEnd(timeout: 10), "the workers' output never ended\n\(coordinator.transcript)")
                #expect(!coordinator.stderr.contains("finished unexpectedly"),
                        "a worker whose coordinator died must stop cleanly\n\(coordinator.stderr)")
            }
        }
    }
}
