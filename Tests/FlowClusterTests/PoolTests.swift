import FlowCluster
import FlowWire
import FlowTestSupport
import Foundation
import Synchronization
import Testing

/// `flow-coordinator pool` with real workers and runs (issue 36): runs share it, see it in
/// `status --pool`, survive its restart, and a run that dies has its tasks stopped.
@Suite(.serialized) struct PoolTests {
    /// A flow whose group echoes each of `count` elements after `sleep` seconds; with
    /// `announcingTo`, each element first writes a line to that FIFO (an ``ElementStarts``).
    /// With `gatedBy`, each element then waits until the test opens its gate (an ``ElementGates``).
    static func echoFlow(_ name: String, count: Int, sleep: Double, maxConcurrent: Int = 8, announcingTo fifo: String? = nil,
                         gatedBy gates: ElementGates? = nil) -> String {
        let items = (0..<count).map { "\(name)-\($0)" }
        let announce = fifo.map { "echo \\\"$1\\\" >> '\($0)'; " } ?? ""
        let gate = gates.map { "read -r line < '\($0.directory)/'\\\"$1\\\"; " } ?? ""
        return """
            flow: \(name)
            bucket:
              items: [\(items.joined(separator: ", "))]
            steps:
              - op: SimplePrintOp
                with: {message: "start"}
              - group:
                  op: ShellOp
                  input: items
                  output: outs
                  maxConcurrent: \(maxConcurrent)
                  with: {command: "\(announce)\(gate)sleep \(sleep); printf %s \\"$1\\"", shell: true}

            """
    }

    static func expectedOutputs(_ name: String, count: Int) -> String {
        "[" + (0..<count).map { "\"\(name)-\($0)\"" }.joined(separator: ", ") + "]"
    }

    /// Starts a pool on `port` (a free one when `nil`) and returns it with its endpoint.
    static func startPool(_ cluster: ClusterScope, port: Int? = nil, extra: [String] = []) async throws -> (ChildProcess, String) {
        let pool = try cluster.coordinator(["pool", "--bind", "tcp://127.0.0.1:\(port.map(String.init) ?? "*")"] + ClusterScope.fastHeartbeat + extra,
                                           label: "pool")
        guard await pool.waitForStderr(containing: "pool listening on ", timeout: 10) else { throw HarnessError("the pool never listened\n\(pool.transcript)") }
        let line = pool.stderr.split(separator: "\n").first { $0.contains("pool listening on ") } ?? ""
        guard let match = line.firstMatch(of: #/pool listening on (tcp://[0-9.]+:[0-9]+)/#) else { throw HarnessError("no endpoint in '\(line)'") }
        return (pool, String(match.1))
    }

    /// The pool's STATUS, asked from this process (the same query `status --pool` makes, which
    /// `statusPrintsThePoolsWorkersAndRunsAsTables` runs as a program): sampling often must not
    /// start a process each time on a loaded machine. The query waits in `zmq_poll`, so it runs on
    /// a thread of its own (``TestCommand/offThread(_:)``), not on one of the cooperative pool's.
    static func status(_ cluster: ClusterScope, _ endpoint: String) async throws -> PoolStatus {
        try await TestCommand.offThread { try PoolStatus.query(endpoint, timeout: .seconds(30)) }
    }

    /// Expects every status taken as 4 slots turn over (``statusesAsSlotsTurnOver``) to show each
    /// run of `shares` with work waiting and holding its share of the 4 busy slots.
    static func expectShares(_ cluster: ClusterScope, _ endpoint: String, starts: ElementStarts, gates: ElementGates,
                             _ shares: [(flow: String, inFlight: Int)]) async throws {
        for status in try await statusesAsSlotsTurnOver(cluster, endpoint, starts: starts, gates: gates, slots: 4) {
            let runs = try shares.map { share in try #require(status.runs.first { $0.flow == share.flow }, "\(status.runs)") }
            #expect(status.busy == 4 && runs.allSatisfy { $0.queued > 0 }, "both runs still have work waiting: \(status)")
            #expect(runs.map(\.inFlight) == shares.map(\.inFlight), "shares of 4 slots \(shares): in flight \(runs.map(\.inFlight))")
        }
    }

    /// The pool's status as the workers' slots turn over, for flows gated by `gates`: `rounds`
    /// times, the oldest running element is let end, and once the element that took its slot has
    /// started the status is asked, so nothing moves while it is. The statuses come from after the
    /// first `slots` elements have ended: those started before the pool's shares applied (they
    /// went to whichever run submitted first, work-conserving).
    static func statusesAsSlotsTurnOver(_ cluster: ClusterScope, _ endpoint: String, starts: ElementStarts, gates: ElementGates,
                                        slots: Int, rounds: Int = 12) async throws -> [PoolStatus] {
        let deadline = ContinuousClock.now + .seconds(60)
        try #require(await starts.waitForMore(than: slots - 1, before: deadline), "the \(slots) slots never filled: \(starts.order)")
        var ended: [String] = []
        var statuses: [PoolStatus] = []
        for round in 0..<rounds {
            let heard = starts.started
            let oldest = try #require(starts.order.first { !ended.contains($0) }, "no element left running: \(starts.order)")
            ended.append(oldest)
            gates.release(oldest)
            try #require(await starts.waitForMore(than: heard, before: deadline), "nothing took the slot \(oldest) left: \(starts.order)")
            #expect(starts.started == heard + 1, "one element ended, one more started: \(starts.order)")
            if round >= slots - 1 { statuses.append(try await status(cluster, endpoint)) }
        }
        return statuses
    }

    static func run(_ cluster: ClusterScope, _ file: String, pool endpoint: String, label: String, extra: [String] = []) throws -> ChildProcess {
        try cluster.coordinator(["run", file, "--pool", endpoint, "--worker-timeout", "30"] + ClusterScope.fastHeartbeat + extra, label: label)
    }

    /// The first ShellOp start and the last ShellOp end in a `--json` report.
    static func shellOpSpan(_ path: String) throws -> (start: Date, end: Date) {
        struct Report: Decodable {
            struct Operation: Decodable {
                var op: String
                var startedAt: Date?
                var finishedAt: Date?
            }
            var operations: [Operation]
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            guard let date = formatter.date(from: text) else { throw HarnessError("not a date: \(text)") }
            return date
        }
        let report = try decoder.decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let shells = report.operations.filter { $0.op == "ShellOp" }
        guard let start = shells.compactMap(\.startedAt).min(), let end = shells.compactMap(\.finishedAt).max() else {
            throw HarnessError("no ShellOp times in \(path)")
        }
        return (start, end)
    }

    @Test func twoRunsStartedTogetherShareThePoolEquallyAndFinishTogether() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            let gates = try ElementGates(cluster.path("gates"), names: ["a", "b"].flatMap { run in (0..<100).map { "\(run)-\($0)" } })
            defer {
                gates.releaseAll()
                gates.close()
                starts.close()
            }
            let a = try Self.run(cluster, try cluster.write("a.yaml", Self.echoFlow("a", count: 100, sleep: 0.2, announcingTo: starts.path, gatedBy: gates)),
                                 pool: endpoint, label: "a", extra: ["--json", cluster.path("a.json")])
            let b = try Self.run(cluster, try cluster.write("b.yaml", Self.echoFlow("b", count: 100, sleep: 0.2, announcingTo: starts.path, gatedBy: gates)),
                                 pool: endpoint, label: "b", extra: ["--json", cluster.path("b.json")])
            // Both runs registered before any worker joins (the pool logs each), so neither has a head start.
            let registered = await pool.waitForOutput(timeout: 5) { _, stderr in
                stderr.contains(" joined: run ") && stderr.contains(" of flow a ") && stderr.contains(" of flow b ")
            }
            try #require(registered, "both runs must register with the pool\n\(pool.transcript)\n\(a.transcript)\n\(b.transcript)")
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2)
            _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 2)
            // While both have work, each holds half the 4 slots (sampled with the elements held at
            // their gates; freely running groups left a loaded machine too few queries in the window).
            try await Self.expectShares(cluster, endpoint, starts: starts, gates: gates, [("a", 2), ("b", 2)])
            // The rest of both groups runs freely (0.2 s an element).
            gates.releaseAll()
            #expect(await a.waitForExit(timeout: 60) == .exit(0), "\(a.transcript)")
            #expect(await b.waitForExit(timeout: 60) == .exit(0), "\(b.transcript)")
            #expect(a.stdout.finalBucketValue("outs") == Self.expectedOutputs("a", count: 100), "\(a.stdout)")
            #expect(b.stdout.finalBucketValue("outs") == Self.expectedOutputs("b", count: 100), "\(b.stdout)")
            // The summary names the workers that ran each element, not the pool.
            let both = a.stdout + b.stdout
            #expect(both.contains("@ w1]") && both.contains("@ w2]") && !both.contains("@ pool"), "\(a.stdout)")
            // When each run's group ended, from the runs' own reports (the ops' times, not the
            // processes' exits), counted from when the first element of either started.
            let spans = try [cluster.path("a.json"), cluster.path("b.json")].map(Self.shellOpSpan)
            let start = min(spans[0].start, spans[1].start)
            let (ta, tb) = (spans[0].end.timeIntervalSince(start), spans[1].end.timeIntervalSince(start))
            #expect(abs(ta - tb) <= 0.1 * max(ta, tb), "equal runs started together end within 10%: a \(ta) s, b \(tb) s")
        }
    }

    /// A run with share 3 holds 3 of a worker's 4 slots while a run with share 1 holds the fourth.
    /// Each element waits at a gate of its own until the test lets it end, the oldest first, and
    /// the pool's status is asked once the element that took the freed slot has started: nothing
    /// moves while it is asked, so every sample must show the shares. It sampled a group running
    /// freely before, and a clean-clone CI run (stop 54, 12 tests at once on 2 cores) fitted no
    /// status query into the 2.5 s in which both runs had 4 elements done and work still waiting.
    @Test func aRunWithShareThreeGetsThreeTimesTheSlotsOfOneWithShareOne() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            let gates = try ElementGates(cluster.path("gates"), names: ["h", "l"].flatMap { run in (0..<30).map { "\(run)-\($0)" } })
            defer {
                gates.releaseAll()
                gates.close()
                starts.close()
            }
            let heavy = try Self.run(cluster, try cluster.write("h.yaml", Self.echoFlow("h", count: 30, sleep: 0, announcingTo: starts.path, gatedBy: gates)),
                                     pool: endpoint, label: "h", extra: ["--share", "3"])
            let light = try Self.run(cluster, try cluster.write("l.yaml", Self.echoFlow("l", count: 30, sleep: 0, announcingTo: starts.path, gatedBy: gates)),
                                     pool: endpoint, label: "l")
            // Both runs registered before the worker joins (the pool logs each), so neither has a head start.
            let registered = await pool.waitForOutput(timeout: 5) { _, stderr in
                stderr.contains(" joined: run ") && stderr.contains(" of flow h ") && stderr.contains(" of flow l ")
            }
            try #require(registered, "both runs must register with the pool\n\(pool.transcript)")
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 4)
            try await Self.expectShares(cluster, endpoint, starts: starts, gates: gates, [("h", 3), ("l", 1)])
            gates.releaseAll()
            #expect(await heavy.waitForExit(timeout: 60) == .exit(0), "\(heavy.transcript)")
            #expect(await light.waitForExit(timeout: 60) == .exit(0), "\(light.transcript)")
            #expect(heavy.stdout.finalBucketValue("outs") == Self.expectedOutputs("h", count: 30))
            #expect(light.stdout.finalBucketValue("outs") == Self.expectedOutputs("l", count: 30))
        }
    }

    @Test func statusPrintsThePoolsWorkersAndRunsAsTables() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            _ = try cluster.worker(connect: endpoint, name: "table-worker", concurrency: 3,
                                   extra: ["--label", "role=recorder", "--label", "zone=b"])
            let run = try Self.run(cluster, try cluster.write("t.yaml", Self.echoFlow("t", count: 100, sleep: 0.3)), pool: endpoint, label: "t")
            // 10 s of work: a run of 2 s ended once before a loaded machine's status query saw it.
            // Asked once the pool has logged the worker's labels and the run: it knows them then.
            let known = await pool.waitForOutput(timeout: 20) { _, stderr in
                stderr.contains("worker table-worker has labels role=recorder zone=b") && stderr.contains(" of flow t ")
            }
            try #require(known, "the pool never logged the worker and the run joining\n\(pool.transcript)\n\(run.transcript)")
            let query = try cluster.coordinator(["status", "--pool", endpoint], label: "status")
            _ = await query.waitForExit(timeout: 10)
            let text = query.stdout
            #expect(text.contains("WORKER") && text.contains("table-worker") && text.contains("3 "), "\(text)")
            #expect(text.contains("LABELS") && text.split(separator: "\n").contains { $0.contains("table-worker") && $0.contains("role=recorder,zone=b") },
                    "the worker's row shows its labels\n\(text)")
            let json = try cluster.coordinator(["status", "--pool", endpoint, "--json"], label: "status-json")
            _ = await json.waitForExit(timeout: 10)
            let status = try PoolStatus(json: json.stdout)
            #expect(status.workers.first { $0.name == "table-worker" }?.labels == ["role": "recorder", "zone": "b"], "\(json.stdout)")
            #expect(text.contains("RUN") && text.contains("SHARE") && text.contains("IN FLIGHT"), "\(text)")
            #expect(text.split(separator: "\n").contains { $0.contains(" t ") && $0.contains("@") }, "the run's row names its flow and origin\n\(text)")
            #expect(await run.waitForExit(timeout: 60) == .exit(0))
        }
    }

    /// `status --pool` with no pool there fails at its --timeout as a cluster error (exit 3),
    /// naming the endpoint and what to check; it used to say "check the --connect endpoint", a
    /// worker's flag.
    @Test func statusWithNoPoolThereSaysSoAtItsTimeout() async throws {
        try await withCluster { cluster in
            let endpoint = "tcp://127.0.0.1:\(try LoopbackPort.free())"
            let query = try cluster.coordinator(["status", "--pool", endpoint, "--timeout", "0.5"], label: "status")
            #expect(await query.waitForExit(timeout: 30) == .exit(3), "\(query.transcript)")
            #expect(query.stderr.contains("cannot connect to \(endpoint): no answer within 0.5 s"), "\(query.stderr)")
            #expect(query.stderr.contains("is 'flow-coordinator pool' running there") && !query.stderr.contains("--connect"), "\(query.stderr)")
        }
    }

    @Test func thePoolKilledAndStartedAgainLeavesBothRunsComplete() async throws {
        try await withCluster { cluster in
            let port = try LoopbackPort.free()
            var (pool, endpoint) = try await Self.startPool(cluster, port: port)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 3)
            _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 3)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let a = try Self.run(cluster, try cluster.write("a.yaml", Self.echoFlow("a", count: 40, sleep: 0.2, announcingTo: starts.path)),
                                 pool: endpoint, label: "a")
            let b = try Self.run(cluster, try cluster.write("b.yaml", Self.echoFlow("b", count: 40, sleep: 0.2, announcingTo: starts.path)),
                                 pool: endpoint, label: "b")
            // Killed with both runs at work: some of their elements done, the rest waiting or running.
            // The pool's status is asked as elements start (announced on a FIFO).
            var atWork = false
            var heard = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while !atWork, await starts.waitForMore(than: heard, before: deadline) {
                heard = starts.started
                let runs = try await Self.status(cluster, endpoint).runs
                atWork = runs.count == 2 && runs.allSatisfy { $0.done >= 3 && $0.queued > 0 }
            }
            try #require(atWork, "both runs never got to work on the pool (\(heard) elements started)")
            pool.send(SIGKILL)
            #expect(await pool.waitForExit(timeout: 5) == .signal(SIGKILL))
            // Both runs have noticed the pool is gone (their link to it lost) before it comes back.
            for run in [a, b] {
                #expect(await run.waitForStderr(containing: "\(endpoint) lost (", timeout: 10))
            }
            (pool, endpoint) = try await Self.startPool(cluster, port: port)
            #expect(await a.waitForExit(timeout: 60) == .exit(0), "\(a.transcript)")
            #expect(await b.waitForExit(timeout: 60) == .exit(0), "\(b.transcript)")
            #expect(a.stdout.finalBucketValue("outs") == Self.expectedOutputs("a", count: 40), "\(a.stdout)")
            #expect(b.stdout.finalBucketValue("outs") == Self.expectedOutputs("b", count: 40), "\(b.stdout)")
            // Every element is in the output once, though some ran twice (at-least-once).
            #expect(pool.stderr.contains(" joined: run "), "the runs registered again with the new pool\n\(pool.stderr)")
        }
    }

    @Test func aWorkerKilledMidGroupHasItsTasksRunByAnother() async throws {
        try await withCluster { cluster in
            let (_, endpoint) = try await Self.startPool(cluster)
            let w1 = try cluster.worker(connect: endpoint, name: "w1", concurrency: 3)
            _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 3)
            let run = try Self.run(cluster, try cluster.write("k.yaml", Self.echoFlow("k", count: 30, sleep: 0.3)), pool: endpoint, label: "k")
            try #require(await run.waitForOutput(timeout: 20) { stdout, _ in stdout.contains("@ w1] DidFinish") })
            w1.send(SIGKILL)
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
            #expect(run.stdout.finalBucketValue("outs") == Self.expectedOutputs("k", count: 30), "\(run.stdout)")
        }
    }

    @Test func aRunKilledMidGroupHasItsShellTasksStoppedOnTheWorkersAndOthersGoOn() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 4)
            // The flow writes the seconds as a Double prints them: "31.25", never "31.250" (a
            // marker ending in 0 was never found, one run in ten).
            let marker = "\(Double("31.\(Int.random(in: 100...999))")!)"
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let doomed = try Self.run(cluster, try cluster.write("d.yaml", Self.echoFlow("d", count: 8, sleep: Double(marker)!, maxConcurrent: 2,
                                                                                          announcingTo: starts.path)),
                                      pool: endpoint, label: "d")
            let other = try Self.run(cluster, try cluster.write("o.yaml", Self.echoFlow("o", count: 10, sleep: 0.2)), pool: endpoint, label: "o")
            // Its two elements announce their starts on the FIFO, just before each starts its sleep.
            let started = await starts.waitForMore(than: 1, before: ContinuousClock.now + .seconds(30))
            try #require(started, "the doomed run's ShellOps never started within 30 s\n\(doomed.transcript)\n\(pool.stderr)")
            // A process's start is no event this process can wait on: the process table is looked
            // at every 20 ms for the two sleeps the shells start next, until a deadline that fails.
            var sleeps: [Int32] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while sleeps.count < 2, ContinuousClock.now < deadline {
                sleeps = ProcessTable.mentioning("sleep \(marker)").filter { ProcessTable.program(of: $0) == "sleep" }
                if sleeps.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
            }
            try #require(sleeps.count == 2, "the doomed run's two `sleep \(marker)` never both ran: \(sleeps)\n\(pool.stderr)")
            doomed.send(SIGKILL)
            // Within its liveness (0.6 s here) the pool stops what it ran on the workers: woken by the sleeps' exits.
            let survivors = await ProcessTable.waitUntilGone(sleeps, timeout: 10)
            #expect(survivors.isEmpty && ProcessTable.mentioning("sleep \(marker)").isEmpty,
                    "the killed run's `sleep \(marker)` still runs on the worker\n\(pool.stderr)")
            #expect(pool.stderr.contains("left: ") && pool.stderr.contains("stopped 2 running"), "\(pool.stderr)")
            #expect(await other.waitForExit(timeout: 60) == .exit(0), "\(other.transcript)")
            #expect(other.stdout.finalBucketValue("outs") == Self.expectedOutputs("o", count: 10))
            #expect(try await Self.status(cluster, endpoint).runs.isEmpty)
        }
    }

    @Test func poolWithBindOrWorkersIsAUsageErrorAndAMissingPoolIsNamed() async throws {
        try await withCluster { cluster in
            let file = try cluster.write("u.yaml", Self.echoFlow("u", count: 2, sleep: 0))
            for extra in [["--bind", "tcp://127.0.0.1:*"], ["--workers", "3"]] {
                let run = try cluster.coordinator(["run", file, "--pool", "tcp://127.0.0.1:1"] + extra, label: "usage")
                #expect(await run.waitForExit(timeout: 10) == .exit(2), "\(extra): \(run.transcript)")
                #expect(run.stderr.contains("--pool and \(extra[0]) exclude each other"), "\(run.stderr)")
            }
            let port = try LoopbackPort.free()
            let endpoint = "tcp://127.0.0.1:\(port)"
            let run = try cluster.coordinator(["run", file, "--pool", endpoint, "--worker-timeout", "2"], label: "nopool")
            #expect(await run.waitForExit(timeout: 20) == .exit(3), "\(run.transcript)")
            #expect(run.stderr.contains("waiting for the pool at \(endpoint): is 'flow-coordinator pool' running there?"), "\(run.stderr)")
            #expect(run.stderr.contains("no pool answered at \(endpoint) within 2.0 s"), "\(run.stderr)")
        }
    }

    @Test func eightRunsAtOnceOnOnePoolEachGetTheirOutputsCompleteAndInOrder() async throws {
        try await withCluster { cluster in
            let (_, endpoint) = try await Self.startPool(cluster)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 4)
            _ = try cluster.worker(connect: endpoint, name: "w2", concurrency: 4)
            let names = (1...8).map { "r\($0)" }
            var runs: [ChildProcess] = []
            for name in names {
                runs.append(try Self.run(cluster, try cluster.write("\(name).yaml", Self.echoFlow(name, count: 25, sleep: 0.05)),
                                         pool: endpoint, label: name))
            }
            for (name, run) in zip(names, runs) {
                #expect(await run.waitForExit(timeout: 90) == .exit(0), "\(run.transcript)")
                #expect(run.stdout.finalBucketValue("outs") == Self.expectedOutputs(name, count: 25), "\(name): \(run.stdout)")
            }
        }
    }

    @Test func aRunKilledOnAPoolResumesOnItWithOnlyWhatWasLeft() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let log = cluster.path("ran.log")
            let items = (0..<30).map { "e\($0)" }
            let file = try cluster.write("resume.yaml", """
                flow: resumable
                bucket:
                  items: [\(items.joined(separator: ", "))]
                steps:
                  - group:
                      op: ShellOp
                      input: items
                      output: outs
                      maxConcurrent: 2
                      with: {command: "echo \\"$1\\" >> '\(log)'; echo \\"$1\\" >> '\(starts.path)'; sleep 0.1; printf %s \\"$1\\"", shell: true}

                """)
            let first = try Self.run(cluster, file, pool: endpoint, label: "first")
            let runID = try #require(await first.waitForOutput(timeout: 30) { _, stderr in stderr.contains("journal ") } ?
                first.stderr.firstMatch(of: /run ([0-9]{8}-[0-9]{6}-[0-9a-f]{6}); journal/)?.1.description : nil)
            // Each element writes its line to the log, then announces its start on the FIFO.
            let tenStarted = await starts.waitForMore(than: 9, before: ContinuousClock.now + .seconds(30))
            #expect(tenStarted, "10 elements never started within 30 s (\(starts.started) did)\n\(first.transcript)")
            first.send(SIGKILL)
            #expect(await first.waitForExit(timeout: 10) == .signal(SIGKILL))
            // Once the pool has seen the run leave, none of its elements starts any more.
            #expect(await pool.waitForStderr(containing: "(run \(runID)) left: ", timeout: 10))
            let before = Set((try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n").map(String.init))
            let resumed = try cluster.coordinator(["resume", runID, "--pool", endpoint] + ClusterScope.fastHeartbeat, label: "resume")
            #expect(await resumed.waitForExit(timeout: 60) == .exit(0), "\(resumed.transcript)")
            #expect(resumed.stdout.finalBucketValue("outs") == "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]", "\(resumed.stdout)")
            // What the first run had finished did not run again: the resume did not start over.
            let all = (try String(contentsOfFile: log, encoding: .utf8)).split(separator: "\n").map(String.init)
            // (The journal records results in batches: the last few finished before the kill may run again.)
            #expect(all.count - before.count < items.count, "the resume ran \(all.count - before.count) elements after \(before.count) had started")
            #expect(Set(all) == Set(items))
        }
    }

    @Test func aHostileClientCanNeitherWithdrawNorSeeAnotherRunsTasks() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 4)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let victim = try Self.run(cluster, try cluster.write("v.yaml", Self.echoFlow("secret-param", count: 30, sleep: 0.1, announcingTo: starts.path)),
                                      pool: endpoint, label: "victim")
            // The pool's status is asked as the victim's elements start (announced on a FIFO).
            var atWork = false
            var heard = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while !atWork, await starts.waitForMore(than: heard, before: deadline) {
                heard = starts.started
                atWork = try await Self.status(cluster, endpoint).runs.contains { $0.inFlight > 0 }
            }
            try #require(atWork, "the pool never showed the victim's tasks in flight (\(heard) elements started)")
            // A client of its own: HELLO, then WITHDRAW of every id a run could have used, and STATUS.
            let hello = WireCodec.encode(.hello(WireHello(clientName: "mallory", runID: "evil", flowName: "evil", origin: "mallory@x")))
            let withdraw = WireCodec.encode(.withdraw(Array(1...5_000)))
            let answers = try await RawPeers.dealer(to: endpoint, send: [hello, withdraw, WireCodec.encode(.status)], listen: 1.0)
            let welcomed = answers.contains { if case .welcome = $0 { true } else { false } }
            #expect(welcomed, "\(answers)")
            let reply = answers.compactMap { if case .statusReply(let json) = $0 { json } else { nil } }.first ?? ""
            #expect(reply.contains("\"secret-param\""), "STATUS names the other run's flow: \(reply)")
            #expect(!reply.contains("secret-param-"), "but none of its elements or parameters: \(reply)")
            // Nothing was withdrawn from the victim: it finishes every element, none cancelled.
            #expect(!answers.contains { if case .returned = $0 { true } else { false } }, "\(answers)")
            #expect(await victim.waitForExit(timeout: 60) == .exit(0), "\(victim.transcript)")
            #expect(victim.stdout.finalBucketValue("outs") == Self.expectedOutputs("secret-param", count: 30))
            #expect(!victim.stdout.contains("cancelled"), "\(victim.stdout)")
            #expect(pool.isRunning)
        }
    }

    @Test func aPeerOfTheEarlierVersionIsToldBothVersionsByThePool() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster)
            // READY as a FLOW01 worker sends it: the FLOW/02 layout under the earlier version frame.
            var ready = WireCodec.encode(.ready(WireReady(workerName: "old", slotCount: 1, ops: ["EchoOp"], hostname: "h", processID: 1)))
            ready[0] = Data("FLOW01".utf8)
            let frames = try await RawPeers.exchange(with: endpoint, send: [ready], listen: 1.0)
            let disconnect = try #require(frames.first { $0.count == 3 && $0[1] == Data([WireCommand.disconnect.rawValue]) }, "\(frames)")
            #expect(disconnect[0] == Data("FLOW01".utf8), "answered in the peer's own version")
            var same = disconnect
            same[0] = WireCodec.protocolFrame
            guard case .disconnect(let text) = try WireCodec.decode(same) else { Issue.record("not a DISCONNECT"); return }
            #expect(text.contains("unsupported protocol version FLOW01") && text.contains("FLOW02"), "\(text)")
            #expect(await pool.waitForStderr(containing: "FLOW01", timeout: 5), "\(pool.stderr)")
        }
    }

    @Test func thePoolsMetricsCountWorkersSlotsRunsAndQueuedTasks() async throws {
        try await withCluster { cluster in
            let (pool, endpoint) = try await Self.startPool(cluster, extra: ["--metrics", "127.0.0.1:0"])
            let address = try await pool.metricsAddress()
            _ = try cluster.worker(connect: endpoint, name: "w1", concurrency: 2)
            let starts = try ElementStarts(cluster.path("starts.fifo"))
            defer { starts.close() }
            let run = try Self.run(cluster, try cluster.write("m.yaml", Self.echoFlow("m", count: 40, sleep: 0.2, announcingTo: starts.path)),
                                   pool: endpoint, label: "m")
            // Scraped as elements start (announced on a FIFO): the pool has just given out a slot then.
            var scrape: MetricsScrape?
            var heard = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while await starts.waitForMore(than: heard, before: deadline) {
                heard = starts.started
                scrape = try await MetricsScrape.fetch(address)
                if let scrape, scrape.value("flow_pool_runs") == 1, scrape.value("flow_pool_tasks_queued") > 0 { break }
            }
            let seen = try #require(scrape, "no element started within 10 s\n\(run.transcript)")
            #expect(seen.value("flow_pool_workers") == 1 && seen.value("flow_pool_slots") == 2, "\(seen)")
            #expect(seen.value("flow_pool_runs") == 1 && seen.value("flow_pool_slots_busy") == 2, "\(seen)")
            #expect(seen.value("flow_pool_tasks_queued") > 0, "\(seen)")
            #expect(seen.has("flow_pool_run_tasks_queued"), "\(seen)")
            #expect(try await seen.promtoolProblems() == nil)
            #expect(await run.waitForExit(timeout: 60) == .exit(0), "\(run.transcript)")
        }
    }
}
