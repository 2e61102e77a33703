import FlowTestSupport
import Foundation
import Testing

/// What a run's journal may be trusted with, and by whom (issue 46 items 8, 9 and 11): it is its
/// owner's alone, a pause mark left beside a new run does not hold it, and a journal whose flow was
/// replaced after results were recorded is not resumed as if those results were the new flow's.
@Suite struct JournalTrustTests {
    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int).map { $0 & 0o777 }
    }

    /// The folders a run makes for its journal are 0700, and the journal, its `-wal` and `-shm`
    /// files and its start marks 0600 while the run goes on (they were 0755 and 0644: another
    /// local user read a running run's flow, bucket and results); the default folder too.
    @Test func aRunsJournalIsItsOwnersAlone() async throws {
        try await withCluster { cluster in
            let gate = cluster.path("GO")
            let file = try cluster.write("private.yaml", RunControlTests.gatedFlow(count: 4, gate: gate))
            let folder = cluster.path("journals/deeper")
            let journal = folder + "/private.sqlite"
            let explicit = try cluster.coordinator(["run", file, "--workers", "1", "--quiet", "--journal", journal], label: "explicit")
            let byDefault = try cluster.coordinator(["run", file, "--workers", "1", "--quiet"], label: "default")
            let id = try await RunControlTests.runID(of: byDefault)
            _ = try await RunControlTests.runID(of: explicit)
            try await RunControlTests.waitForControl(cluster, id, run: byDefault)
            #expect(Self.mode(cluster.path("journals")) == 0o700 && Self.mode(folder) == 0o700)
            #expect(Self.mode(cluster.journalFolder) == 0o700)
            for base in [journal, cluster.journalFolder + "/\(id).sqlite"] {
                #expect(Self.mode(base) == 0o600, "\(base)")
                for companion in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: base + companion) {
                    #expect(Self.mode(base + companion) == 0o600, "\(base + companion)")
                }
            }
            let others = try FileManager.default.contentsOfDirectory(atPath: folder).map { folder + "/" + $0 }
            #expect(others.allSatisfy { Self.mode($0) == 0o600 }, "\(others.map { ($0, Self.mode($0) ?? -1) })")
            FileManager.default.createFile(atPath: gate, contents: Data())
            #expect(await explicit.waitForExit(timeout: 60) == .exit(0), "\(explicit.transcript)")
            #expect(await byDefault.waitForExit(timeout: 60) == .exit(0), "\(byDefault.transcript)")
        }
    }

    /// A `J.paused` file beside a new run's `--journal J.sqlite` (another local user can leave one
    /// in `/tmp`) once started the run paused for good; a mark that names another run is not
    /// honoured by a resume either.
    @Test func aPauseMarkIsHonouredOnlyByAResumeOfTheRunItNames() async throws {
        try await withCluster { cluster in
            let journal = cluster.path("planted.sqlite")
            let mark = cluster.path("planted.paused")
            FileManager.default.createFile(atPath: mark, contents: Data())
            let file = try cluster.write("items.yaml", """
                flow: items
                bucket: {items: [1, 2, 3]}
                steps:
                  - group: {op: SleepOp, input: items, output: slept, maxConcurrent: 2, with: {ms: 1}}
                """)
            let fresh = try cluster.coordinator(["run", file, "--workers", "1", "--quiet", "--journal", journal], label: "fresh")
            #expect(await fresh.waitForExit(timeout: 60) == .exit(0), "\(fresh.transcript)")
            #expect(!fresh.stderr.contains("stays paused"), "\(fresh.stderr)")

            // A resume of a killed run, beside a mark that names another run: not paused either.
            let gate = cluster.path("GO")
            let gated = try cluster.write("gated.yaml", RunControlTests.gatedFlow(count: 6, gate: gate))
            let second = cluster.path("second.sqlite")
            let run = try cluster.coordinator(["run", gated, "--workers", "1", "--quiet", "--journal", second], label: "killed")
            _ = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, second, run: run)
            run.send(SIGKILL)
            _ = await run.waitForExit(timeout: 10)
            try Data("20990101-000000-abcdef\n".utf8).write(to: URL(fileURLWithPath: cluster.path("second.paused")))
            FileManager.default.createFile(atPath: gate, contents: Data())
            let resumed = try cluster.coordinator(["resume", second, "--workers", "1", "--quiet"], label: "resume")
            #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
            #expect(!resumed.stderr.contains("stays paused"), "\(resumed.stderr)")
        }
    }

    /// A journal whose flow text was replaced by another valid flow (its group now runs `SleepOp`
    /// where the recorded results are `ShellOp`'s) once resumed with exit 0, results of one op
    /// standing in for another that never ran. The resume now fails that step, saying why, and
    /// runs none of the replaced flow's elements.
    @Test func aResultOfAnotherOpThanTheStepsIsRefused() async throws {
        try await withCluster { cluster in
            let (_, stderr) = try await ClusterIntegrationTests.ResumingRuns.failedRun(cluster, items: [1, 2, 3, 4], failing: 3)
            let runID = try #require(stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1).description
            let journal = cluster.journalFolder + "/\(runID).sqlite"
            let replaced = """
                flow: items
                bucket: {items: [1, 2, 3, 4]}
                steps:
                  - group: {op: SleepOp, input: items, output: done, maxConcurrent: 1, with: {ms: 1}}
                """
            _ = try await ClusterIntegrationTests.ResumingRuns.sqlite(cluster, journal, """
                db.execute("UPDATE run_input SET flow_text = ?", (sys.argv[2],))
                """.replacingOccurrences(of: "sys.argv[2]", with: "'''\(replaced)'''"), label: "edit")
            let resumed = try cluster.coordinator(["resume", runID, "--retry-failed", "--workers", "1"], label: "resume")
            #expect(await resumed.waitForExit(timeout: 60) == .exit(1), "\(resumed.transcript)")
            #expect(resumed.transcript.contains("the run's journal holds a result of ShellOp for this step, where the flow runs SleepOp"),
                    "\(resumed.transcript)")
            #expect(!resumed.stdout.contains("output size: 4"), "\(resumed.stdout)")
        }
    }
}

extension JournalTrustTests {
    /// Another account's `status` and `pause` of a run say "permission denied" at once (issue 46
    /// item 13), where they waited out their time-out and said the run "may have stopped". Run as
    /// `nobody` (setpriv), which only root can do.
    @Test(.enabled(if: getuid() == 0, "switching to another account needs root"))
    func anotherAccountsStatusAndPauseSayPermissionDenied() async throws {
        try await withCluster { cluster in
            let gate = cluster.path("GO")
            let file = try cluster.write("mine.yaml", RunControlTests.gatedFlow(count: 2, gate: gate))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--quiet"], label: "run")
            let id = try await RunControlTests.runID(of: run)
            try await RunControlTests.waitForControl(cluster, id, run: run)
            let program = try ClusterScope.builtProgram("flow-coordinator").path
            for command in ["status", "pause"] {
                let other = try cluster.startSystem("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", program,
                                                                          command, id, "--dir", cluster.journalFolder, "--timeout", "30"],
                                                    label: "nobody-\(command)")
                #expect(await other.waitForExit(timeout: 20) == .exit(3), "\(other.transcript)")
                #expect(other.stderr.contains("permission denied: the run's control socket"), "\(other.transcript)")
            }
            let status = try await RunControlTests.status(cluster, id)
            #expect(status["paused"] as? Bool == false, "\(status)")
            FileManager.default.createFile(atPath: gate, contents: Data())
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
        }
    }
}
