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

        /// A flow of one group placed on `labels`.
        static func placedFlow(on labels: String, count: Int = 12) -> String {
            let items = (0..<count).map { "e\($0)" }.joined(separator: ", ")
            return """
                flow: placed
                bucket:
                  items: [\(items)]
                steps:
                  - group: {op: SleepOp, input: items, output: placed, maxConcurrent: 8, on: \(labels), with: {ms: 20}}

                """
        }

        /// The workers the group's elements ran on, from the summary's `[SleepOp tag @ worker]
        /// DidFinish` lines, counted by worker.
        static func workersByLine(_ summary: String) -> [String: Int] {
            var counts: [String: Int] = [:]
            for line in summary.split(separator: "\n") where line.contains("DidFinish: successfully") {
                guard let match = line.firstMatch(of: /\[SleepOp [0-9a-f]+ @ ([^\]]+)\]/) else { continue }
                counts[String(match.1), default: 0] += 1
            }
            return counts
        }

        @Test func aPlacedGroupRunsOnlyOnWorkersWithItsLabelsDirectAndThroughAPool() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("placed.yaml", Self.placedFlow(on: "{role: recorder}"))
                // Direct: the run's own coordinator places the elements.
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30", "--min-workers", "2"]
                                                  + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "rec", concurrency: 4, extra: ["--label", "role=recorder"])
                _ = try cluster.worker(connect: endpoint, name: "plain", concurrency: 4)
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                #expect(run.stdout.finalBucketValue("placed") == "[" + (0..<12).map { "\"e\($0)\"" }.joined(separator: ", ") + "]")

                // Through a pool: the pool places them, among workers of two runs' pool.
                let (poolProcess, pool) = try await PoolTests.startPool(cluster)
                _ = try cluster.worker(connect: pool, name: "pool-rec", concurrency: 4, extra: ["--label", "role=recorder"])
                _ = try cluster.worker(connect: pool, name: "pool-plain", concurrency: 4)
                // Both there before the run: the plain worker could take the elements if the pool let it.
                let joined = await poolProcess.waitForOutput(timeout: 20) { _, stderr in
                    stderr.contains("worker pool-plain joined") && stderr.contains("worker pool-rec has labels role=recorder")
                }
                try #require(joined, "\(poolProcess.transcript)")
                let pooled = try PoolTests.run(cluster, file, pool: pool, label: "pooled", extra: ["--json", cluster.path("pooled.json")])
                #expect(await pooled.waitForExit(timeout: 60) == .exit(0), "\(pooled.transcript)")
                for (summary, recorder, other) in [(run.stdout, "rec", "plain"), (pooled.stdout, "pool-rec", "pool-plain")] {
                    let byWorker = Self.workersByLine(summary)
                    #expect(byWorker == [recorder: 12], "every placed element ran on \(recorder), none on \(other)\n\(summary)")
                }
            }
        }

        @Test func aStepPlacedOnLabelsNobodyHasFailsAfterTheWorkerTimeoutNamingThem() async throws {
            try await withCluster { cluster in
                let file = try cluster.write("nobody.yaml", Self.placedFlow(on: "{role: camera, site: b}", count: 2))
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "2"]
                                                  + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "rec", concurrency: 2, extra: ["--label", "role=recorder"])
                #expect(await run.waitForExit(timeout: 60) == .exit(3), "\(run.transcript)")
                let text = run.transcript
                #expect(text.contains("no worker has the labels role=camera, site=b"), "\(text)")
                #expect(text.contains("--label role=camera --label site=b"), "\(text)")
            }
        }

        /// `each: worker` (issue 50 item 3): a listing on every worker `on:` allows, joined in
        /// worker-name order, each file saying which worker listed it; not through a pool.
        @Test func aListingWithEachWorkerRunsOnEveryLabelledWorkerAndSaysWhereEachFileIs() async throws {
            try await withCluster { cluster in
                let data = cluster.path("data")
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
                for name in ["a.txt", "b.txt"] { FileManager.default.createFile(atPath: "\(data)/\(name)", contents: Data(name.utf8)) }
                let file = try cluster.write("each.yaml", """
                    flow: each
                    steps:
                      - op: ListFilesOp
                        each: worker
                        on: {role: recorder}
                        with: {path: \(data)}
                      - group: {op: SleepOp, input: files, output: slept, maxConcurrent: 4, with: {ms: 1}}

                    """)
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30", "--min-workers", "3"]
                                                  + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                for name in ["w2", "w1"] {
                    _ = try cluster.worker(connect: endpoint, name: name, concurrency: 2, extra: ["--label", "role=recorder"])
                }
                _ = try cluster.worker(connect: endpoint, name: "w3", concurrency: 2)
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                let summary = run.stdout
                #expect(summary.contains("[ListFilesOp @ w1] DidFinish") && summary.contains("[ListFilesOp @ w2] DidFinish"), "\(summary)")
                #expect(!summary.contains("[ListFilesOp @ w3]") && !summary.contains("[ListFilesOp @ coordinator]"), "\(summary)")
                let files = summary.split(separator: "\n").first { $0.hasPrefix("files: ") } ?? ""
                let listedBy = files.matches(of: /"worker": "(w[0-9])"/).map { String($0.1) }
                #expect(listedBy == ["w1", "w1", "w2", "w2"], "\(files)")
                #expect(files.matches(of: /"path": "[^"]*\/data\/a\.txt"/).count == 2, "\(files)")

                // Through a pool the run sees the pool, not its workers: the step says so.
                let (_, pool) = try await PoolTests.startPool(cluster)
                _ = try cluster.worker(connect: pool, name: "pooled", concurrency: 2, extra: ["--label", "role=recorder"])
                let pooled = try PoolTests.run(cluster, file, pool: pool, label: "pooled")
                #expect(await pooled.waitForExit(timeout: 60) == .exit(1), "\(pooled.transcript)")
                #expect(pooled.stdout.contains("a step with each: worker runs on a run's own workers"), "\(pooled.stdout)")
            }
        }
    }
}
