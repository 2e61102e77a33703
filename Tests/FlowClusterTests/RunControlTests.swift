import Foundation
import Testing

/// Steering a running run from another terminal (issue 38 item 3): `status`, `pause`, `continue`
/// and `cancel` by run id, through the run's control socket beside its journal.
@Suite struct RunControlTests {
    static func slowFlow(count: Int, sleep: Double) -> String {
        let items = (0..<count).map { "e\($0)" }
        return """
            flow: steered
            bucket:
              items: [\(items.joined(separator: ", "))]
            steps:
              - group:
                  op: ShellOp
                  input: items
                  output: outs
                  maxConcurrent: 2
                  with: {command: "sleep \(sleep); printf %s \\"$1\\"", shell: true}

            """
    }

    static func expected(_ count: Int) -> String { "[" + (0..<count).map { "\"e\($0)\"" }.joined(separator: ", ") + "]" }

    /// The run's id from its `run ID; journal …` line.
    static func runID(of run: ChildProcess) async throws -> String {
        guard await run.waitForStderr(containing: "; journal ", timeout: 30) else { throw HarnessError("no journal line\n\(run.transcript)") }
        guard let match = run.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/) else { throw HarnessError("no run id") }
        return String(match.1)
    }

    /// `status RUN_ID --json`, decoded as a dictionary (a loaded machine may take long to answer).
    static func status(_ cluster: ClusterScope, _ id: String) async throws -> [String: Any] {
        let query = try cluster.coordinator(["status", id, "--json", "--timeout", "30"], label: "status")
        guard await query.waitForExit(timeout: 40) == .exit(0) else { throw HarnessError("status failed: \(query.transcript)") }
        return try JSONSerialization.jsonObject(with: Data(query.stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// Waits until the run serves its control socket (it opens just after the journal line).
    static func waitForControl(_ cluster: ClusterScope, _ id: String) async throws {
        for _ in 0..<100 {
            if (try? await status(cluster, id)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("the run never answered on its control socket")
    }

    static func command(_ cluster: ClusterScope, _ arguments: [String]) async throws -> ChildProcess {
        let child = try cluster.coordinator(arguments + ["--timeout", "30"], label: arguments[0])
        _ = await child.waitForExit(timeout: 40)
        return child
    }

    @Test func pauseStopsNewTasksUntilContinueAndStatusSaysSo() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("steer.yaml", Self.slowFlow(count: 16, sleep: 0.3))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id)
            var running: [String: Any] = [:]
            for _ in 0..<50 {
                running = try await Self.status(cluster, id)
                if (running["done"] as? Int ?? 0) >= 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(running["paused"] as? Bool == false && running["step"] as? String == "ShellOp" && running["total"] as? Int == 16, "\(running)")
            let pause = try await Self.command(cluster, ["pause", id])
            #expect(pause.termination == .exit(0), "\(pause.transcript)")
            // What ran at the pause finishes; then nothing runs and nothing more is done.
            try await Task.sleep(for: .milliseconds(900))
            let paused = try await Self.status(cluster, id)
            try await Task.sleep(for: .milliseconds(900))
            let later = try await Self.status(cluster, id)
            #expect(paused["paused"] as? Bool == true && paused["running"] as? Int == 0, "\(paused)")
            #expect(paused["done"] as? Int == later["done"] as? Int && (later["done"] as? Int ?? 16) < 16, "no element finished while paused: \(paused) \(later)")
            let goOn = try await Self.command(cluster, ["continue", id])
            #expect(goOn.termination == .exit(0), "\(goOn.transcript)")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.finalBucketValue("outs") == Self.expected(16))
            #expect(run.stderr.contains("paused from another terminal") && run.stderr.contains("continued from another terminal"), "\(run.stderr)")
        }
    }

    @Test func cancelStopsTheRunAsCtrlCAndAnUnknownIdIsSaidSo() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("cancel.yaml", Self.slowFlow(count: 40, sleep: 0.3))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id)
            let cancel = try await Self.command(cluster, ["cancel", id])
            #expect(cancel.termination == .exit(0), "\(cancel.transcript)")
            let end = await run.waitForExit(timeout: 30)
            #expect(end != nil && end != .exit(0), "\(run.transcript)")
            #expect(run.stderr.contains("cancelled from another terminal"), "\(run.stderr)")
            let gone = try await Self.command(cluster, ["status", id])
            #expect(gone.termination == .exit(3) && gone.stderr.contains("no run is going on with that id"), "\(gone.transcript)")
            let unknown = try await Self.command(cluster, ["pause", "20990101-000000-abcdef"])
            #expect(unknown.termination == .exit(3), "\(unknown.transcript)")
        }
    }

    @Test func aRunPausedWhenItsCoordinatorDiesResumesPaused() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("crash.yaml", Self.slowFlow(count: 12, sleep: 0.2))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id)
            let pause = try await Self.command(cluster, ["pause", id])
            #expect(pause.termination == .exit(0), "\(pause.transcript)")
            try await Task.sleep(for: .milliseconds(500))
            run.send(SIGKILL)
            _ = await run.waitForExit(timeout: 10)
            let resumed = try cluster.coordinator(["resume", id, "--quiet"], label: "resume")
            #expect(await resumed.waitForStderr(containing: "stays paused", timeout: 30), "\(resumed.transcript)")
            try await Self.waitForControl(cluster, id)
            let status = try await Self.status(cluster, id)
            #expect(status["paused"] as? Bool == true, "\(status)")
            #expect(try await Self.command(cluster, ["continue", id]).termination == .exit(0))
            #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
            #expect(resumed.stdout.finalBucketValue("outs") == Self.expected(12))
        }
    }
}
