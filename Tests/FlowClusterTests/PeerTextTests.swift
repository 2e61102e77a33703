import FlowTestSupport
import FlowWire
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// What a peer says about itself reaches the coordinator's terminal escaped, and bounded.
    @Suite struct PeerSuppliedText {
        /// A flow that waits for two workers offering SleepOp, which the raw peers never are.
        static let waitingFlow = """
            flow: waits
            bucket: {items: [a]}
            steps:
              - group: {op: SleepOp, input: items, output: done, maxConcurrent: 1, with: {ms: 1}}
            """

        static func waitingCoordinator(_ cluster: ClusterScope) async throws -> (ChildProcess, String) {
            let file = try cluster.write("waits.yaml", waitingFlow)
            let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                       "--worker-timeout", "60"] + ClusterScope.fastHeartbeat)
            return (coordinator, try await coordinator.listeningEndpoint())
        }

        /// Control characters a terminal acts on, or that start a line of their own.
        static func hasControlCharacters(_ text: String) -> Bool {
            text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F..<0xA0).contains($0.value) }
        }

        @Test func aWorkerNameWithANewlineAndEscapesIsPrintedEscapedAndForgesNoLine() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await Self.waitingCoordinator(cluster)
                let name = "evil\n[cluster] worker forged joined from nowhere (9 slots, 9 ops)\u{1B}[2J\u{1B}]0;owned\u{07}"
                let ready = WireCodec.encode(.ready(WireReady(workerName: name, slotCount: 1, ops: ["NoSuchOp"], hostname: "h\r\u{9B}31m",
                                                              processID: 1)))
                _ = try await RawPeers.dealer(to: endpoint, send: [ready])
                let escaped = "worker evil\\n[cluster] worker forged joined from nowhere (9 slots, 9 ops)\\u{1B}[2J\\u{1B}]0;owned\\u{7} "
                    + "joined from h\\r\\u{9B}31m (1 slots, 1 ops)"
                #expect(await coordinator.waitForStderr(containing: escaped, timeout: 20), "\(coordinator.stderr)")
                let lines = coordinator.stderr.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(!lines.contains { $0.hasPrefix("[cluster] worker forged") }, "a forged line: \(coordinator.stderr)")
                #expect(!Self.hasControlCharacters(coordinator.stderr), "a control character reached stderr: \(coordinator.stderr.debugDescription)")
                _ = await coordinator.terminate()
            }
        }

        /// An op's error from a worker is the worker's text too: the summary shows it escaped.
        @Test func aWorkersErrorTextIsPrintedEscaped() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("fails.yaml", Self.waitingFlow)
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "20"])
                let endpoint = try await coordinator.listeningEndpoint()
                let worker = try RawWorker(endpoint: endpoint, name: "liar", slots: 1, ops: ["SleepOp"])
                let task = try #require(try await worker.nextTasks()?.first)
                let text = "boom\n[cluster] worker forged joined from nowhere (9 slots, 9 ops)\u{1B}[31m"
                try worker.send(.result([WireResult(taskID: task.taskID, attempt: task.attempt, finishState: .withError(text), startedAt: Date(),
                                                    finishedAt: Date(), events: [WireEvent(time: Date(), kind: .log("said\n\u{1B}[1mthis"))],
                                                    elementIndex: task.isGroupElement ? task.elementIndex : nil, isPermanent: true)]))
                let end = await coordinator.waitForExit(timeout: 20)
                #expect(end == .exit(1), "\(coordinator.transcript)")
                #expect(coordinator.stdout.contains("boom\\n[cluster] worker forged joined from nowhere (9 slots, 9 ops)\\u{1B}[31m"),
                        "\(coordinator.stdout)")
                for output in [coordinator.stdout, coordinator.stderr] {
                    #expect(!output.split(separator: "\n").contains { $0.hasPrefix("[cluster] worker forged") }, "a forged line: \(output)")
                    #expect(!Self.hasControlCharacters(output), "a control character was printed: \(output.debugDescription)")
                }
            }
        }

        /// The READY that took a coordinator from 35 MB to 931 MB: a 100 KB name and 100,000 op
        /// names. It is refused without a name or op list being made of it, so the coordinator's
        /// memory grows by little more than the frame libzmq receives and hands over; a READY past
        /// a limit is logged once per peer however often it comes, and one within them still joins.
        @Test func aReadyPastItsLimitsIsRefusedOnceAndTheCoordinatorStaysSmall() async throws {
            try await withCluster { cluster in
                let (coordinator, endpoint) = try await Self.waitingCoordinator(cluster)
                let pid = coordinator.processIdentifier
                let before = try #require(ProcessMemory.peakResidentBytes(ofProcess: pid))
                let ops = (0..<100_000).map { "op-\($0)-" + String(repeating: "x", count: 990) }
                let huge = WireCodec.encode(.ready(WireReady(workerName: String(repeating: "n", count: 100_000), slotCount: 1, ops: ops,
                                                             hostname: "h", processID: 1)))
                let frameBytes = huge.reduce(0) { $0 + $1.count }
                _ = try await RawPeers.dealer(to: endpoint, send: [huge], listen: 1)
                #expect(await coordinator.waitForStderr(containing: "a READY within the name and op limits can have", timeout: 30),
                        "\(coordinator.stderr.prefix(2_000))")
                let peak = try #require(ProcessMemory.peakResidentBytes(ofProcess: pid))
                // libzmq's message and the frame's copy out of it: nothing is made of its 100,000
                // names (before the limits: 40 -> 450 MB for this 95 MB frame).
                #expect(peak - before < frameBytes * 5 / 2,
                        "peak \(peak >> 20) MB from \(before >> 20) MB for a frame of \(frameBytes >> 20) MB")

                // A name just past its limit, three times from one peer: logged once.
                let long = WireCodec.encode(.ready(WireReady(workerName: String(repeating: "m", count: 300), slotCount: 1, ops: ["NoSuchOp"],
                                                             hostname: "h", processID: 1)))
                _ = try await RawPeers.dealer(to: endpoint, send: [long, long, long], listen: 1.5)
                // A READY within the limits, op list and all, still joins.
                let fine = WireCodec.encode(.ready(WireReady(workerName: "fine", slotCount: 1, ops: Array(ops.prefix(1_024)).map { String($0.prefix(255)) },
                                                             hostname: "h", processID: 1)))
                _ = try await RawPeers.dealer(to: endpoint, send: [fine])
                #expect(await coordinator.waitForStderr(containing: "worker fine joined from h (1 slots, 1024 ops)", timeout: 20),
                        "\(coordinator.stderr.prefix(2_000))")
                let stderr = coordinator.stderr
                #expect(stderr.components(separatedBy: "worker name: 300 bytes long, longer than the 255 allowed").count - 1 == 1,
                        "once per peer: \(stderr.prefix(3_000))")
                #expect(!stderr.contains("nnnnnnnnnnnnnnnnnnnnnnnn") && !stderr.contains("mmmmmmmmmmmmmmmmmmmm"), "no refused name is printed")
                #expect(stderr.components(separatedBy: " joined from ").count - 1 == 1, "only 'fine' joined: \(stderr.prefix(2_000))")
                _ = await coordinator.terminate()
            }
        }
    }
}
