import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// `affinity: source` at scale and across a crash (issue 50's follow-ups): hosts take turns in
    /// a listing joined host after host, and a run killed mid-group and resumed while one host's
    /// worker is missing goes on with the host that is there, says once what waits for the
    /// other, and runs those elements on that host when its worker joins.
    @Suite struct AffinityResume {
        /// Two hosts list the same 6,000 files with `each: worker` (joined h1's, then h2's) and
        /// each file goes back to its host. The group hands over 2,048 elements ahead: in index
        /// order h2's worker would get none until about 3,900 of h1's had finished; the hosts
        /// take turns instead, so both workers run from the start.
        @Test func hostsTakeTurnsWhenAListingIsJoinedHostAfterHost() async throws {
            try await withCluster { cluster in
                let data = cluster.path("data")
                try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
                for index in 0..<6_000 { FileManager.default.createFile(atPath: "\(data)/f\(index)", contents: nil) }
                let summary = cluster.path("summary.txt")
                let file = try cluster.write("blocks.yaml", """
                    flow: blocks
                    steps:
                      - op: ListFilesOp
                        each: worker
                        with: {path: \(data)}
                      - group: {op: SleepOp, input: files, output: slept, maxConcurrent: 64, affinity: source, with: {ms: 0}}

                    """)
                let run = try cluster.coordinator(["run", file, "--bind", "tcp://127.0.0.1:*", "--min-workers", "2",
                                                   "--summary", summary] + ClusterScope.fastHeartbeat, label: "run")
                let endpoint = try await run.listeningEndpoint()
                _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 32, extra: ["--label", "host=h1"])
                _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 32, extra: ["--label", "host=h2"])
                #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript.suffix(3000))")
                // The summary's lines in the order the elements' results came.
                let lines = try String(contentsOfFile: summary, encoding: .utf8).split(separator: "\n").filter { $0.contains("SleepOp") }
                let workers = lines.compactMap { $0.firstMatch(of: /@ (w[12])\]/)?.1 }.map(String.init)
                #expect(Set(workers.prefix(300)) == ["w1", "w2"], "the first results: \(Dictionary(grouping: workers.prefix(300)) { $0 }.mapValues(\.count))")
                #expect(workers.filter { $0 == "w2" }.count >= 6_000, "\(workers.count) element lines")
            }
        }

        /// 40 elements, the first 20 from host h1 and the others from h2; each appends its element to `log`
        /// and announces its start on `starts`, then sleeps 50 ms.
        static func flow(log: String, starts: String) -> String {
            let items = (0..<40).map { "{path: e\($0), host: h\($0 < 20 ? 1 : 2)}" }.joined(separator: ", ")
            return """
                flow: affinity-resume
                bucket: {items: [\(items)]}
                steps:
                  - group:
                      op: ShellOp
                      input: items
                      output: done
                      maxConcurrent: 2
                      affinity: source
                      with: {shell: true, command: "echo \\"$1\\" >> '\(log)'; echo \\"$1\\" >> '\(starts)'; sleep 0.05"}
                """
        }

        /// The workers that ran each element, by its path, from a `--json` report.
        static func workersByPath(_ report: String) throws -> [String: String] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any] ?? [:]
            var byPath: [String: String] = [:]
            for operation in object["operations"] as? [[String: Any]] ?? [] where operation["groupOutputKey"] as? String == "done" {
                guard let index = operation["groupIndex"] as? Int, let worker = operation["worker"] as? String else { continue }
                byPath["e\(index)"] = worker
            }
            return byPath
        }

        @Test func aResumeWithOneHostMissingGoesOnAndRunsItsElementsThereWhenItJoins() async throws {
            try await withCluster { cluster in
                let log = cluster.path("ran.log")
                let starts = try ElementStarts(cluster.path("starts.fifo"))
                defer { starts.close() }
                let file = try cluster.write("affinity-resume.yaml", Self.flow(log: log, starts: starts.path))
                let endpoint = "tcp://127.0.0.1:\(try LoopbackPort.free())"
                let run = try cluster.coordinator(["run", file, "--quiet", "--bind", endpoint, "--worker-timeout", "60"] + ClusterScope.fastHeartbeat,
                                                  label: "run")
                let first = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2, extra: ["--label", "host=h1"])
                let gone = try cluster.worker(connect: endpoint, name: "w2", concurrency: 2, extra: ["--label", "host=h2"])
                let runID = try await run.killAfterStarts(starts, count: 10)
                // Host h2 is gone with its worker; h1's worker stays and joins the resume.
                gone.send(SIGKILL)
                #expect(await gone.waitForExit(timeout: 10) == .signal(SIGKILL))
                let ranBefore = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
                #expect(ranBefore < 40, "the run finished before the kill")

                let report = cluster.path("resumed.json")
                let resumed = try cluster.coordinator(["resume", runID, "--quiet", "--bind", endpoint, "--worker-timeout", "60", "--json", report]
                                                      + ClusterScope.fastHeartbeat, label: "resume")
                // h1's elements go on; h2's wait, said once, until a worker of h2 joins.
                let said = await resumed.waitForOutput(timeout: 60) { _, stderr in stderr.contains("wait for a worker with host=h2") }
                #expect(said, "\(resumed.transcript)\n\(first.transcript)")
                #expect(resumed.isRunning, "the resume ended without h2's elements: \(resumed.transcript)")
                let joining = try cluster.worker(connect: endpoint, name: "w2b", concurrency: 2, extra: ["--label", "host=h2"])
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript)\n\(joining.transcript)")
                #expect(resumed.stderr.components(separatedBy: "wait for a worker with host=h2").count == 2, "said once: \(resumed.stderr)")

                // Every element, once, but for those near the kill: in flight, or finished in the
                // journal's last tenth of a second (RunJournal.flushInterval).
                let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                let paths = lines.compactMap { $0.firstMatch(of: /"path" ?: ?"(e[0-9]+)"/)?.1 }.map(String.init)
                #expect(paths.count == lines.count, "\(lines.prefix(3))")
                #expect(Set(paths).count == 40, "\(Set(paths).count) distinct elements ran")
                let before = paths.prefix(ranBefore), after = paths.dropFirst(ranBefore)
                let twice = Set(before).intersection(after)
                #expect(twice.isSubset(of: before.suffix(8)), "ran again though far from the kill: \(twice.sorted())")
                // Each element the resume ran, on its own host's worker: h2's on the one that joined.
                let workers = try Self.workersByPath(report)
                #expect(after.contains { Int($0.dropFirst())! >= 20 }, "no element of h2 was left for the resume")
                for path in after {
                    let expected = Int(path.dropFirst())! < 20 ? "w1" : "w2b"
                    #expect(workers[path] == expected, "\(path) ran on \(workers[path] ?? "?")")
                }
                #expect(resumed.stdout.contains("output size: 40"), "\(resumed.stdout)")
            }
        }
    }
}
