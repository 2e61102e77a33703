import FlowTestSupport
import Foundation
import Testing

/// A group reading its elements from a file (`input: {file:}`, issue 49) on a real cluster: a
/// run killed with SIGKILL half way resumes without running again what finished and hands each
/// element the same line of the file as before; `status` says how many elements are listed while
/// the file is still being read.
@Suite struct InputFileGroupTests {
    /// A file of `count` lines, `0` to `count - 1`.
    static func numbers(_ cluster: ClusterScope, count: Int) throws -> String {
        try cluster.write("items.txt", (0..<count).map(String.init).joined(separator: "\n") + "\n")
    }

    @Test func aKilledGroupOverAFileResumesWithEveryLineOnceAndItsOutputsWhole() async throws {
        try await withCluster { cluster in
            let count = 2_500
            let items = try Self.numbers(cluster, count: count)
            let log = cluster.path("tries.log")
            let outputs = cluster.path("outputs.jsonl")
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            // Each element logs its line and its try, announces itself on the FIFO, and puts
            // out its line.
            let flowFile = try cluster.write("from-file.yaml", """
                flow: from-file
                steps:
                  - group:
                      op: ShellOp
                      input: {file: \(items)}
                      output: {file: \(outputs)}
                      maxConcurrent: 4
                      with: {shell: true, command: "echo $1 $FLOW_ATTEMPT >> '\(log)'; echo $1 >> '\(starts.path)'; printf %s \\"$1\\"; sleep 0.01"}
                """)
            let coordinator = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1", "--concurrency", "4"], label: "killed")
            let runID = try await RunControlTests.runID(of: coordinator)
            // Past the first page of 1,000 lines, so that the resume reads the file again from
            // its start and skips what the journal holds.
            let enough = await starts.waitForMore(than: 1_199, before: ContinuousClock.now + .seconds(90))
            #expect(enough, "1,200 elements never ran within 90 s (\(starts.started) did)\n\(coordinator.transcript)")
            let workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
            coordinator.send(SIGKILL)
            #expect(await coordinator.waitForExit(timeout: 10) == .signal(SIGKILL))
            #expect(await ProcessTable.waitUntilGone(workers, timeout: 10).isEmpty)
            let before = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
            #expect(before < count, "the run finished before the kill")

            let resumed = try cluster.coordinator(["resume", runID, "--quiet", "--workers", "1"], label: "resume")
            #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript.suffix(3000))")
            let tries = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
                line.split(separator: " ").compactMap { Int($0) }
            }
            let afterResume = tries.dropFirst(before)
            // Every line ran; after the resume, only what had not finished, and past the kill only
            // first tries.
            #expect(Set(tries.compactMap(\.first)) == Set(0..<count))
            let again = Set(afterResume.filter { $0.last == 2 }.compactMap(\.first))
            let fresh = Set(afterResume.filter { $0.last == 1 }.compactMap(\.first))
            #expect(fresh.contains(count - 1) && (fresh.min() ?? 0) > (again.max() ?? 0), "first tries only past those that may have run")
            #expect(afterResume.count < count - 1_000, "the resume ran again what had finished: \(afterResume.count) tries")
            // The output file is whole, each element's output its own line of the input.
            var written: [Int: String] = [:]
            for line in try String(contentsOfFile: outputs, encoding: .utf8).split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                let index = try #require(object?["index"] as? Int)
                written[index] = object?["output"] as? String
            }
            #expect(written.count == count)
            #expect(written.allSatisfy { $0.value == String($0.key) }, "an element's output is another line's")
        }
    }

    @Test func statusSaysHowManyAreListedWhileTheFileIsStillRead() async throws {
        try await withCluster { cluster in
            let items = try Self.numbers(cluster, count: 2_500)
            let gate = cluster.path("gate")
            let flowFile = try cluster.write("listing.yaml", """
                flow: listing
                steps:
                  - group:
                      op: ShellOp
                      input: {file: \(items)}
                      maxConcurrent: 2
                      with: {command: "while [ ! -e '\(gate)' ]; do sleep 0.05; done", shell: true, timeout: 600}
                """)
            let run = try cluster.coordinator(["run", flowFile, "--workers", "1"], label: "run")
            let id = try await RunControlTests.runID(of: run)
            // The elements wait at the gate: only the first page is read (a query may come
            // before it is, when 0 are listed).
            let (status, failures) = await RunControlTests.pollStatus(cluster, id, run: run) { ($0["listed"] as? Int ?? 0) > 0 }
            #expect(failures.isEmpty, "\(failures)")
            #expect(status["listed"] as? Int == 1_000 && status["total"] == nil, "\(status)")
            let text = try cluster.coordinator(["status", id, "--timeout", "30"], label: "status-text")
            #expect(await text.waitForExit(timeout: 40) == .exit(0))
            #expect(text.stdout.contains("ShellOp: listed 1,000 (still listing), done 0"), "\(text.stdout)")
            FileManager.default.createFile(atPath: gate, contents: nil)
            #expect(await run.waitForExit(timeout: 120) == .exit(0), "\(run.transcript.suffix(3000))")
            #expect(run.stderr.contains("group ShellOp: 2500/2500 done, 0 failed"), "\(run.stderr.suffix(2000))")
        }
    }
}
