import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTestsSecondLane {
    /// A journal that cannot be written (its disk is full) stops the run at once, as interrupted
    /// and with a non-zero exit, and a resume once there is room runs only what was not recorded.
    @Suite struct JournalOnAFullDisk {
        /// A tmpfs mounted on `folder` for `body`, unmounted however `body` ends; `nil` (with the
        /// test failed and told why) when it cannot be mounted: the test needs root.
        static func withTmpfs<T>(at folder: String, size: String, _ body: () async throws -> T) async throws -> T? {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let mounted = try mount(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", folder])
            guard mounted.status == 0 else {
                Issue.record("""
                    this test needs a small tmpfs for the journal and could not mount one on \(folder) \
                    (uid \(getuid()); tests are meant to run as root): mount exited \(mounted.status): \(mounted.message)
                    """)
                return nil
            }
            // Lazily: a coordinator a failed expectation left running must not keep it mounted.
            defer { _ = try? mount(["-l", folder], program: "umount") }
            return try await body()
        }

        /// Runs `mount` (or `program`) and returns its status and what it said.
        @discardableResult
        static func mount(_ arguments: [String], program: String = "mount") throws -> (status: Int32, message: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let exit = try ProcessLaunch.run(process, unblockingSignals: false)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            // The kernel's word, not Foundation's (ProcessLaunch.terminate says why).
            let ended = exit.waitBlocking(timeout: .seconds(60))
            return (ended?.status ?? -1, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }

        /// The lines of `log`: one per element that ran, its index.
        static func ran(_ log: String) -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        @Test func aJournalThatCannotBeWrittenStopsTheRunWhichResumesOnceThereIsRoom() async throws {
            try await withCluster { cluster in
                let disk = cluster.path("journal-disk")
                _ = try await Self.withTmpfs(at: disk, size: "2m") {
                    let count = 3_000
                    let maxConcurrent = 8
                    // Outside the tmpfs: one line per element that ran, in either life of the run.
                    let log = cluster.path("ran.log")
                    // About 3 KB of output each, kept in the journal: 3,000 of them need 9 MB.
                    let flowFile = try cluster.write("big.yaml", """
                        flow: big
                        bucket: {items: \(Array(0..<count))}
                        steps:
                          - group:
                              op: ShellOp
                              input: items
                              output: outputs
                              maxConcurrent: \(maxConcurrent)
                              with: {shell: true, command: "echo $1 >> '\(log)'; printf '%03000d' $1"}
                        """)
                    let journal = disk + "/run.sqlite"
                    let run = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "2", "--journal", journal])
                    let said = await run.waitForStderr(containing: "journal cannot be written", timeout: 180)
                    // How many had started when the run said so; it may finish the ones in flight.
                    let ranWhenTold = Self.ran(log).count
                    #expect(said, "the run never said its journal could not be written: \(run.transcript.suffix(3000))")
                    #expect(await run.waitForExit(timeout: 60) == .exit(1), "\(run.transcript.suffix(3000))")
                    let ranInFirstLife = Self.ran(log)
                    #expect(ranInFirstLife.count < count, "the run went on to the end with a full journal")
                    // The elements in flight (and held ahead for the workers) at most, not the rest.
                    #expect(ranInFirstLife.count - ranWhenTold <= 4 * maxConcurrent,
                            "\(ranInFirstLife.count - ranWhenTold) elements started after the journal failed")

                    // What failed, the room left, and the command that goes on.
                    let stderr = run.stderr
                    #expect(stderr.contains("error: the run's journal cannot be written: \(journal): cannot write "), "\(stderr.suffix(3000))")
                    #expect(stderr.contains(#/database or disk is full \(([0-9]+ bytes|[0-9.]+ KiB) free in /#), "\(stderr.suffix(3000))")
                    #expect(stderr.contains(" free in \(disk)). Stopping the run: no new task starts"), "\(stderr.suffix(3000))")
                    #expect(stderr.contains("Make room there, then go on with: flow-coordinator resume \(journal)"), "\(stderr.suffix(3000))")
                    #expect(!stderr.contains("journal is incomplete"), "the run's end was not recorded: \(stderr.suffix(3000))")
                    #expect(stderr.contains("stopped before its end; go on where it stopped with: flow-coordinator resume \(journal)"),
                            "\(stderr.suffix(3000))")
                    #expect(run.stdout.contains("[Flow] cancelled"), "\(run.stdout.suffix(2000))")

                    let runs = try cluster.coordinator(["runs", "--dir", disk], label: "runs")
                    #expect(await runs.waitForExit(timeout: 30) == .exit(0), "\(runs.transcript)")
                    let line = runs.stdoutLines.last { !$0.isEmpty } ?? ""
                    #expect(line.contains(" interrupted "), "\(runs.stdout)")

                    // Room, then the rest of the run.
                    let grown = try Self.mount(["-o", "remount,size=64m", disk])
                    try #require(grown.status == 0, "cannot grow the tmpfs: \(grown.message)")
                    let resumed = try cluster.coordinator(["resume", journal, "--quiet", "--workers", "2"], label: "resume")
                    #expect(await resumed.waitForExit(timeout: 300) == .exit(0), "\(resumed.transcript.suffix(3000))")
                    let replayedText = try #require(resumed.stdout.firstMatch(of: /\[Journal\] resumed run [0-9a-f-]+ \(.*\): ([0-9]+) result/)?.1)
                    let replayed = try #require(Int(replayedText))
                    #expect(replayed > 0, "the journal kept nothing of the first life")
                    #expect(resumed.stdout.contains("output size: \(count)"), "\(resumed.stdout.suffix(2000))")
                    // Exactly what the journal did not record ran again, and every element ran.
                    let all = Self.ran(log)
                    #expect(all.count - ranInFirstLife.count == count - replayed,
                            "the resume ran \(all.count - ranInFirstLife.count) elements; the journal had \(replayed) of \(count)")
                    #expect(Set(all) == Set((0..<count).map(String.init)))

                    let runsAfter = try cluster.coordinator(["runs", "--dir", disk], label: "runs after")
                    #expect(await runsAfter.waitForExit(timeout: 30) == .exit(0), "\(runsAfter.transcript)")
                    let after = runsAfter.stdoutLines.last { !$0.isEmpty } ?? ""
                    #expect(after.contains("succeeded (resumed 1x)") && after.contains("\(count)/\(count)"), "\(runsAfter.stdout)")
                }
            }
        }
    }
}
