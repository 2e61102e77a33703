import ArgumentParser
import Flow
import FlowCluster
import FlowStandardOps
import Foundation

/// `flow-coordinator run FLOW_FILE`: runs a flow on the cluster and prints its summary.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a flow file on a cluster and print its summary.",
        discussion: """
            Without --bind, starts --workers local flow-worker processes on a private endpoint and stops them \
            at the end. With --bind (e.g. tcp://0.0.0.0:5555), waits for workers started elsewhere with \
            flow-worker --connect. The summary goes to stdout; progress and diagnostics to stderr.
            """
    )

    @Argument(help: "The flow file (YAML or JSON).")
    var flowFile: String

    @Option(name: .customLong("set"), help: ArgumentHelp("Override one bucket value, read as a YAML scalar (target=B, count=3).", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    @Option(name: .long, help: ArgumentHelp("Merge a JSON or YAML map into the bucket.", valueName: "FILE"))
    var bucket: String?

    @Option(name: .long, help: ArgumentHelp("Wait for workers on this endpoint instead of starting local ones.", valueName: "ENDPOINT"))
    var bind: String?

    @Option(name: .long, help: ArgumentHelp("With --bind: wait until N workers have joined before the flow starts (at most --worker-timeout seconds).", valueName: "N"))
    var minWorkers: Int = 0

    @Option(name: .long, help: "Local workers to start (without --bind).")
    var workers: Int = 2

    @Option(name: .long, help: "Tasks each local worker runs at once.")
    var concurrency: Int = 4

    @Option(name: .long, help: ArgumentHelp("Seconds a task waits for a worker that offers its op.", valueName: "SECONDS"))
    var workerTimeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Also write the summary to FILE.", valueName: "FILE"))
    var summary: String?

    @Option(name: .long, help: ArgumentHelp("Write a machine-readable report of the run (bucket, every op with its worker, times, state, log lines) to FILE.", valueName: "FILE"))
    var json: String?

    @Flag(name: .long, help: "No progress output on stderr.")
    var quiet = false

    @Option(name: .long, help: "Seconds between heartbeats.")
    var heartbeatInterval: Double = 1

    @Option(name: .long, help: "Missed heartbeats before a worker is declared dead.")
    var liveness: Int = 3

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (diagnostics on stderr).")
    var logLevel: String = "warning"

    func validate() throws {
        if workers < 1 { throw ValidationError("--workers must be at least 1") }
        if minWorkers < 0 { throw ValidationError("--min-workers must not be negative") }
        if minWorkers > 0 && bind == nil { throw ValidationError("--min-workers goes with --bind (local workers are always waited for)") }
        if concurrency < 1 { throw ValidationError("--concurrency must be at least 1") }
        if workerTimeout < 0 { throw ValidationError("--worker-timeout must not be negative") }
        if heartbeatInterval <= 0 { throw ValidationError("--heartbeat-interval must be positive") }
        if liveness < 1 { throw ValidationError("--liveness must be at least 1") }
        for assignment in assignments where !assignment.contains("=") || assignment.hasPrefix("=") {
            throw ValidationError("--set takes KEY=VALUE, got '\(assignment)'")
        }
    }

    func run() async throws {
        ProcessSignals.clearInheritedMask()
        let definition = try loadDefinition()
        let logger = CommandLineLogging.logger(label: "flow-coordinator", level: logLevel)
        let progress = ProgressReporter(quiet: quiet)

        var options = ClusterRun.Options()
        options.bind = bind
        options.workers = workers
        options.concurrency = concurrency
        options.workerTimeout = .seconds(workerTimeout)
        options.heartbeatInterval = .seconds(heartbeatInterval)
        options.registry = FlowWorkerCommand.registry
        options.liveness = liveness
        options.minimumWorkers = minWorkers
        let run = ClusterRun(definition: definition, options: options, logger: logger) { event in progress.report(event) }
        do {
            let endpoint = try run.start()
            if bind != nil { progress.note("listening on \(endpoint); start workers with: flow-worker --connect \(endpoint)") }
        } catch {
            run.stop()
            CommandLineLogging.printError(String(describing: error))
            throw ExitCode(3)
        }
        run.flow.setProgressHandler { event in progress.report(event) }
        progress.start { run.status }
        let interrupts = InterruptHandler { run.flow.cancel() }
        if !(await run.waitForLocalWorkers()) {
            progress.note("not every local worker joined in time; going on with those that did")
        }
        if !(await run.waitForMinimumWorkers()) {
            run.stop()
            progress.stop()
            CommandLineLogging.printError("fewer than \(minWorkers) worker(s) joined within \(workerTimeout) s (--min-workers); start workers with flow-worker --connect ENDPOINT")
            throw ExitCode(3)
        }
        let startedAt = Date()
        let outcome = await run.run()
        interrupts.cancel()
        progress.stop()

        let text = run.flow.generateSummary()
        print(text, terminator: "")
        fflush(nil)
        if let summary {
            do {
                try text.write(toFile: summary, atomically: true, encoding: .utf8)
            } catch {
                CommandLineLogging.printError("cannot write the summary to \(summary): \(error.localizedDescription)")
            }
        }
        if let json {
            do {
                try FlowRunReport(flow: run.flow, startedAt: startedAt, finishedAt: Date()).write(to: json)
            } catch {
                CommandLineLogging.printError("cannot write the JSON report to \(json): \(error.localizedDescription)")
            }
        }
        if outcome == .clusterError, let error = run.flow.error {
            CommandLineLogging.printError(String(describing: error))
        }
        if outcome != .succeeded { throw ExitCode(outcome.rawValue) }
    }

    private func loadDefinition() throws -> FlowDefinition {
        // With local workers the ops are the stock ones, so unknown names are errors now, not after
        // a worker time-out; remote workers may offer other ops.
        let loader = FlowFileLoader(registry: bind == nil ? FlowOperationRegistry.standard : nil)
        var definition: FlowDefinition
        do {
            definition = try loader.load(contentsOf: flowFile)
            if let bucket {
                definition.bucket.merge(try loader.loadBucket(contentsOf: bucket)) { _, new in new }
            }
        } catch {
            CommandLineLogging.printDiagnostic(String(describing: error))
            throw ExitCode(2)
        }
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            definition.bucket[String(parts[0])] = FlowFileLoader.value(fromScalar: parts.count > 1 ? String(parts[1]) : "")
        }
        return definition
    }
}
