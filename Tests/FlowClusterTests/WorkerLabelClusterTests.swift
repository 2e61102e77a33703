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

        @Test func aPlacedGroupRunsOnlyOnWorkersWithItsLabelsDirectAndThroughAPoolOfTwoRuns() async throws {
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
                // Two runs at once on the pool's labelled workers: each placed where its on: says.
                let onPlain = try cluster.write("on-plain.yaml", Self.placedFlow(on: "{name: pool-plain}"))
                let pooled = try PoolTests.run(cluster, file, pool: pool, label: "pooled")
                let other = try PoolTests.run(cluster, onPlain, pool: pool, label: "other")
                #expect(await pooled.waitForExit(timeout: 60) == .exit(0), "\(pooled.transcript)")
                #expect(await other.waitForExit(timeout: 60) == .exit(0), "\(other.transcript)")
                for (summary, worker) in [(run.stdout, "rec"), (pooled.stdout, "pool-rec"), (other.stdout, "pool-plain")] {
                    let byWorker = Self.workersByLine(summary)
                    #expect(byWorker == [worker: 12], "every placed element ran on \(worker)\n\(summary)")
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
        /// worker-name order, each file saying which worker listed it; directly and through a pool.
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

                // Through a pool: on each of the pool's workers `on:` allows, as the pool lists them.
                let (poolProcess, pool) = try await PoolTests.startPool(cluster)
                for name in ["p2", "p1"] {
                    _ = try cluster.worker(connect: pool, name: name, concurrency: 2, extra: ["--label", "role=recorder"])
                }
                _ = try cluster.worker(connect: pool, name: "p3", concurrency: 2)
                let joined = await poolProcess.waitForOutput(timeout: 30) { _, stderr in
                    stderr.contains("worker p3 joined") && ["p1", "p2"].allSatisfy { stderr.contains("worker \($0) has labels role=recorder") }
                }
                try #require(joined, "\(poolProcess.transcript)")
                let pooled = try PoolTests.run(cluster, file, pool: pool, label: "pooled")
                #expect(await pooled.waitForExit(timeout: 60) == .exit(0), "\(pooled.transcript)")
                let pooledSummary = pooled.stdout
                #expect(pooledSummary.contains("[ListFilesOp @ p1] DidFinish") && pooledSummary.contains("[ListFilesOp @ p2] DidFinish"),
                        "\(pooledSummary)")
                #expect(!pooledSummary.contains("[ListFilesOp @ p3]"), "\(pooledSummary)")
                let pooledFiles = pooledSummary.split(separator: "\n").first { $0.hasPrefix("files: ") } ?? ""
                #expect(pooledFiles.matches(of: /"worker": "(p[0-9])"/).map { String($0.1) } == ["p1", "p1", "p2", "p2"], "\(pooledFiles)")
            }
        }

        /// The worker each element of the group writing `output` ran on, by index, from a `--json` report.
        static func workersByIndex(_ report: String, output: String) throws -> [Int: String] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
            var byIndex: [Int: String] = [:]
            for operation in object["operations"] as? [[String: Any]] ?? [] where operation["groupOutputKey"] as? String == output {
                if let index = operation["groupIndex"] as? Int, let worker = operation["worker"] as? String { byIndex[index] = worker }
            }
            return byIndex
        }

        /// `affinity:` (issue 50 item 4): files listed with `each: worker` go back to the host
        /// that listed them (`source`), and an element whose host has no worker fails naming it;
        /// with `prefer` it runs anywhere instead.
        @Test func eachElementGoesBackToItsHostOrAnywhereWhenPreferred() async throws {
            try await withCluster { cluster in
                let data = cluster.path("data")
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
                for name in ["a.txt", "b.txt"] { FileManager.default.createFile(atPath: "\(data)/\(name)", contents: Data(name.utf8)) }
                let report = cluster.path("affinity.json")
                let file = try cluster.write("affinity.yaml", """
                    flow: affinity
                    bucket:
                      elsewhere: [{path: x, host: hz}, {path: y, host: hz}]
                    steps:
                      - op: ListFilesOp
                        each: worker
                        on: {role: recorder}
                        with: {path: \(data)}
                      - group: {op: SleepOp, input: files, output: back, maxConcurrent: 8, affinity: source, with: {ms: 1}}
                      - group: {op: SleepOp, input: elsewhere, output: anywhere, maxConcurrent: 8, affinity: prefer, with: {ms: 1}}

                    """)
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30", "--min-workers", "3",
                                                   "--json", report] + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "wa", concurrency: 4, extra: ["--label", "role=recorder", "--label", "host=ha"])
                _ = try cluster.worker(connect: endpoint, name: "wb", concurrency: 4, extra: ["--label", "role=recorder", "--label", "host=hb"])
                _ = try cluster.worker(connect: endpoint, name: "wc", concurrency: 4, extra: ["--label", "host=hc"])
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                // Listed in worker order: wa's two files, then wb's; each ran where it was listed.
                #expect(try Self.workersByIndex(report, output: "back") == [0: "wa", 1: "wa", 2: "wb", 3: "wb"], "\(run.stdout)")
                #expect(try Self.workersByIndex(report, output: "anywhere").count == 2, "\(run.stdout)")

                // The same host nobody has, with source: the elements wait, then fail naming it.
                let strict = try cluster.write("strict.yaml", """
                    flow: strict
                    bucket:
                      elsewhere: [{path: x, host: hz}]
                    steps:
                      - group: {op: SleepOp, input: elsewhere, output: never, affinity: source, with: {ms: 1}}

                    """)
                let failing = try cluster.coordinator(["run", strict, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "2"]
                                                      + ClusterScope.fastHeartbeat, label: "strict")
                let strictEndpoint = try await failing.listeningEndpoint()
                _ = try cluster.worker(connect: strictEndpoint, name: "wd", concurrency: 2, extra: ["--label", "host=hd"])
                #expect(await failing.waitForExit(timeout: 60) == .exit(3), "\(failing.transcript)")
                #expect(failing.transcript.contains("no worker has the labels host=hz"), "\(failing.transcript)")
                #expect(failing.transcript.contains("1 task(s) of SleepOp wait for a worker with host=hz"), "said while waiting\n\(failing.transcript)")
            }
        }

        /// The main job across hosts (issue 50 items 3, 4 and 6, on one machine): each "host" lists
        /// its files with `each: worker`, each file uploads from the worker of its host
        /// (`affinity: source`) to `HOST/NAME` (`hostFolder`), to a real nginx, byte for byte.
        @Test func filesListedOnEachHostUploadFromThatHostUnderItsFolder() async throws {
            try await uploadFromEachHost(workers: ["wa", "wb"], prefix: "/up") { cluster, file, report in
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--worker-timeout", "30", "--min-workers", "2",
                                                   "--json", report] + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "wa", concurrency: 2, extra: ["--label", "role=recorder", "--label", "host=ha"])
                _ = try cluster.worker(connect: endpoint, name: "wb", concurrency: 2, extra: ["--label", "role=recorder", "--label", "host=hb"])
                return run
            }
        }

        /// The same through a pool: the run lists on each of the pool's recorders (`each: worker`
        /// asks the pool for them) and each file goes up from the host that listed it.
        @Test func filesListedOnEachHostOfAPoolUploadFromThatHostUnderItsFolder() async throws {
            try await uploadFromEachHost(workers: ["pa", "pb"], prefix: "/pooled") { cluster, file, report in
                let (poolProcess, pool) = try await PoolTests.startPool(cluster)
                _ = try cluster.worker(connect: pool, name: "pb", concurrency: 2, extra: ["--label", "role=recorder", "--label", "host=hb"])
                _ = try cluster.worker(connect: pool, name: "pa", concurrency: 2, extra: ["--label", "role=recorder", "--label", "host=ha"])
                _ = try cluster.worker(connect: pool, name: "pc", concurrency: 2, extra: ["--label", "host=hc"])
                let joined = await poolProcess.waitForOutput(timeout: 30) { _, stderr in
                    ["pa", "pb", "pc"].allSatisfy { stderr.contains("worker \($0) has labels") }
                }
                try #require(joined, "\(poolProcess.transcript)")
                return try PoolTests.run(cluster, file, pool: pool, label: "pooled", extra: ["--json", report])
            }
        }

        /// Two files listed with `each: worker` on the recorders `workers` (hosts ha and hb, in that
        /// order) of the run `start` begins, uploaded with `affinity: source` and `hostFolder`
        /// to `prefix`: each host's copy arrives under its folder, sent by that host's worker.
        func uploadFromEachHost(workers: [String], prefix: String,
                                start: (ClusterScope, String, String) async throws -> ChildProcess) async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let data = cluster.path("data")
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
                for (index, name) in ["a.bin", "b.bin"].enumerated() {
                    try PatternBytes.make(count: 3_000 + index * 977, multiplier: 13, offset: index).write(to: URL(fileURLWithPath: "\(data)/\(name)"))
                }
                let report = cluster.path("upload.json")
                let file = try cluster.write("hosts.yaml", """
                    flow: hosts
                    steps:
                      - op: ListFilesOp
                        each: worker
                        on: {role: recorder}
                        with: {path: \(data)}
                      - group: {op: UploadFileOp, input: files, output: urls, maxConcurrent: 4, affinity: source,
                                with: {url: "\(server.url(prefix))", hostFolder: true}}

                    """)
                let run = try await start(cluster, file, report)
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                for host in ["ha", "hb"] {
                    for name in ["a.bin", "b.bin"] {
                        let stored = try? Data(contentsOf: server.storedFile("\(prefix)/\(host)/\(name)"))
                        #expect(stored == (try? Data(contentsOf: URL(fileURLWithPath: "\(data)/\(name)"))), "\(host)/\(name)\n\(run.stdout)")
                    }
                }
                let expected = [0: workers[0], 1: workers[0], 2: workers[1], 3: workers[1]]
                #expect(try Self.workersByIndex(report, output: "urls") == expected, "\(run.stdout)")
            }
        }
    }
}
