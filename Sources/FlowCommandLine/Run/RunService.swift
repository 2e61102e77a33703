import Flow
import FlowCluster
import FlowJournal
import Foundation
import ServiceLifecycle
import Synchronization

/// What a run records beside its summary: the `--timeline` and the `--metrics` figures of its
/// coordinator.
struct RunReports: Sendable {
    let timeline: TimelineRecorder?
    let coordinatorMetrics: CoordinatorMetrics?
    /// The manifest and the count of uploads and skips, made as ops finish.
    let manifest: ManifestRecorder

    init(options: ClusterRunOptions, flowName: String) {
        manifest = ManifestRecorder(path: options.manifest)
        timeline = options.timeline.map { _ in TimelineRecorder(flow: flowName) }
        coordinatorMetrics = options.metrics.map { _ in CoordinatorMetrics(flow: flowName) }
    }
}

/// A started run as a `Service`: it waits for its workers (or its pool), runs the flow to its end,
/// prints the summary, writes the reports and records the end in the journal. Its group's other
/// services are the run's helpers; the group shuts them down when this one returns.
final class RunService: Service, Sendable {
    private let run: ClusterRun
    private let journal: RunJournal?
    private let options: ClusterRunOptions
    private let progress: ProgressReporter
    private let reports: RunReports
    private let summaryFile: SummaryFile?
    private let state = Mutex<(ending: Bool, exitCode: Int32)>((false, 0))

    init(run: ClusterRun, journal: RunJournal?, options: ClusterRunOptions, progress: ProgressReporter, reports: RunReports,
         summaryFile: SummaryFile?) {
        self.run = run
        self.journal = journal
        self.options = options
        self.progress = progress
        self.reports = reports
        self.summaryFile = summaryFile
    }

    /// Whether the run has ended and is printing its summary: Ctrl-C no longer cancels anything.
    var isEnding: Bool { state.withLock { $0.ending } }

    /// The process's exit status once ``run()`` has returned.
    var exitCode: Int32 { state.withLock { $0.exitCode } }

    func run() async throws {
        let code = await drive()
        state.withLock { $0.exitCode = code }
    }

    /// Runs the flow once its workers are there; returns the exit status.
    private func drive() async -> Int32 {
        let (progress, reports) = (self.progress, self.reports)
        run.flow.setProgressHandler { event in
            progress.report(event)
            reports.coordinatorMetrics?.record(event)
            reports.timeline?.record(event)
            reports.manifest.record(event)
        }
        if let code = await waitForWorkers() { return code }
        let startedAt = Date()
        reports.timeline?.begin(at: startedAt)
        // The summary is printed and the journal's end recorded while the local workers exit.
        let outcome = await run.run(ended: { progress.stop() }) { outcome in
            self.state.withLock { $0.ending = true }
            await self.finish(outcome, startedAt: startedAt)
        }
        // After the cluster has stopped: the timeline shows the workers leaving.
        if let timeline = reports.timeline, let path = options.timeline {
            timeline.finish(succeeded: run.flow.isSuccess, error: run.flow.error.map { String(describing: $0) })
            do {
                try timeline.write(to: path)
            } catch {
                CommandLineLogging.printError("cannot write the timeline to \(path): \(error.localizedDescription)")
            }
        }
        return outcome.rawValue
    }

    /// Waits for the local workers, the pool or `--min-workers`; the exit status when the run
    /// cannot start, `nil` when it can.
    private func waitForWorkers() async -> Int32? {
        let progress = self.progress
        if !(await run.waitForLocalWorkers()) {
            progress.note("not every local worker joined in time; going on with those that did")
        }
        if let pool = options.pool, !(await run.waitForPool(slow: { progress.note("waiting for the pool at \(pool): is 'flow-coordinator pool' running there?") })) {
            if let refusal = run.poolRefusal { return await refuse("the pool at \(pool) refused this run: \(refusal)") }
            return await refuse("no pool answered at \(pool) within \(options.workerTimeout) s (--worker-timeout): start one there with "
                          + "flow-coordinator pool --bind \(pool), or check --pool, --pool-key and --curve-key")
        }
        if !(await run.waitForMinimumWorkers()) {
            return await refuse("fewer than \(options.minWorkers) worker(s) joined within \(options.workerTimeout) s (--min-workers); "
                          + "start workers with flow-worker --connect ENDPOINT")
        }
        return nil
    }

    /// Stops a run that cannot start, says why, and records it as interrupted: exit status 3.
    private func refuse(_ message: String) async -> Int32 {
        await run.stop()
        progress.stop()
        CommandLineLogging.printError(message)
        await RunExecution.end(journal, .interrupted, code: 3, options: options)
        return 3
    }

    /// The run's end: the summary, the reports, the journal's last record.
    private func finish(_ outcome: ClusterRun.Outcome, startedAt: Date) async {
        let flow = run.flow
        RunExecution.printSummary(of: flow, file: summaryFile, options: options)
        if let json = options.json {
            do {
                try FlowRunReport(flow: flow, startedAt: startedAt, finishedAt: Date()).write(to: json)
            } catch {
                CommandLineLogging.printError("cannot write the JSON report to \(json): \(error.localizedDescription)")
            }
        }
        RunExecution.writeManifest(reports.manifest)
        if outcome == .clusterError, let error = flow.error {
            CommandLineLogging.printError(String(describing: error))
            // The pool stopped taking this run (its key revoked): that is why no worker came.
            if let pool = options.pool, let refusal = run.poolRefusal { CommandLineLogging.printError("the pool at \(pool) refused this run: \(refusal)") }
        }
        // A cancelled run, or one the cluster could not carry, can go on with `resume`.
        let state: RunJournalInfo.State
        switch outcome {
        case .succeeded: state = .succeeded
        case .failed: state = flow.isCancelled ? .interrupted : .failed
        case .clusterError: state = .interrupted
        }
        await RunExecution.end(journal, state, code: outcome.rawValue, options: options)
        if state != .interrupted { RunExecution.clearPausedMark(journal: journal) }
    }
}
