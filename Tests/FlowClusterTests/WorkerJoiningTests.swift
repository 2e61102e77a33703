import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// Workers joining a bound coordinator: late, over ipc, and across a coordinator restart.
    @Suite struct WorkersJoiningBoundCoordinators {
        @Test func workerStartedAfterTheCoordinatorStillRunsTheFlow() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"])
                let endpoint = try await coordinator.listeningEndpoint()
                #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && !endpoint.hasSuffix(":*"), "\(endpoint)")

                // What is tested is that nothing happens for a second: the coordinator neither
                // ends nor runs the flow without a worker (woken at once if it does).
                let gaveUp = await coordinator.waitForOutput(timeout: 1) { stdout, _ in !coordinator.isRunning || stdout.contains("Flow isSuccess") }
                #expect(!gaveUp && coordinator.isRunning, "the coordinator must wait for a worker\n\(coordinator.transcript)")
                #expect(!coordinator.stdout.contains("Flow isSuccess"))

                let worker = try cluster.worker(connect: endpoint, name: "late")
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("[SimplePrintOp @ late] Step2"), "\(coordinator.stdout)")
                #expect(coordinator.stderr.contains("[cluster] worker late joined from "))
                #expect(await worker.terminate() == .exit(0), "\(worker.transcript)")
            }
        }

        @Test func bindingAnAbsoluteIpcPathWorks() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let bind = cluster.ipcEndpoint("flow.sock")
                let coordinator = try cluster.coordinator(["run", file, "--bind", bind, "--worker-timeout", "20"])
                let endpoint = try await coordinator.listeningEndpoint()
                #expect(endpoint == bind)
                #expect(FileManager.default.fileExists(atPath: cluster.path("flow.sock")), "no socket file at the ipc path")

                let worker = try cluster.worker(connect: endpoint, name: "ipc-worker")
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("[SimplePrintOp @ ipc-worker] Step1"), "\(coordinator.stdout)")
                _ = await worker.terminate()
            }
        }

        @Test func workerOutlivesItsCoordinatorAndServesTheNextOneOnTheSameEndpoint() async throws {
            try await withCluster { cluster in
                let bind = cluster.ipcEndpoint("restart.sock")
                let first = try cluster.write("first.yaml", FlowFixtures.chain)
                let second = try cluster.write("second.yaml", """
                    flow: second
                    steps:
                      - op: SimplePrintOp
                        with: {message: SecondCoordinator}
                    """)
                let arguments = ["--bind", bind, "--worker-timeout", "20"] + ClusterScope.fastHeartbeat

                let coordinatorA = try cluster.coordinator(["run", first] + arguments, label: "coordinator-A")
                _ = try await coordinatorA.listeningEndpoint()
                let worker = try cluster.worker(connect: bind, name: "survivor")
                let endA = await coordinatorA.waitForExit(timeout: 20)
                #expect(endA == .exit(0), "\(coordinatorA.transcript)")
                #expect(coordinatorA.stdout.contains("[SimplePrintOp @ survivor] Step1"))

                // Its coordinator gone, the worker says it waits for the next one.
                #expect(await worker.waitForStderr(containing: "waiting for the next coordinator", timeout: 10))
                #expect(worker.isRunning, "the worker must outlive its coordinator\n\(worker.transcript)")
                let coordinatorB = try cluster.coordinator(["run", second] + arguments, label: "coordinator-B")
                let endB = await coordinatorB.waitForExit(timeout: 20)
                #expect(endB == .exit(0), "\(coordinatorB.transcript)\n\(worker.transcript)")
                #expect(coordinatorB.stdout.contains("[SimplePrintOp @ survivor] SecondCoordinator"), "\(coordinatorB.stdout)")
                #expect(coordinatorB.stderr.contains("worker survivor joined"))
                #expect(await worker.terminate() == .exit(0), "\(worker.transcript)")
            }
        }

        /// A standing worker idle between two runs, as on a cluster whose runs are started from a
        /// terminal now and then. It used to close its socket for 1, 1, 2, 4 … 30 s at a time while
        /// no coordinator answered, so a run started in such a pause waited for it (and a
        /// `--min-workers` run failed), and it warned about the silence every few seconds. Now its
        /// socket stays open and retries by itself, so the next coordinator has it within
        /// `--reconnect-interval` (0.1 s); the 2 s `--worker-timeout` is 20 times that.
        @Test func aWorkerIdleBetweenRunsJoinsTheNextCoordinatorAtOnceAndQuietly() async throws {
            try await withCluster { cluster in
                let bind = cluster.ipcEndpoint("standing.sock")
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let arguments = ["--bind", bind, "--min-workers", "1"] + ClusterScope.fastHeartbeat
                let first = try cluster.coordinator(["run", file, "--worker-timeout", "20"] + arguments, label: "coordinator-A")
                _ = try await first.listeningEndpoint()
                let worker = try cluster.worker(connect: bind, name: "standing")
                #expect(await first.waitForExit(timeout: 20) == .exit(0), "\(first.transcript)")

                // 7 s idle: with a 0.6 s liveness window, the old worker was in its 4 s pause by then.
                // The time passing is what is tested (the sleep stays).
                #expect(await worker.waitForStderr(containing: "waiting for the next coordinator", timeout: 10))
                try await Task.sleep(for: .seconds(7))
                let second = try cluster.coordinator(["run", file, "--worker-timeout", "2"] + arguments, label: "coordinator-B")
                #expect(await second.waitForExit(timeout: 20) == .exit(0), "\(second.transcript)\n\(worker.transcript)")
                #expect(second.stdout.contains("[SimplePrintOp @ standing] Step2"), "\(second.stdout)")
                #expect(await worker.terminate() == .exit(0), "\(worker.transcript)")
                let warnings = worker.stderr.split(separator: "\n").filter { $0.contains(" warning ") || $0.contains(" error ") }
                #expect(warnings.isEmpty, "waiting for the next coordinator is no warning:\n\(warnings.joined(separator: "\n"))")
                #expect(worker.stderr.contains("waiting for the next coordinator"), "\(worker.stderr)")
            }
        }
    }
}
