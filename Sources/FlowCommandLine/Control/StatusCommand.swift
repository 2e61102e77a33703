import ArgumentParser
import Flow
import FlowCluster
import Foundation
import ZeroMQ

/// `flow-coordinator status --pool ENDPOINT`: what a pool holds, its workers and its runs.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a running run (RUN_ID) or a pool's workers and runs (--pool).",
        discussion: "Exit codes: 0 it answered; 3 no such run going on, or nothing answered at ENDPOINT in time, or it is not a pool."
    )

    @Argument(help: ArgumentHelp("A running run's id (see flow-coordinator runs): its progress per step, rate, ETA, workers, and whether it is paused.", valueName: "RUN_ID"))
    var run: String?

    @Option(name: .long, help: ArgumentHelp("Where run journals are (default: $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "DIR"))
    var dir: String?

    @Option(name: .long, help: ArgumentHelp("A pool's endpoint (as its runs give it to --pool).", valueName: "ENDPOINT"))
    var pool: String?

    @Option(name: .long, help: ArgumentHelp("A CURVE pool's public key (with --curve-key: a key pair the pool admits).", valueName: "KEY"))
    var poolKey: String?

    @Option(name: .long, help: ArgumentHelp("With --pool-key: a key pair the pool admits (a client's or a worker's). Default: $FLOW_CURVE_KEY.", valueName: "FILE"))
    var curveKey: String?

    @Flag(name: .long, help: "Print the status as JSON, for scripts.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the answer.", valueName: "SECONDS"))
    var timeout: Double = 5

    func validate() throws {
        if (run == nil) == (pool == nil) { throw ValidationError("give a RUN_ID or --pool ENDPOINT (one of them)") }
        if timeout <= 0 { throw ValidationError("--timeout must be positive") }
        if poolKey != nil, CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY") == nil {
            throw ValidationError("--pool-key needs --curve-key FILE (a key pair the pool admits)")
        }
        if let poolKey, !CurveKey.isValid(poolKey) {
            throw ValidationError("--pool-key '\(poolKey.prefix(60))' is not a public key (40 Z85 characters, as the pool prints it)")
        }
    }

    func run() async throws {
        guard let pool else { return try runStatus() }
        var curve: (keyPair: ZMQCurveKeyPair, poolKey: String)?
        if let poolKey, let path = CurveOptions.path(curveKey, environment: "FLOW_CURVE_KEY") {
            do {
                curve = (try CurveKeyFile.read(at: path), poolKey)
            } catch {
                CommandLineLogging.printError(error.description)
                throw ExitCode(2)
            }
        }
        let status: PoolStatus
        do {
            status = try PoolStatus.query(pool, curve: curve, timeout: .milliseconds(Int64((timeout * 1000).rounded())))
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(3)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
            return
        }
        print(Self.table(status))
    }

    /// `status RUN_ID`: the run's own answer through its control socket.
    private func runStatus() throws {
        let target = try RunControlTarget.parse([run ?? "", "--timeout", String(timeout)] + (dir.map { ["--dir", $0] } ?? []))
        guard let status = try target.send("status").status else {
            CommandLineLogging.printError("the run sent no status")
            throw ExitCode(3)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
            return
        }
        print(Self.text(status))
    }

    /// A run's status as lines for people.
    static func text(_ status: RunControl.Status) -> String {
        var lines = ["run \(status.run) (flow \(status.flow)): \(status.paused ? "PAUSED" : "running") for \(Int(status.elapsedSeconds)) s"]
        lines.append("workers: \(status.workers), slots \(status.slots), running \(status.running), queued \(status.queued)")
        if let step = status.step, let done = status.done {
            let rate = status.perSecond.map { String(format: "%.1f/s", $0) } ?? "?"
            if let total = status.total {
                let eta = status.etaSeconds.map { "\(Int($0.rounded())) s" } ?? "?"
                lines.append("\(step): \(done)/\(total) done, \(status.failed ?? 0) failed, \(rate), ETA \(eta)")
            } else if let listed = status.listed {
                lines.append("\(step): listed \(ProgressReporter.grouped(listed)) (still listing), done \(ProgressReporter.grouped(done)), "
                             + "\(status.failed ?? 0) failed, \(rate)")
            }
        }
        for budget in status.limits ?? [] { lines.append(Self.text(budget)) }
        for worker in status.workerList ?? [] {
            lines.append("  worker \(worker.name) on \(worker.host), \(worker.slots) slots, labels \(labelsText(worker.labels))")
        }
        return lines.joined(separator: "\n")
    }

    /// A group's budget as one line: `limit UploadFileOp: 500 requests/s, 40 MiB/s,
    /// concurrency 12 of 64 (throttled, lowest 8, 31 slow-down answers), 5120 started,
    /// 20480 more requests (parts)`: the parts of multipart uploads count toward the requests rate too.
    static func text(_ budget: GroupBudgetStatus) -> String {
        var parts: [String] = []
        parts.append(budget.rates.requestsPerSecond.map { String(format: "%g requests/s", $0) } ?? "requests unlimited")
        if let bytes = budget.rates.bytesPerSecond { parts.append("\(RunSteering.size(bytes))/s") }
        if let concurrency = budget.concurrency, let maximum = budget.maxConcurrent {
            var adaptive = "concurrency \(concurrency) of \(maximum)"
            if budget.throttledAnswers > 0 {
                adaptive += " (\(concurrency < maximum ? "throttled" : "recovered"), lowest \(budget.lowestConcurrency ?? concurrency), "
                    + "\(budget.throttledAnswers) slow-down answers)"
            }
            parts.append(adaptive)
        }
        if let backedOff = budget.backedOffRequestsPerSecond { parts.append(String(format: "backed off to %.0f starts/s", backedOff)) }
        parts.append("\(budget.started) started")
        if budget.requestsReported > 0 { parts.append("\(budget.requestsReported) more requests (parts)") }
        return "limit \(budget.name): " + parts.joined(separator: ", ")
    }

    /// The status as two tables, workers and runs.
    static func table(_ status: PoolStatus) -> String {
        var lines = ["pool \(status.pool): \(status.workers.count) worker(s), \(status.busy)/\(status.slots) slots busy, "
                     + "\(status.runs.count) run(s), \(status.queued) task(s) queued", ""]
        lines += render(["WORKER", "HOST", "SLOTS", "BUSY", "LABELS", "OPS"], status.workers.map {
            [$0.name, $0.host, String($0.slots), String($0.busy), labelsText($0.labels ?? [:]),
             $0.ops.count > 4 ? "\($0.ops.prefix(4).joined(separator: ","))… (\($0.ops.count))" : $0.ops.joined(separator: ",")]
        })
        lines.append("")
        lines += render(["RUN", "FLOW", "FROM", "SHARE", "IN FLIGHT", "QUEUED", "DONE"], status.runs.map {
            [$0.id, $0.flow, $0.origin, String($0.share), String($0.inFlight), String($0.queued), String($0.done)]
        })
        return lines.joined(separator: "\n")
    }

    /// A worker's labels as `key=value` pairs, sorted, `-` for none.
    static func labelsText(_ labels: [String: String]) -> String {
        labels.isEmpty ? "-" : labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    private static func render(_ header: [String], _ rows: [[String]]) -> [String] {
        guard !rows.isEmpty else { return ["(no \(header[0].lowercased())s)"] }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.indices.map { $0 == row.count - 1 ? row[$0] : row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
    }
}
