import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A run whose `ListFilesOp` fed a group and was killed goes on walking, when resumed, from
    /// the page its journal names instead of walking the tree again (issue 49), from real
    /// coordinator and worker processes.
    @Suite struct FolderListingResume {
        @Test func aKilledWalkGoesOnFromItsLastPageWhenResumed() async throws {
            try await withCluster { cluster in
                // 50 files in 5 folders, listed 5 at a time.
                let folder = cluster.directory.appendingPathComponent("tree")
                for index in 0..<50 {
                    let sub = folder.appendingPathComponent(String(format: "d%d", index / 10))
                    try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
                    try Data("\(index)".utf8).write(to: sub.appendingPathComponent(String(format: "f%02d", index)))
                }
                // Each element's path goes to a log and announces its start on a FIFO; the run
                // is killed once 22 have started, one at a time.
                let log = cluster.path("paths.log")
                let starts = try ElementStarts(cluster.path("starts.fifo"))
                defer { starts.close() }
                let flowFile = try cluster.write("walk.yaml", """
                    flow: walk
                    steps:
                      - op: ListFilesOp
                        with: {path: "\(folder.path)", recursive: true, pageSize: 5}
                      - group:
                          op: ShellOp
                          input: files
                          output: seen
                          maxConcurrent: 1
                          with: {shell: true, command: "echo \\"$1\\" >> '\(log)'; echo x >> '\(starts.path)'; sleep 0.02"}
                    """)
                let killed = try cluster.coordinator(["run", flowFile, "--workers", "1"], label: "killed")
                let runID = try await killed.killAfterStarts(starts, count: 22)
                let before = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
                #expect(before < 50, "the run finished before the kill")

                let resumed = try cluster.coordinator(["resume", runID, "--workers", "1"], label: "resume")
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript.suffix(3000))")
                #expect(resumed.stdout.contains("listing \(folder.path) goes on where the run's earlier life left it (from d"),
                        "\(resumed.stdout.suffix(3000))")
                // The resumed walk gave fewer files than the tree holds: it did not start over.
                let listed = try #require(resumed.stdout.firstMatch(of: /listed ([0-9]+) files/)?.1).description
                #expect((Int(listed) ?? 50) < 50 && (Int(listed) ?? 0) >= 50 - before, "listed \(listed) after \(before) had started")
                let all = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
                #expect(Set(all).count == 50, "\(Set(all).count) distinct files ran")
                // Again only what the journal did not hold: the element in flight at the kill,
                // and those whose results were in the journal's last unwritten batch (at most
                // 100 ms of them; each element takes at least 20 ms).
                #expect(all.count - 50 <= 6, "\(all.count - 50) ran twice")
                #expect(resumed.stdout.contains("output size: 50"), "\(resumed.stdout.suffix(2000))")
            }
        }
    }
}
