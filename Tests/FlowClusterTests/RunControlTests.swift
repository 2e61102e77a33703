import FlowTestSupport
import Foundation
import Testing

/// Steering a running run from another terminal (issue 38 item 3): `status`, `pause`, `continue`
/// and `cancel` by run id, through the run's control socket beside its journal.
@Suite struct RunControlTests {
    /// A group whose elements each wait until the file `gate` exists: how far the run gets is up
    /// to the test, not to how fast a loaded machine is.
    static func gatedFlow(count: Int, gate: String) -> String {
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
                  with: {command: "while [ ! -e '\(gate)' ]; do sleep 0.05; done; printf %s \\"$1\\"", shell: true, timeout: 600}

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
    ///
    /// Asked up to 3 times, 0.2 s apart: loaded CI runs saw a query fail now and then while the
    /// run went on (a run that is gone fails all three).
    static func status(_ cluster: ClusterScope, _ id: String) async throws -> [String: Any] {
        var failures: [String] = []
        for _ in 0..<3 {
            let query = try cluster.coordinator(["status", id, "--json", "--timeout", "30"], label: "status")
            if await query.waitForExit(timeout: 40) == .exit(0) {
                return try JSONSerialization.jsonObject(with: Data(query.stdout.utf8)) as? [String: Any] ?? [:]
            }
            failures.append(query.transcript)
            try await Task.sleep(for: .milliseconds(200))
        }
        throw HarnessError("status failed 3 times: \(failures.joined(separator: "\n"))")
    }

    /// A serial step (flow-file text, a top-level list item) that holds the run until the test
    /// creates `gate`: placed after the step a test asks `status` about, it keeps the run going
    /// however slowly a loaded machine starts the query; placed before, it lets the test act
    /// before the step starts.
    static func gateStep(_ gate: String) -> String {
        "  - op: ShellOp\n    with: {command: \"while [ ! -e '\(gate)' ]; do sleep 0.05; done\", shell: true, timeout: 600}\n"
    }

    /// Asks `status` of run `id` until `done` holds for its answer, the run ends, or 120 s pass; a
    /// failed query does not end the asking (five do). Returns the last answer and the failures.
    static func pollStatus(_ cluster: ClusterScope, _ id: String, run: ChildProcess, every pause: Duration = .milliseconds(200),
                           until done: ([String: Any]) -> Bool) async -> (status: [String: Any], failures: [String]) {
        var status: [String: Any] = [:]
        var failures: [String] = []
        let deadline = ContinuousClock.now + .seconds(120)
        while run.isRunning, failures.count < 5, ContinuousClock.now < deadline {
            do {
                status = try await Self.status(cluster, id)
                if done(status) { break }
            } catch {
                failures.append("\(error)")
            }
            try? await Task.sleep(for: pause)
        }
        return (status, failures)
    }

    /// The first budget's `field` in a `status --json` answer, 0 when it has none.
    static func firstLimit(_ status: [String: Any], _ field: String) -> Int {
        ((status["limits"] as? [[String: Any]])?.first?[field] as? Int) ?? 0
    }

    /// The pause both steering tests make of a gated run whose two slots are busy: waits until
    /// two elements run, says `pause`, opens the gate so that those two finish, waits until
    /// they have, and asks once more a second later. Returns the three answers, for the tests
    /// to check (`later` shows whether anything started while paused).
    static func pauseOnceTwoRun(_ cluster: ClusterScope, _ id: String, run: ChildProcess, gate: String) async throws
        -> (running: [String: Any], paused: [String: Any], later: [String: Any]) {
        let running = await pollStatus(cluster, id, run: run, every: .milliseconds(100)) { $0["running"] as? Int == 2 }.status
        let pause = try await command(cluster, ["pause", id])
        #expect(pause.termination == .exit(0), "\(pause.transcript)")
        // The two that run finish once the gate opens; nothing starts after them while paused.
        FileManager.default.createFile(atPath: gate, contents: Data())
        let paused = await pollStatus(cluster, id, run: run, every: .milliseconds(100)) {
            $0["done"] as? Int == 2 && $0["running"] as? Int == 0
        }.status
        // What is tested is that nothing starts while paused: a second passes before the last answer.
        try await Task.sleep(for: .seconds(1))
        return (running, paused, try await status(cluster, id))
    }

    /// Waits until the run serves its control socket (it opens just after the journal line).
    static func waitForControl(_ cluster: ClusterScope, _ id: String, run: ChildProcess? = nil) async throws {
        var last = ""
        for attempt in 0..<100 {
            do {
                _ = try await status(cluster, id)
                return
            } catch {
                last += "\n[\(attempt) at \(Date())] \(error)"
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("the run never answered on its control socket; last: \(last)\n\(run?.transcript ?? "")")
    }

    static func command(_ cluster: ClusterScope, _ arguments: [String]) async throws -> ChildProcess {
        let child = try cluster.coordinator(arguments + ["--timeout", "30"], label: arguments[0])
        _ = await child.waitForExit(timeout: 40)
        return child
    }

    @Test func pauseStopsNewTasksUntilContinueAndStatusSaysSo() async throws {
        try await withCluster { cluster in
            let gate = cluster.path("GO")
            let file = try cluster.write("steer.yaml", Self.gatedFlow(count: 12, gate: gate))
            let page = cluster.path("steered.html")
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet", "--timeline", page], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id, run: run)
            let (running, paused, later) = try await Self.pauseOnceTwoRun(cluster, id, run: run, gate: gate)
            #expect(running["paused"] as? Bool == false && running["step"] as? String == "ShellOp" && running["total"] as? Int == 12
                    && running["running"] as? Int == 2 && running["done"] as? Int == 0, "\(running)")
            #expect(paused["paused"] as? Bool == true && paused["done"] as? Int == 2 && paused["running"] as? Int == 0, "\(paused)")
            #expect(later["done"] as? Int == 2 && later["running"] as? Int == 0, "nothing started while paused: \(later)")
            let goOn = try await Self.command(cluster, ["continue", id])
            #expect(goOn.termination == .exit(0), "\(goOn.transcript)")
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.finalBucketValue("outs") == Self.expected(12))
            #expect(run.stderr.contains("paused from another terminal") && run.stderr.contains("continued from another terminal"), "\(run.stderr)")
            // The timeline draws the pause: one span, from after the first two elements started
            // to when the third started, shaded and said in the header.
            let html = try String(contentsOfFile: page, encoding: .utf8)
            let data = try ClusterIntegrationTests.Timeline.PageData.read(html)
            let marks = data.marks ?? []
            #expect(marks.map(\.kind) == ["paused", "continued"], "\(marks.map(\.kind))")
            if marks.count == 2 {
                let starts = data.attempts.startMs.sorted()
                #expect(marks[1].atMs - marks[0].atMs >= 1000, "paused for at least the second the test waited: \(marks)")
                // (An event reaches the page's recorder a moment after the coordinator acted on it.)
                #expect(starts.count == 12 && starts[1] < marks[0].atMs && starts[2] > marks[1].atMs - 100, "\(starts) against \(marks)")
            }
            let dom = try await HeadlessChromium.dumpDOM(of: page)
            #expect(dom.contains(#"data-rendered="true""#), "the page never drew:\n\(dom.prefix(3000))")
            #expect(dom.contains("paused <b>"), "the header does not say how long the run was paused")
        }
    }

    /// A run on a pool (`run --pool`) keeps its coordinator, journal and control socket here, so
    /// the same commands steer it: `status` reads it, `pause` lets the tasks that run finish and
    /// submits no other to the pool, `limit` is taken, `continue` lets it finish.
    @Test func aRunOnAPoolIsSteeredTheSameWay() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await PoolTests.startPool(cluster)
            let worker = try cluster.worker(connect: endpoint, name: "pooled", concurrency: 2)
            let gate = cluster.path("GO")
            let file = try cluster.write("steer.yaml", Self.gatedFlow(count: 8, gate: gate))
            let run = try PoolTests.run(cluster, file, pool: endpoint, label: "run", extra: ["--quiet"])
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id, run: run)
            let (running, paused, later) = try await Self.pauseOnceTwoRun(cluster, id, run: run, gate: gate)
            #expect(running["paused"] as? Bool == false && running["running"] as? Int == 2 && running["done"] as? Int == 0, "\(running)")
            #expect(paused["paused"] as? Bool == true && paused["done"] as? Int == 2 && paused["running"] as? Int == 0, "\(paused)")
            #expect(later["done"] as? Int == 2 && later["running"] as? Int == 0, "nothing started on the pool while paused: \(later)")
            let limit = try await Self.command(cluster, ["limit", id, "--step", "ShellOp", "--requests-per-second", "50"])
            #expect(limit.termination == .exit(0), "\(limit.transcript)")
            #expect(try await Self.command(cluster, ["continue", id]).termination == .exit(0))
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.finalBucketValue("outs") == Self.expected(8))
            #expect(run.stderr.contains("paused from another terminal") && run.stderr.contains("continued from another terminal"), "\(run.stderr)")
            #expect(await worker.terminate() == .exit(0), "\(worker.transcript)")
            #expect(await pool.terminate() == .exit(0), "\(pool.transcript)")
        }
    }

    @Test func cancelStopsTheRunAsCtrlCAndAnUnknownIdIsSaidSo() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("cancel.yaml", Self.gatedFlow(count: 12, gate: cluster.path("never")))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id, run: run)
            let cancel = try await Self.command(cluster, ["cancel", id])
            #expect(cancel.termination == .exit(0), "\(cancel.transcript)")
            let end = await run.waitForExit(timeout: 30)
            #expect(end != nil && end != .exit(0), "\(run.transcript)")
            #expect(run.stderr.contains("cancelled from another terminal"), "\(run.stderr)")
            // Any element still waiting somewhere ends now.
            FileManager.default.createFile(atPath: cluster.path("never"), contents: Data())
            let gone = try await Self.command(cluster, ["status", id])
            #expect(gone.termination == .exit(3) && gone.stderr.contains("no run is going on with that id"), "\(gone.transcript)")
            let unknown = try await Self.command(cluster, ["pause", "20990101-000000-abcdef"])
            #expect(unknown.termination == .exit(3), "\(unknown.transcript)")
        }
    }

    @Test func aRunPausedWhenItsCoordinatorDiesResumesPaused() async throws {
        try await withCluster { cluster in
            let gate = cluster.path("GO")
            let file = try cluster.write("crash.yaml", Self.gatedFlow(count: 12, gate: gate))
            let run = try cluster.coordinator(["run", file, "--workers", "1", "--concurrency", "2", "--quiet"], label: "run")
            let id = try await Self.runID(of: run)
            try await Self.waitForControl(cluster, id, run: run)
            let pause = try await Self.command(cluster, ["pause", id])
            #expect(pause.termination == .exit(0), "\(pause.transcript)")
            // The run left its paused mark before it said so.
            #expect(await run.waitForStderr(containing: "paused from another terminal", timeout: 10))
            run.send(SIGKILL)
            _ = await run.waitForExit(timeout: 10)
            let resumed = try cluster.coordinator(["resume", id, "--quiet"], label: "resume")
            #expect(await resumed.waitForStderr(containing: "stays paused", timeout: 30), "\(resumed.transcript)")
            try await Self.waitForControl(cluster, id, run: resumed)
            let status = try await Self.status(cluster, id)
            #expect(status["paused"] as? Bool == true, "\(status)")
            FileManager.default.createFile(atPath: gate, contents: Data())
            #expect(try await Self.command(cluster, ["continue", id]).termination == .exit(0))
            #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
            #expect(resumed.stdout.finalBucketValue("outs") == Self.expected(12))
        }
    }
}
