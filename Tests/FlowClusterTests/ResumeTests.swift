import FlowTestSupport
import Foundation
import Testing

extension ClusterIntegrationTests {
    /// Run journals: `resume` goes on after a crash without sending again what had finished,
    /// `--retry-failed` runs only what failed, `runs` says how each run stands.
    @Suite struct ResumingRuns {
        static let uploadFlow = """
            flow: upload
            bucket: {folder: ./photos, uploadURL: http://127.0.0.1:1/none}
            steps:
              - op: ListFilesOp
                with: {path: "${folder}"}
              - group: {op: UploadFileOp, input: files, output: uploadedURLs, maxConcurrent: 8, with: {url: "${uploadURL}"}}
            """

        /// `count` files of distinct content in a new folder of the scope.
        static func makeFiles(_ cluster: ClusterScope, count: Int) throws -> URL {
            let folder = cluster.directory.appendingPathComponent("photos")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for index in 0..<count {
                let bytes = PatternBytes.make(count: 2_000 + index % 97, multiplier: 31, offset: index)
                try bytes.write(to: folder.appendingPathComponent(String(format: "p-%04d.jpg", index)))
            }
            return folder
        }

        /// The `runs` listing's line for the only run in the scope.
        static func runsLine(_ cluster: ClusterScope) async throws -> String {
            let runs = try cluster.coordinator(["runs"], label: "runs")
            #expect(await runs.waitForExit(timeout: 30) == .exit(0), "\(runs.transcript)")
            let lines = runs.stdoutLines.filter { !$0.isEmpty }
            #expect(lines.count == 2, "one header and one run: \(runs.stdout)")
            return lines.last ?? ""
        }

        /// Runs `script` (Python, with `db`, an `sqlite3` connection to `file`, committed and
        /// closed afterwards) and returns what it printed: how these tests make journals of other
        /// formats and look inside them.
        static func sqlite(_ cluster: ClusterScope, _ file: String, _ script: String, label: String) async throws -> String {
            let program = "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n" + script + "\ndb.commit(); db.close()\n"
            let python = try cluster.startSystem("/usr/bin/env", ["python3", "-c", program, file], label: label)
            #expect(await python.waitForExit(timeout: 30) == .exit(0), "\(python.transcript)")
            return python.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A run of a group of `items`, one at a time, each appending its item to the log whose
        /// path it returns, where element `failing` fails; journalled at `journal` (`nil`: the
        /// default place). The element fails no more once the run is over, so a resume with
        /// `--retry-failed` succeeds. Also returns what the run printed on standard error.
        static func failedRun(_ cluster: ClusterScope, items: [Int], failing: Int, journal: String? = nil) async throws
            -> (log: String, stderr: String) {
            let log = cluster.path("ran.log")
            let mark = cluster.path("fail-\(failing)")
            try Data().write(to: URL(fileURLWithPath: mark))
            let flowFile = try cluster.write("items.yaml", """
                flow: items
                bucket: {items: \(items)}
                steps:
                  - group:
                      op: ShellOp
                      input: items
                      output: done
                      maxConcurrent: 1
                      with: {shell: true, command: "echo $1 >> '\(log)'; test ! -e '\(cluster.path("fail-"))'$1"}
                """)
            let first = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1"] + (journal.map { ["--journal", $0] } ?? []))
            #expect(await first.waitForExit(timeout: 60) == .exit(1), "\(first.transcript)")
            try FileManager.default.removeItem(atPath: mark)
            return (log, first.stderr)
        }

        @Test func aKilledUploadResumesWithoutSendingAgainWhatHadFinished() async throws {
            let server = try NginxServer()
            try await server.start()
            defer { server.stop() }
            try await withCluster { cluster in
                let count = 2_000
                let folder = try Self.makeFiles(cluster, count: count)
                let flowFile = try cluster.write("upload.yaml", Self.uploadFlow)
                let coordinator = try cluster.coordinator(["run", flowFile, "--quiet", "--set", "folder=\(folder.path)",
                                                           "--set", "uploadURL=\(server.url("/up"))"])
                try #require(await coordinator.waitForOutput(timeout: 30) { _, stderr in stderr.contains("worker-2 joined") || stderr.contains("journal ") })
                let runID = try #require(coordinator.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                // Kill it hard at about 40%.
                // nginx's access log is a file it appends to, with no event to wait on: read every
                // 5 ms, until a deadline that fails the test.
                let deadline = ContinuousClock.now + .seconds(120)
                while server.accessLog().filter({ $0.method == "PUT" }).count < count * 2 / 5, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                #expect(server.accessLog().filter({ $0.method == "PUT" }).count >= count * 2 / 5, "fewer than 40% of the PUTs within 120 s")
                let workers = ProcessTable.children(of: coordinator.processIdentifier, named: "flow-worker")
                coordinator.send(SIGKILL)
                #expect(await coordinator.waitForExit(timeout: 10) == .signal(SIGKILL))
                let putsAtKill = server.accessLog().filter { $0.method == "PUT" }.count
                #expect(putsAtKill < count, "the upload finished before the kill; nothing to resume")
                let survivors = await ProcessTable.waitUntilGone(workers, timeout: 10)
                #expect(survivors.isEmpty, "local workers outlived their killed coordinator: \(survivors)")
                let putsBefore = server.accessLog().filter { $0.method == "PUT" }.count

                let interrupted = try await Self.runsLine(cluster)
                #expect(interrupted.contains(runID) && interrupted.contains(" interrupted "), "\(interrupted)")

                let resumed = try cluster.coordinator(["resume", runID, "--quiet", "--full-summary"], label: "resume")
                #expect(await resumed.waitForExit(timeout: 180) == .exit(0), "\(resumed.transcript.suffix(3000))")
                let replayedText = try #require(resumed.stdout.firstMatch(of: /\[Journal\] resumed run [0-9a-f-]+ \(.*\): ([0-9]+) result/)?.1)
                let replayed = try #require(Int(replayedText))
                // Every file whole.
                for index in 0..<count {
                    let name = String(format: "p-%04d.jpg", index)
                    let arrived = try? Data(contentsOf: server.storedFile("/up/\(name)"))
                    #expect(arrived == (try Data(contentsOf: folder.appendingPathComponent(name))), "\(name) did not arrive intact")
                }
                // Nothing recorded as finished was sent again: the resumed run sent exactly the rest.
                // The ListFilesOp step is not one of the recorded results: it fed the group page by
                // page, so the resume listed again and the group took back by index what it held.
                let putsAfter = server.accessLog().filter { $0.method == "PUT" }.count
                #expect(putsAfter - putsBefore == count - replayed, "resumed run sent \(putsAfter - putsBefore), replayed \(replayed)")
                // What ran twice is only what was in flight, or accepted in the last moments before the kill.
                #expect(putsAfter <= count + 400, "\(putsAfter) PUTs for \(count) files")
                #expect(replayed > count / 5, "the journal kept only \(replayed) results of the \(putsBefore) uploads before the kill")
                // The resumed summary has every element once, and says it resumed once.
                let finished = resumed.stdoutLines.filter { $0.contains("[UploadFileOp ") && $0.contains("DidFinish: successfully") }
                #expect(finished.count == count)
                let uploaded = resumed.stdoutLines.compactMap { $0.firstMatch(of: #/\] uploaded (p-[0-9]{4}\.jpg) /#)?.1 }
                #expect(uploaded.count == count && Set(uploaded).count == count, "each file's upload line once")
                #expect(resumed.stdoutLines.filter { $0.contains("[Journal] resumed") }.count == 1)
                #expect(resumed.stdout.contains("output size: \(count)"))

                let succeeded = try await Self.runsLine(cluster)
                #expect(succeeded.contains("succeeded (resumed 1x)") && succeeded.contains("\(count)/\(count)"), "\(succeeded)")

                // Resuming a finished run does nothing.
                let again = try cluster.coordinator(["resume", runID], label: "again")
                #expect(await again.waitForExit(timeout: 30) == .exit(0), "\(again.transcript)")
                #expect(again.stderr.contains("already succeeded; nothing to resume"))
                #expect(server.accessLog().filter { $0.method == "PUT" }.count == putsAfter)
            }
        }

        @Test func retryFailedRunsOnlyTheFailedElementsOfAFailedRun() async throws {
            try await withCluster { cluster in
                // Element 3 fails; every try of every element is logged.
                let (log, stderr) = try await Self.failedRun(cluster, items: [1, 2, 3, 4, 5, 6], failing: 3)
                let runID = try #require(stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "1\n2\n3\n")
                // Its last line says how to run the failed elements again.
                #expect(stderr.contains("run \(runID) failed; run its failed elements again with: flow-coordinator resume \(runID) --workers 1 --retry-failed\n"), "\(stderr)")
                #expect(try await Self.runsLine(cluster).contains(" failed "))

                // A failed run is over: plain resume does nothing and keeps its code.
                let plain = try cluster.coordinator(["resume", runID], label: "plain")
                #expect(await plain.waitForExit(timeout: 30) == .exit(1), "\(plain.transcript)")
                #expect(plain.stderr.contains("already ended: it failed (exit 1)"), "\(plain.stderr)")

                let retried = try cluster.coordinator(["resume", runID, "--retry-failed", "--quiet", "--workers", "1"], label: "retry")
                #expect(await retried.waitForExit(timeout: 60) == .exit(0), "\(retried.transcript)")
                // 1 and 2 had succeeded and are not run again; 3 runs again; 4 to 6 run for the first time.
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "1\n2\n3\n3\n4\n5\n6\n")
                #expect(retried.stdout.contains("output size: 6"))
                #expect(retried.stdoutLines.filter { $0.contains("[ShellOp ") && $0.contains("DidFinish: successfully") }.count == 6)
                #expect(try await Self.runsLine(cluster).contains("succeeded (resumed 1x)"))
            }
        }

        /// Starts a group of `count` ShellOp elements (4 at once, on one local worker) that each
        /// append a line made by `line` (shell, `$1` the element) to `log`, and SIGKILLs the
        /// coordinator once `killAfter` lines are there. Returns the run's id.
        static func killedShellGroup(_ cluster: ClusterScope, count: Int, log: String, line: String, killAfter: Int) async throws -> String {
            // Each element announces its line on a FIFO too, after the log: the kill waits on those.
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let flowFile = try cluster.write("shell-group.yaml", """
                flow: shell-group
                bucket: {items: [\((0..<count).map(String.init).joined(separator: ", "))]}
                steps:
                  - group:
                      op: ShellOp
                      input: items
                      output: done
                      maxConcurrent: 4
                      with: {shell: true, command: "echo \(line) >> '\(log)'; echo \(line) >> '\(starts.path)'; sleep 0.01"}
                """)
            let coordinator = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1", "--concurrency", "4"], label: "killed")
            return try await coordinator.killAfterStarts(starts, count: killAfter)
        }

        /// Elements that had started when the run was killed and left no result run again with
        /// `attempt` 2 (FLOW_ATTEMPT for a ShellOp); elements that had never started, with 1.
        @Test func elementsThatMayHaveRunBeforeAResumeSeeTheirSecondAttempt() async throws {
            try await withCluster { cluster in
                let log = cluster.path("tries.log")
                let count = 1_200
                let runID = try await Self.killedShellGroup(cluster, count: count, log: log, line: "$1 $FLOW_ATTEMPT", killAfter: 300)
                let before = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
                #expect(before < count, "the run finished before the kill")

                let report = cluster.path("report.json")
                let resumed = try cluster.coordinator(["resume", runID, "--quiet", "--workers", "1", "--json", report], label: "resume")
                #expect(await resumed.waitForExit(timeout: 120) == .exit(0), "\(resumed.transcript.suffix(3000))")
                let tries = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").dropFirst(before).map { line in
                    line.split(separator: " ").compactMap { Int($0) }
                }
                // Every element that ran again after the resume: the journal's bound on started
                // elements is ahead of the kill, never behind it.
                let second = Set(tries.filter { $0.last == 2 }.compactMap(\.first))
                let first = Set(tries.filter { $0.last == 1 }.compactMap(\.first))
                #expect(!second.isEmpty, "some elements were in flight at the kill")
                #expect(second.allSatisfy { $0 < before + 300 }, "only elements near the kill may have run: \(second.max() ?? -1)")
                #expect(first.contains(count - 1), "the last elements had never started")
                #expect((first.min() ?? 0) > (second.max() ?? 0), "attempt 1 only past the elements that may have run")
                #expect(resumed.stdout.contains("output size: \(count)"))
                // The report's attempt is the one the op saw.
                let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
                let operations = try #require(json["operations"] as? [[String: Any]])
                var reported: [Int: Int] = [:]
                for operation in operations {
                    if let index = operation["groupIndex"] as? Int, let attempt = operation["attempt"] as? Int { reported[index] = attempt }
                }
                #expect(second.allSatisfy { reported[$0] == 2 }, "reported attempts of elements that saw 2: \(second.sorted().prefix(8).map { reported[$0] ?? -1 })")
                #expect(first.allSatisfy { reported[$0] == 1 }, "elements that saw attempt 1 reported otherwise")
            }
        }

        /// A failed run's last line is a command to paste: with `--journal FILE` outside the
        /// default folder it names the file (quoted for the shell), which `resume` then finds.
        @Test func theLastLineOfAFailedRunIsACommandThatResumesIt() async throws {
            try await withCluster { cluster in
                let journal = cluster.path("it's a run.sqlite")
                let (log, stderr) = try await Self.failedRun(cluster, items: [1, 2, 3], failing: 2, journal: journal)
                let quoted = "'" + journal.replacingOccurrences(of: "'", with: "'\\''") + "'"
                // With the run's own --workers 1: it resumes on the same kind of cluster.
                #expect(stderr.contains("(resume it with: flow-coordinator resume \(quoted) --workers 1)"), "\(stderr)")
                let command = try #require(stderr.firstMatch(of: /failed; run its failed elements again with: (flow-coordinator resume .*)\n/)?.1)
                #expect(command == "flow-coordinator resume \(quoted) --workers 1 --retry-failed")

                let binary = ClusterScope.productsDirectory.path
                let resumed = try cluster.startSystem("/bin/sh", ["-c", "PATH='\(binary)':$PATH " + command + " --quiet"], label: "pasted")
                #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "1\n2\n2\n3\n")
            }
        }

        /// Format 1 kept the flow and its bucket in the run's row; a journal made then resumes.
        @Test func aJournalOfFormat1StillResumes() async throws {
            try await withCluster { cluster in
                let journal = cluster.path("old.sqlite")
                let log = try await Self.failedRun(cluster, items: [1, 2, 3], failing: 2, journal: journal).log
                _ = try await Self.sqlite(cluster, journal, """
                    text, bucket = db.execute("SELECT flow_text, bucket FROM run_input").fetchone()
                    db.execute("UPDATE run SET flow_text = ?, bucket = ?", (text, bucket))
                    db.execute("DROP TABLE run_input"); db.execute("PRAGMA user_version = 1")
                    """, label: "downgrade")
                let resumed = try cluster.coordinator(["resume", journal, "--retry-failed", "--quiet", "--workers", "1"], label: "resume")
                #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "1\n2\n2\n3\n")
                #expect(resumed.stdout.contains("output size: 3"))
            }
        }

        /// Journals written before the result table lost `AUTOINCREMENT` and its `(step, element)`
        /// index resume as well, and the rows a resume adds come after the old ones.
        @Test func aJournalWithTheEarlierResultTableStillResumes() async throws {
            try await withCluster { cluster in
                let journal = cluster.path("earlier.sqlite")
                let log = try await Self.failedRun(cluster, items: [1, 2, 3, 4], failing: 3, journal: journal).log
                let indexes = try await Self.sqlite(cluster, journal, """
                    print(db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'result'").fetchone()[0])
                    db.executescript('''
                        ALTER TABLE result RENAME TO result_new;
                        CREATE TABLE result (
                            seq INTEGER PRIMARY KEY AUTOINCREMENT, step TEXT NOT NULL, element INTEGER, ok INTEGER NOT NULL,
                            worker TEXT, started_at REAL NOT NULL, finished_at REAL NOT NULL, record BLOB NOT NULL);
                        CREATE INDEX result_step ON result (step, element);
                        INSERT INTO result SELECT seq, step, element, ok, NULL, 0, 0, record FROM result_new ORDER BY seq;
                        DROP TABLE result_new;
                        PRAGMA user_version = 2;''')
                    """, label: "rewrite")
                #expect(indexes == "0", "a new journal's result table has no index")
                let resumed = try cluster.coordinator(["resume", journal, "--retry-failed", "--quiet", "--workers", "1"], label: "resume")
                #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
                // 1 and 2 finished in the first life, 3 failed and stopped the group; 3 and 4 ran again.
                #expect(try String(contentsOfFile: log, encoding: .utf8) == "1\n2\n3\n3\n4\n")
                #expect(resumed.stdout.contains("output size: 4"))
                let rows = try await Self.sqlite(cluster, journal, """
                    print(",".join("%s:%s" % row for row in db.execute("SELECT element, ok FROM result ORDER BY seq")))
                    """, label: "rows")
                // The failure the resume ran again is deleted: one row an element, as format 3 keeps.
                #expect(rows == "0:1,1:1,2:1,3:1")
            }
        }

        @Test func aRunWithoutAJournalLeavesNothingBehind() async throws {
            try await withCluster { cluster in
                let flowFile = try cluster.write("tiny.yaml", "flow: tiny\nsteps:\n  - op: SimplePrintOp\n    with: {message: hi}\n")
                let run = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1", "--no-journal"])
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                #expect(!run.stderr.contains("journal"), "\(run.stderr)")
                let runs = try cluster.coordinator(["runs"], label: "runs")
                #expect(await runs.waitForExit(timeout: 30) == .exit(0))
                #expect(runs.stdout == "no runs in \(cluster.journalFolder)\n", "\(runs.stdout)")

                let both = try cluster.coordinator(["run", flowFile, "--no-journal", "--journal", cluster.path("j.sqlite")], label: "both")
                #expect(await both.waitForExit(timeout: 30) == .exit(2))
                #expect(both.stderr.contains("--no-journal and --journal exclude each other"), "\(both.stderr)")
            }
        }

        @Test func aDamagedForeignOrNewerJournalIsRefusedWithAClearError() async throws {
            try await withCluster { cluster in
                let garbage = try cluster.write("garbage.sqlite", String(repeating: "not a database ", count: 100))
                let foreign = cluster.path("foreign.sqlite")
                let newer = cluster.path("newer.sqlite")
                _ = try await Self.sqlite(cluster, foreign, #"db.execute("CREATE TABLE t (x)")"#, label: "python")

                // A real journal, then marked as written by a newer format.
                let flowFile = try cluster.write("tiny.yaml", "flow: tiny\nsteps:\n  - op: SimplePrintOp\n    with: {message: hi}\n")
                let run = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1", "--journal", newer])
                #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
                _ = try await Self.sqlite(cluster, newer, #"db.execute("PRAGMA user_version = 99")"#, label: "bump")

                let expectations = [
                    (garbage, "not a Flow run journal"),
                    (foreign, "not a Flow run journal (an SQLite file of something else)"),
                    (newer, "written by a newer Flow (journal format 99)"),
                    (cluster.path("missing.sqlite"), "no such journal file"),
                ]
                for (path, message) in expectations {
                    let resume = try cluster.coordinator(["resume", path], label: "resume")
                    #expect(await resume.waitForExit(timeout: 30) == .exit(2), "\(resume.transcript)")
                    #expect(resume.stderr.contains("cannot resume \(path): \(path): \(message)"), "\(resume.stderr)")
                }
                // A journal is never overwritten.
                let clash = try cluster.coordinator(["run", flowFile, "--quiet", "--workers", "1", "--journal", newer], label: "clash")
                #expect(await clash.waitForExit(timeout: 30) == .exit(2), "\(clash.transcript)")
                #expect(clash.stderr.contains("a journal is never overwritten"))
            }
        }
    }
}
