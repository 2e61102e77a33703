import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// `--metrics HOST:PORT`: both programs serve Prometheus metrics while they run, and the counts
    /// match the run.
    @Suite struct Metrics {
        static let fileCount = 12
        static let fileSize = 256 * 1024
        static let sleeps = 24

        /// Uploads, then a group of sleeps, then one long sleep during which the finished groups
        /// can be scraped before the coordinator exits.
        static let flow = """
            flow: watched
            bucket: {items: [\((1...sleeps).map(String.init).joined(separator: ", "))]}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group: {op: UploadFileOp, input: files, output: urls, maxConcurrent: 8, with: {url: "${uploadURL}"}}
              - group: {op: SleepOp, input: items, output: slept, maxConcurrent: 16, with: {ms: 150}}
              - op: SleepOp
                with: {ms: 2500}
            """

        @Test func scrapesDuringARealRunMatchTheRunAndPassPromtool() async throws {
            try await withUploadServer { server, cluster, folder in
                for index in 1...Self.fileCount {
                    try PseudoRandomFile.write(to: folder.appendingPathComponent("f\(index).bin"), size: Self.fileSize, seed: UInt64(index))
                }
                let file = try cluster.write("watched.yaml", Self.flow)
                let coordinator = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                           "--metrics", "127.0.0.1:0", "--set", "folder=\(folder.path)",
                                                           "--set", "uploadURL=\(server.url("/up"))"] + ClusterScope.fastHeartbeat)
                let endpoint = try await coordinator.listeningEndpoint()
                let coordinatorAddress = try await coordinator.metricsAddress()
                #expect(coordinatorAddress.hasPrefix("127.0.0.1:"))
                // A bare port listens on loopback.
                let workers = try ["w1", "w2"].map { name in
                    try cluster.worker(connect: endpoint, name: name, concurrency: 3, extra: ["--metrics", "0"])
                }
                var workerAddresses: [String] = []
                for worker in workers { workerAddresses.append(try await worker.metricsAddress()) }
                #expect(workerAddresses.allSatisfy { $0.hasPrefix("127.0.0.1:") }, "\(workerAddresses)")

                // Scrape everything until the sleep group is over, watching the bounds.
                var maxInFlight = 0.0, maxBusy = 0.0, scrapes = 0
                var sawRunningElements = false
                var end: MetricsScrape?
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline, coordinator.isRunning {
                    guard let scrape = try await MetricsScrape.fetch(coordinatorAddress) else { break }
                    scrapes += 1
                    let inFlight = scrape.value("flow_tasks_in_flight")
                    maxInFlight = max(maxInFlight, inFlight)
                    #expect(inFlight <= scrape.value("flow_cluster_slots"), "more tasks in flight than slots:\n\(scrape.text)")
                    if scrape.value("flow_group_elements", ["flow": "watched", "state": "running"]) > 0 { sawRunningElements = true }
                    for address in workerAddresses {
                        guard let workerScrape = try await MetricsScrape.fetch(address) else { continue }
                        let busy = workerScrape.value("flow_worker_slots_busy")
                        maxBusy = max(maxBusy, busy)
                        #expect(busy <= 3, "a worker with 3 slots had \(busy) busy")
                    }
                    if scrape.value("flow_group_elements", ["flow": "watched", "state": "done"]) == Double(Self.sleeps) {
                        end = scrape
                        break
                    }
                    try await Task.sleep(for: .milliseconds(40))
                }
                let last = try #require(end, "never saw the sleep group done in \(scrapes) scrapes\n\(coordinator.transcript)")
                // The long serial sleep still runs: the groups' tasks are all there is.
                #expect(last.value("flow_tasks_completed_total", ["op": "SleepOp", "state": "succeeded"]) == Double(Self.sleeps), "\(last.text)")
                #expect(last.value("flow_tasks_completed_total", ["op": "UploadFileOp", "state": "succeeded"]) == Double(Self.fileCount))
                #expect(last.value("flow_tasks_completed_total", ["state": "failed"]) == 0)
                #expect(last.value("flow_task_duration_seconds_count", ["op": "SleepOp"]) == Double(Self.sleeps))
                // 24 sleeps of 150 ms: every one lands in the 0.25 s bucket, none below 0.1 s.
                #expect(last.value("flow_task_duration_seconds_bucket", ["op": "SleepOp", "le": "0.1"]) == 0)
                #expect(last.value("flow_task_duration_seconds_bucket", ["op": "SleepOp", "le": "0.25"]) == Double(Self.sleeps))
                #expect(last.value("flow_group_elements", ["flow": "watched", "state": "pending"]) == 0)
                #expect(last.value("flow_group_elements", ["flow": "watched", "state": "failed"]) == 0)
                #expect(last.value("flow_workers_connected") == 2)
                #expect(last.value("flow_cluster_slots") == 6)
                #expect(last.value("flow_task_retries_total") == 0)
                #expect(maxInFlight >= 1 && maxInFlight <= 6, "in flight peaked at \(maxInFlight)")
                #expect(maxBusy >= 1, "no worker scrape ever saw a busy slot in \(scrapes) scrapes")
                #expect(sawRunningElements, "no scrape saw a group element running in \(scrapes) scrapes")
                #expect(try await last.promtoolProblems() == nil)

                #expect(await coordinator.waitForExit(timeout: 30) == .exit(0), "\(coordinator.transcript)")
                #expect(try await MetricsScrape.fetch(coordinatorAddress) == nil, "the coordinator's metrics outlived it")

                // The workers run on: their totals are the whole run's.
                var completedOnWorkers = 0.0, uploaded = 0.0, slots = 0.0
                for address in workerAddresses {
                    let scrape = try #require(try await MetricsScrape.fetch(address))
                    #expect(try await scrape.promtoolProblems() == nil)
                    #expect(scrape.value("flow_worker_slots_busy") == 0)
                    completedOnWorkers += scrape.value("flow_tasks_completed_total", ["op": "SleepOp", "state": "succeeded"])
                    uploaded += scrape.value("flow_worker_uploaded_bytes_total")
                    slots += scrape.value("flow_worker_slots")
                }
                #expect(completedOnWorkers == Double(Self.sleeps + 1))
                #expect(uploaded == Double(Self.fileCount * Self.fileSize), "bytes uploaded")
                #expect(slots == 6)
                for worker in workers { #expect(await worker.terminate() == .exit(0), "\(worker.transcript)") }
            }
        }

        @Test func aMetricsValueThatIsNotHostAndPortIsRefusedBeforeAnythingStarts() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                for (program, arguments) in [("flow-coordinator", ["run", file, "--metrics", "localhost:http"]),
                                             ("flow-worker", ["--connect", "tcp://127.0.0.1:1", "--metrics", "::1:9464"])] {
                    let child = try cluster.start(program, arguments)
                    #expect(await child.waitForExit(timeout: 20) == .exit(2), "\(child.transcript)")
                    #expect(child.stderr.contains("--metrics"), "\(child.stderr)")
                }
            }
        }

        @Test func aMetricsPortInUseStopsTheRunWithAClearError() async throws {
            try await withCluster { cluster in
                let listener = try SilentListener()
                let file = try cluster.write("chain.yaml", FlowFixtures.chain)
                let coordinator = try cluster.coordinator(["run", file, "--metrics", "127.0.0.1:\(listener.port)"])
                #expect(await coordinator.waitForExit(timeout: 20) == .exit(2), "\(coordinator.transcript)")
                #expect(coordinator.stderr.contains("cannot listen there"), "\(coordinator.stderr)")
                #expect(!coordinator.stdout.contains("Flow isSuccess"))
                withExtendedLifetime(listener) {}
            }
        }
    }
}
