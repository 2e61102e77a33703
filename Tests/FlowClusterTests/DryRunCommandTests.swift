import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// `flow-coordinator run --dry-run` with a real nginx: it lists, asks with `skipExisting`'s
    /// HEADs, writes nothing (no PUT in the server's log, no shell command run, no journal), and
    /// its counts are what the real run then does.
    @Suite struct DryRunCommand {
        static func flow(folder: String, target: String, marker: String) -> String {
            """
            flow: dry
            steps:
              - op: ListFilesOp
                with: {path: "\(folder)"}
              - group:
                  op: UploadFileOp
                  input: files
                  output: uploaded
                  maxConcurrent: 2
                  with: {url: "\(target)", skipExisting: true}
              - op: ShellOp
                with: {command: [touch, "\(marker)"]}
            """
        }

        @Test func aDryRunWritesNothingAndItsCountsAreWhatTheRealRunSends() async throws {
            try await withUploadServer { server, cluster, folder in
                let sizes = ["a.bin": 1_000, "b.bin": 2_000, "c.bin": 3_000, "d.bin": 4_000, "e.bin": 5_000]
                for (name, size) in sizes { try Data(repeating: 7, count: size).write(to: folder.appendingPathComponent(name)) }
                // On the server already: b and d at their size (skipped), c at another size (sent again).
                let stored = server.storedFile("/dry/b.bin").deletingLastPathComponent()
                try FileManager.default.createDirectory(at: stored, withIntermediateDirectories: true)
                for (name, size) in ["b.bin": 2_000, "d.bin": 4_000, "c.bin": 10] {
                    try Data(repeating: 1, count: size).write(to: server.storedFile("/dry/" + name))
                }
                let marker = cluster.path("MARKER")
                let flowFile = try cluster.write("dry.yaml", Self.flow(folder: folder.path, target: server.url("/dry"), marker: marker))

                let dry = try cluster.start("flow-coordinator", ["run", flowFile, "--dry-run"], label: "dry")
                _ = await dry.waitForExit(timeout: 60)

                #expect(dry.termination == .exit(0), "\(dry.transcript)")
                let log = server.accessLog()
                #expect(log.filter { $0.method != "HEAD" }.isEmpty, "a dry run wrote: \(log)")
                #expect(log.filter { $0.method == "HEAD" }.count == 5, "\(log)")
                #expect(!FileManager.default.fileExists(atPath: marker), "the ShellOp ran in a dry run")
                #expect((try? Data(contentsOf: server.storedFile("/dry/c.bin")))?.count == 10)
                #expect(!FileManager.default.fileExists(atPath: cluster.journalFolder), "a dry run left a journal")
                let toSend = 1_000 + 3_000 + 5_000
                #expect(dry.stdout.contains("Dry run: to send 3 files, \(toSend) bytes; skipped 2; "
                                            + "requests made HEAD 5, not made PUT 3; steps not run 1: ShellOp at line 11. Nothing was written."),
                        "\(dry.stdout)")
                #expect(dry.stdout.contains("step 1 ListFilesOp (\(flowFile):3:5): ran (reads only)"), "\(dry.stdout)")
                #expect(dry.stdout.contains("step 2 UploadFileOp ×5 (\(flowFile):5:5): rehearsed: would send 3 (\(toSend) bytes), skip 2"),
                        "\(dry.stdout)")
                #expect(dry.stdout.contains("    skipped b.bin: exists with the same size (2000 bytes) at \(server.url("/dry/b.bin"))"),
                        "\(dry.stdout)")
                #expect(dry.stdout.contains("    skipped d.bin: exists with the same size (4000 bytes)"), "\(dry.stdout)")
                #expect(dry.stdout.contains("step 3 ShellOp (\(flowFile):11:5): not run (writes)"), "\(dry.stdout)")

                let real = try cluster.start("flow-coordinator", ["run", flowFile, "--no-journal"], label: "real")
                _ = await real.waitForExit(timeout: 60)

                #expect(real.termination == .exit(0), "\(real.transcript)")
                let puts = await server.accessLog(waitingFor: 3) { $0.method == "PUT" }.filter { $0.method == "PUT" }.map(\.uri).sorted()
                #expect(puts == ["/dry/a.bin", "/dry/c.bin", "/dry/e.bin"], "the real run did not send what the dry run said")
                #expect(FileManager.default.fileExists(atPath: marker))
            }
        }

        @Test func aDryRunRefusesAJournalAndReports() async throws {
            try await withCluster { cluster in
                let flowFile = try cluster.write("dry.yaml", "flow: dry\nsteps:\n  - op: SleepOp\n")
                let dry = try cluster.start("flow-coordinator", ["run", flowFile, "--dry-run", "--journal", cluster.path("j.sqlite")])
                _ = await dry.waitForExit(timeout: 30)
                #expect(dry.termination == .exit(2), "\(dry.transcript)")
                #expect(dry.stderr.contains("--dry-run keeps no journal"), "\(dry.transcript)")
                let json = try cluster.start("flow-coordinator", ["run", flowFile, "--dry-run", "--json", cluster.path("r.json")])
                _ = await json.waitForExit(timeout: 30)
                #expect(json.termination == .exit(2), "\(json.transcript)")
                #expect(json.stderr.contains("--dry-run prints its plan and writes no --json"), "\(json.transcript)")
                let manifest = try cluster.start("flow-coordinator", ["run", flowFile, "--dry-run", "--manifest", cluster.path("m.jsonl")])
                _ = await manifest.waitForExit(timeout: 30)
                #expect(manifest.termination == .exit(2), "\(manifest.transcript)")
                #expect(manifest.stderr.contains("writes no --manifest"), "\(manifest.transcript)")
                #expect(!FileManager.default.fileExists(atPath: cluster.path("m.jsonl")))
            }
        }
    }
}
