import Flow
import FlowWire
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A real `flow-coordinator` driven by hand-written workers into the corners of FLOW/02, each
    /// a place where it once did not do what docs/PROTOCOL.md says.
    @Suite struct CoordinatorKeepsTheSpec {
        /// A group of `count` `SleepOp` elements (ms 0) whose outputs go to `outs`.
        static func sleepGroup(_ count: Int, maxConcurrent: Int, allowFailure: Bool, then extra: String = "") -> String {
            """
            flow: conformance
            bucket: {items: [\((0..<count).map { "e\($0)" }.joined(separator: ", "))]}
            steps:
              - group: {op: SleepOp, input: items, output: outs, maxConcurrent: \(maxConcurrent), allowFailure: \(allowFailure), with: {ms: 0}}
            \(extra)
            """
        }

        func startCoordinator(_ cluster: ClusterScope, _ flow: String, _ extra: [String] = []) async throws -> (ChildProcess, String) {
            let file = try cluster.write("flow.yaml", flow)
            let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"] + extra)
            return (coordinator, try await coordinator.listeningEndpoint())
        }

        @Test func aCancelledElementRunsAgainOnAnotherWorkerInsteadOfCancellingTheFlow() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(cluster, Self.sleepGroup(4, maxConcurrent: 4, allowFailure: true))
                let stopping = try RawWorker(endpoint: endpoint, name: "stopping", slots: 4, ops: ["SleepOp"])
                let tasks = try #require(try await stopping.nextTasks())
                try stopping.send(.result(tasks.map { RawWorker.result(for: $0, state: .cancelled) }))
                _ = try cluster.worker(connect: endpoint, name: "w2")
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                let summary = coordinator.stdout
                #expect(summary.finalBucketValue("outs") == "[\"e0\", \"e1\", \"e2\", \"e3\"]", "\(summary)")
                #expect(summary.components(separatedBy: "@ w2] DidFinish: successfully").count - 1 == 4, "\(summary)")
                #expect(!summary.contains("cancelled"), "\(summary)")
                #expect(try await stopping.nextTasks(timeout: 0.3) == nil, "a worker that said cancelled is stopping: no more tasks")
            }
        }

        @Test func aBucketValueTooDeepToSendFailsTheStepWithAClearErrorInsteadOfHanging() async throws {
            try await withCluster { cluster in
                let flow = Self.sleepGroup(1, maxConcurrent: 1, allowFailure: false, then: """
                      - op: SimplePrintOp
                        with: {message: never}
                    """)
                let (coordinator, endpoint) = try await startCoordinator(cluster, flow)
                let worker = try RawWorker(endpoint: endpoint, name: "deep", slots: 1, ops: ["SleepOp", "SimplePrintOp"])
                let task = try #require(try await worker.nextTasks()?.first)
                // Depth 64 is legal on the wire; collected into `outs`, it becomes 65 deep.
                var deep = FlowValue.integer(1)
                for _ in 0..<64 { deep = .array([deep]) }
                try worker.send(.result([RawWorker.result(for: task, output: deep)]))
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("bucket value <outs> nests arrays and maps 65 deep"), "\(coordinator.stdout)")
                #expect(try await worker.nextTasks(timeout: 0.2) == nil, "no TASK the worker must drop may be sent")
            }
        }

        @Test func aFailedSendDeclaresTheWorkerDeadAtOnceNotAtLivenessExpiry() async throws {
            try await withCluster { cluster in
                // Liveness 10 × 0.4 s: a silent worker would be declared dead only after 4 s.
                let (coordinator, endpoint) = try await startCoordinator(
                    cluster, Self.sleepGroup(2, maxConcurrent: 2, allowFailure: false), ["--liveness", "10"])
                let gone = try RawWorker(endpoint: endpoint, name: "gone", slots: 2, ops: ["SleepOp"], heartbeatMilliseconds: 400)
                #expect(try await gone.nextTasks()?.count == 2)
                gone.close()
                _ = try cluster.worker(connect: endpoint, name: "w2")
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("[Cluster] worker gone lost (unreachable: sending "), "\(coordinator.stdout)")
                #expect(!coordinator.stdout.contains("no message for"), "\(coordinator.stdout)")
            }
        }

        @Test func everyLostRegistrationCountsTowardMaxAttempts() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(cluster, Self.sleepGroup(1, maxConcurrent: 1, allowFailure: false))
                let worker = try RawWorker(endpoint: endpoint, name: "flaky", slots: 1, ops: ["SleepOp"])
                var attempts: [UInt32] = []
                for _ in 0..<3 {
                    guard let task = try await worker.nextTasks(timeout: 5)?.first else { break }
                    attempts.append(task.attempt)
                    // READY again on the same connection: the registration ends, the task is lost.
                    try worker.send(.ready(WireReady(workerName: "flaky", slotCount: 1, ops: ["SleepOp"], hostname: "raw", processID: 1,
                                                     heartbeatIntervalMilliseconds: 60_000)))
                }
                #expect(attempts == [1, 2, 3])
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("was given up: 3 worker(s) were lost running it"), "\(coordinator.stdout)")
                #expect(try await worker.nextTasks(timeout: 0.2) == nil, "no fourth attempt")
            }
        }

        @Test func tasksReadyTogetherForOneWorkerLeaveInOneTaskMessage() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(cluster, Self.sleepGroup(160, maxConcurrent: 16, allowFailure: false))
                let worker = try RawWorker(endpoint: endpoint, name: "batch", slots: 16, ops: ["SleepOp"])
                var messages = 0
                var answered = 0
                while answered < 160, let tasks = try await worker.nextTasks(timeout: 10) {
                    messages += 1
                    answered += tasks.count
                    try worker.send(.result(tasks.map { RawWorker.result(for: $0, output: $0.groupElement) }))
                }
                #expect(answered == 160)
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                // One TASK per task would be 160; slots freed 16 at a time refill in about 10.
                #expect(messages <= 40, "\(messages) TASK messages for 160 tasks on 16 slots")
            }
        }

        /// §8.2, worker queues: a worker that announces one gets a group's tasks beyond its slots
        /// (never more than twice its slots); after a failure the coordinator RECALLs them, takes
        /// back what the worker returns, and sends nothing more of the group the failure ended.
        @Test func aWorkerThatQueuesGetsTasksBeyondItsSlotsAndAFailureRecallsThem() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(cluster, Self.sleepGroup(12, maxConcurrent: 2, allowFailure: false))
                let worker = try RawWorker(endpoint: endpoint, name: "queueing", slots: 2, ops: ["SleepOp"], features: WireReady.Feature.queue)
                var tasks: [WireTask] = []
                while tasks.count < 4, let more = try await worker.nextTasks(timeout: 10) { tasks += more }
                #expect(tasks.count == 4, "2 slots and 2 places in the queue: \(tasks.map(\.elementIndex))")
                #expect(try await worker.nextTasks(timeout: 0.3) == nil, "never more than twice the slots")
                guard tasks.count == 4 else { return }
                try worker.send(.result([RawWorker.result(for: tasks[0], state: .error("boom"))]))
                var recalled: [UInt64]?
                while recalled == nil, let message = try await worker.next(timeout: 10) {
                    if case .recall(let ids) = message { recalled = ids }
                }
                #expect(recalled.map(Set.init) == Set(tasks[1...].map(\.taskID)), "the worker holds more than its slots: any may wait")
                try worker.send(.returned(tasks[2...].map { WireTaskReference(taskID: $0.taskID, attempt: $0.attempt) }))
                try worker.send(.result([RawWorker.result(for: tasks[1])]))
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(try await worker.nextTasks(timeout: 0.2) == nil, "nothing of the failed group is sent again")
                #expect(coordinator.stdout.contains("boom"), "\(coordinator.stdout)")
            }
        }

        /// §8.2, work stealing: with nothing left to dispatch, a worker with free slots takes over
        /// what waits in another worker's queue: the coordinator RECALLs it there and sends what
        /// comes back RETURNED to the idle worker.
        @Test func anIdleWorkerTakesOverTasksWaitingInAnotherWorkersQueue() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(cluster, Self.sleepGroup(4, maxConcurrent: 4, allowFailure: false))
                let busy = try RawWorker(endpoint: endpoint, name: "busy", slots: 2, ops: ["SleepOp"], features: WireReady.Feature.queue)
                var held: [WireTask] = []
                while held.count < 4, let more = try await busy.nextTasks(timeout: 10) { held += more }
                #expect(held.count == 4, "2 slots and 2 places in the queue")
                let idle = try RawWorker(endpoint: endpoint, name: "idle", slots: 2, ops: ["SleepOp"], features: WireReady.Feature.queue)
                var recalled: [UInt64] = []
                while recalled.isEmpty, let message = try await busy.next(timeout: 10) {
                    if case .recall(let ids) = message { recalled = ids }
                }
                #expect(recalled.count == 2 && Set(recalled).isSubset(of: held.map(\.taskID)), "\(recalled)")
                let references = held.filter { recalled.contains($0.taskID) }.map { WireTaskReference(taskID: $0.taskID, attempt: $0.attempt) }
                try busy.send(.returned(references))
                let moved = try await idle.nextTasks(timeout: 10) ?? []
                #expect(Set(moved.map(\.taskID)) == Set(recalled), "what came back goes to the idle worker")
                #expect(moved.allSatisfy { $0.attempt == 2 })
                try busy.send(.result(held.filter { !recalled.contains($0.taskID) }.map { RawWorker.result(for: $0, output: $0.groupElement) }))
                try idle.send(.result(moved.map { RawWorker.result(for: $0, output: $0.groupElement) }))
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
            }
        }

        @Test func onlySuccessfulOutputsAreCollectedAndDiscardsStayOutOfSightAtTheDefaultLevel() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("flow.yaml", Self.sleepGroup(3, maxConcurrent: 3, allowFailure: true))
                let json = cluster.path("report.json")
                let summaryFile = cluster.path("summary.txt")
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--json", json, "--summary", summaryFile])
                let endpoint = try await coordinator.listeningEndpoint()
                let worker = try RawWorker(endpoint: endpoint, name: "raw", slots: 3, ops: ["SleepOp"])
                let tasks = try #require(try await worker.nextTasks()).sorted { $0.elementIndex < $1.elementIndex }
                try #require(tasks.count == 3)
                let answers = [
                    RawWorker.result(for: tasks[0], output: .string("A")),
                    RawWorker.result(for: tasks[1], state: .error("refused"), output: .string("B-err")),
                    RawWorker.result(for: tasks[2], output: .string("C")),
                ]
                try worker.send(.result(answers))
                try worker.send(.result([answers[0]]))
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                #expect(coordinator.stdout.finalBucketValue("outs") == "[\"A\", \"C\"]", "\(coordinator.stdout)")
                for (place, text) in [("stdout", coordinator.stdout), ("stderr", coordinator.stderr),
                                      ("--summary", (try? String(contentsOfFile: summaryFile, encoding: .utf8)) ?? "missing"),
                                      ("--json", (try? String(contentsOfFile: json, encoding: .utf8)) ?? "missing")] {
                    #expect(!text.contains("discard"), "a discarded duplicate showed in \(place):\n\(text)")
                    #expect(text != "missing", "\(place) was not written")
                }
            }
        }

        @Test func aReadyWithoutOpsIsRejectedAndNeverCountsAsAWorker() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await startCoordinator(
                    cluster, Self.sleepGroup(1, maxConcurrent: 1, allowFailure: false), ["--min-workers", "1", "--worker-timeout", "2"])
                let empty = try RawWorker(endpoint: endpoint, name: "empty", slots: 4, ops: [])
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(3), "\(coordinator.transcript)")
                #expect(coordinator.stderr.contains("a worker must offer at least one op"), "\(coordinator.stderr)")
                #expect(!coordinator.stderr.contains("worker empty joined"), "\(coordinator.stderr)")
                #expect(try await empty.nextTasks(timeout: 0.1) == nil)
            }
        }

        @Test func aTransientFailureIsRetriedOnAnotherWorkerAndAPermanentOneIsNot() async throws {
            try await withCluster { cluster in
                let flow = """
                    flow: retry
                    bucket: {items: [e0, e1]}
                    steps:
                      - group: {op: SleepOp, input: items, output: outs, maxConcurrent: 2, allowFailure: true,
                                retry: {attempts: 3, delay: 0.01}, with: {ms: 0}}
                    """
                let (coordinator, endpoint) = try await startCoordinator(cluster, flow)
                let flaky = try RawWorker(endpoint: endpoint, name: "flaky", slots: 8, ops: ["SleepOp"])
                let tasks = try #require(try await flaky.nextTasks()).sorted { $0.elementIndex < $1.elementIndex }
                try #require(tasks.count == 2)
                _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 2)
                try #require(await coordinator.waitForStderr(containing: "worker w2 joined", timeout: 10))
                try flaky.send(.result([
                    WireResult(taskID: tasks[0].taskID, attempt: tasks[0].attempt, finishState: .withError("HTTP 503"),
                               startedAt: Date(), finishedAt: Date(), elementIndex: 0),
                    WireResult(taskID: tasks[1].taskID, attempt: tasks[1].attempt, finishState: .withError("HTTP 403"),
                               startedAt: Date(), finishedAt: Date(), elementIndex: 1, isPermanent: true),
                ]))
                let end = await coordinator.waitForExit(timeout: 30)
                #expect(end == .exit(0), "\(coordinator.transcript)")
                let summary = coordinator.stdout
                #expect(summary.contains("@ flaky] attempt 1 of 3 failed: HTTP 503; retrying in "), "\(summary)")
                #expect(summary.contains("@ w2] DidFinish: successfully"), "the retry must run on the worker that did not fail it\n\(summary)")
                #expect(!summary.contains("failed: HTTP 403; retrying"), "a permanent failure is tried once\n\(summary)")
                #expect(summary.finalBucketValue("outs") == "[\"e0\"]", "\(summary)")
                #expect(try await flaky.nextTasks(timeout: 0.2) == nil, "no retry may go back to the worker that failed it")
            }
        }
    }
}
