import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
import Foundation

/// Runs a loaded flow on a cluster, for `run` and `resume`: starts the cluster, shows progress,
/// prints the summary, writes the reports, records the run's end in its journal, and exits with
/// the run's code.
enum RunExecution {
    /// Runs the flow `load` reads, with the journal `makeJournal` opens keeping its record.
    ///
    /// Without `--bind` the local workers start before `load` is called: they boot while the flow
    /// file loads.
    ///
    /// - Parameters:
    ///   - firstLine: a line the summary starts with (a resume's `[Journal] resumed …`).
    ///   - load: reads the flow; it prints its own error and throws when it cannot. Its starting
    ///     bucket is let go once the flow and the journal have it (a million-value bucket is worth
    ///     not keeping twice).
    ///   - makeJournal: opens the run's journal (`nil`: none) for the definition; called once the
    ///     cluster is starting, so the file is made while local workers boot. It prints its own error and
    ///     returns `.failure` when it cannot; the run then stops with exit code 2.
    static func execute(options: ClusterRunOptions, firstLine: String? = nil, load: () throws -> FlowDefinition,
                        makeJournal: (FlowDefinition) -> Result<RunJournal?, ExitCode>) async throws {
        let logger = CommandLineLogging.logger(label: "flow-coordinator", level: options.logLevel)
        let progress = ProgressReporter(quiet: options.quiet, pool: options.pool)
        var clusterOptions = options.cluster
        do {
            clusterOptions.curve = try options.curveServer()
            clusterOptions.pool = try options.poolOptions()
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
        if let bind = options.bind, clusterOptions.curve == nil, !CurveOptions.isLocal(bind) {
            CommandLineLogging.printDiagnostic("warning: --insecure: \(bind) takes plaintext workers from anywhere; anyone who reaches it can join and read the buckets")
        }
        for (flag, path) in [("--json", options.json), ("--timeline", options.timeline)] {
            if let path, let problem = ReportPath.problem(path) {
                CommandLineLogging.printError("cannot write \(flag) \(path): \(problem); choose another path with \(flag) FILE")
                throw ExitCode(2)
            }
        }
        if options.metrics != nil {
            MetricsExport.bootstrap()
            clusterOptions.metrics = TaskMetrics()
        }
        // A worker boots in about the time a small flow file takes to load (15-20 ms each here).
        // When this fails, `run.start()` below tries again and reports why.
        let localStart = options.bind == nil && options.pool == nil ? try? ClusterRun.startLocal(options: clusterOptions, logger: logger) : nil
        // A no-op once the run has taken them over.
        defer { localStart?.stop() }
        var definition = try load()
        let timeline = options.timeline.map { _ in TimelineRecorder(flow: definition.name) }
        let coordinatorMetrics = options.metrics.map { _ in CoordinatorMetrics(flow: definition.name) }
        let run = ClusterRun(definition: definition, options: clusterOptions, logger: logger, localStart: localStart) { event in
            progress.report(event)
            timeline?.record(event)
        }
        var metricsServer: MetricsServer?
        if let metrics = options.metrics {
            do {
                metricsServer = try await MetricsExport.start(metrics, program: "flow-coordinator") {
                    coordinatorMetrics?.update(status: run.status)
                }
            } catch {
                CommandLineLogging.printError(error.description)
                throw ExitCode(2)
            }
        }
        let reload = clusterOptions.curve == nil ? nil : options.authorizedKeysPath.map { path in
            HangupHandler {
                do {
                    let keys = try AuthorizedKeys.read(at: path)
                    run.reloadAuthorizedKeys(keys)
                    progress.note("SIGHUP: \(keys.names.count) authorised key(s) read from \(path)")
                } catch {
                    CommandLineLogging.printError("SIGHUP: kept the authorised keys as they were: \(error)")
                }
            }
        }
        defer { reload?.cancel() }
        // Big groups stay out of memory: the terminal shows them condensed anyway, the whole
        // summary is streamed to its file, and every element is in the journal. A JSON report
        // lists every op, so it keeps them all.
        if options.json == nil && options.manifest == nil { run.flow.setElementRetention(FlowElementRetention(groupsOver: condenseOver, keepingFirst: condensedShown)) }
        let summaryFile: SummaryFile?
        let summaryIsTemporary = options.summary == nil && options.fullSummary
        do {
            summaryFile = try (options.summary ?? (options.fullSummary ? temporarySummaryPath() : nil)).map(SummaryFile.init(path:))
        } catch {
            CommandLineLogging.printError("\(error); choose another path with --summary FILE")
            throw ExitCode(2)
        }
        defer {
            summaryFile?.discard()
            if summaryIsTemporary, let path = summaryFile?.path { unlink(path) }
        }
        if let summaryFile { run.flow.setSummaryStream { entry in summaryFile.write(entry) } }
        if let firstLine { run.flow.log(message: firstLine) }
        // A pool is told the run's id, which the journal gives: its coordinator starts after it.
        let started: Result<String, any Error>? = options.pool == nil ? Result { try run.start() } : nil
        let journal: RunJournal?
        let made = makeJournal(definition)
        definition.bucket = [:]
        switch made {
        case .success(let made): journal = made
        case .failure(let code):
            run.stop()
            throw code
        }
        if let journal {
            run.flow.setJournal(journal)
            // A journal that cannot be written stops the run as Ctrl-C does: what the run did
            // next would not be recorded, and a resume would do it again.
            let resume = ResumeHint.command(runID: journal.runID, journal: journal.path, options: options)
            journal.onWriteFailure { failure in
                // Off the progress line a terminal shows.
                if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\n".utf8)) }
                CommandLineLogging.printError(journalFailureMessage(failure, resume: resume))
                run.flow.cancel()
            }
        }
        switch started ?? Result(catching: { try run.start(runID: journal?.runID) }) {
        case .success(let endpoint):
            if options.bind != nil {
                let connect = WorkerEndpoint.toConnect(bound: endpoint)
                let which = connect == endpoint ? "" : " (this machine's name; any address of it that the workers reach will do)"
                // With CURVE, the coordinator's public key too (Z85 has no quote, but has & and *).
                let keys = clusterOptions.curve.map { " --curve-key WORKER.key --coordinator-key '\($0.keyPair.publicKey)'" } ?? ""
                progress.note("listening on \(endpoint); start workers with: flow-worker --connect \(connect)\(keys)\(which)")
            }
        case .failure(let error):
            run.stop()
            CommandLineLogging.printError(String(describing: error))
            end(journal, .interrupted, code: 3, options: options)
            throw ExitCode(3)
        }
        let control = startControl(run: run, journal: journal, flowName: definition.name, progress: progress)
        defer { control?.stop() }
        run.flow.setProgressHandler { event in
            progress.report(event)
            coordinatorMetrics?.record(event)
            timeline?.record(event)
        }
        progress.start { run.status }
        let interrupts = InterruptHandler { run.flow.cancel() }
        if !(await run.waitForLocalWorkers()) {
            progress.note("not every local worker joined in time; going on with those that did")
        }
        if let pool = options.pool, !(await run.waitForPool(slow: { progress.note("waiting for the pool at \(pool): is 'flow-coordinator pool' running there?") })) {
            run.stop()
            progress.stop()
            CommandLineLogging.printError("no pool answered at \(pool) within \(options.workerTimeout) s (--worker-timeout): start one there with "
                                          + "flow-coordinator pool --bind \(pool), or check --pool, --pool-key and --curve-key")
            end(journal, .interrupted, code: 3, options: options)
            throw ExitCode(3)
        }
        if !(await run.waitForMinimumWorkers()) {
            run.stop()
            progress.stop()
            CommandLineLogging.printError("fewer than \(options.minWorkers) worker(s) joined within \(options.workerTimeout) s (--min-workers); start workers with flow-worker --connect ENDPOINT")
            end(journal, .interrupted, code: 3, options: options)
            throw ExitCode(3)
        }
        let startedAt = Date()
        timeline?.begin(at: startedAt)
        // The summary is printed and the journal's end recorded while the local workers exit.
        let outcome = await run.run(ended: { progress.stop() }) { outcome in
            interrupts.cancel()
            printSummary(of: run.flow, file: summaryFile, options: options)
            if let json = options.json {
                do {
                    try FlowRunReport(flow: run.flow, startedAt: startedAt, finishedAt: Date()).write(to: json)
                } catch {
                    CommandLineLogging.printError("cannot write the JSON report to \(json): \(error.localizedDescription)")
                }
            }
            writeManifest(of: run.flow, options: options)
            if outcome == .clusterError, let error = run.flow.error {
                CommandLineLogging.printError(String(describing: error))
            }
            // A cancelled run, or one the cluster could not carry, can go on with `resume`.
            let state: RunJournalInfo.State
            switch outcome {
            case .succeeded: state = .succeeded
            case .failed: state = run.flow.isCancelled ? .interrupted : .failed
            case .clusterError: state = .interrupted
            }
            end(journal, state, code: outcome.rawValue, options: options)
            if state != .interrupted { clearPausedMark(journal: journal) }
        }
        // After the cluster has stopped: the timeline shows the workers leaving.
        if let timeline, let path = options.timeline {
            timeline.finish(succeeded: run.flow.isSuccess, error: run.flow.error.map { String(describing: $0) })
            do {
                try timeline.write(to: path)
            } catch {
                CommandLineLogging.printError("cannot write the timeline to \(path): \(error.localizedDescription)")
            }
        }
        await metricsServer?.stop()
        if outcome != .succeeded { throw ExitCode(outcome.rawValue) }
    }

    /// Prints the run's summary: condensed on the terminal, or the whole of it with
    /// `--full-summary`; finishes the `--summary` file first.
    private static func printSummary(of flow: Flow, file summaryFile: SummaryFile?, options: ClusterRunOptions) {
        do {
            try summaryFile?.finish(isSuccess: flow.isSuccess)
        } catch {
            CommandLineLogging.printError(String(describing: error))
        }
        if options.fullSummary, let summaryFile {
            do {
                try summaryFile.copyToStandardOutput()
            } catch {
                CommandLineLogging.printError(String(describing: error))
            }
        } else {
            let where_ = options.summary.map { "in \($0)" } ?? "with --full-summary, or in a file with --summary FILE"
            print(flow.generateSummary(condensingGroupsOver: condenseOver, showingFirst: condensedShown, maxLineLength: 500) { count in
                "[Group] … \(count) more elements succeeded; their lines are not shown here (the full summary: \(where_))"
            }, terminator: "")
        }
        fflush(nil)
    }

    /// Groups with more elements than this are condensed on the terminal.
    static let condenseOver = 100
    /// How many of a condensed group's first elements the terminal shows.
    static let condensedShown = 10

    /// Where `--full-summary` without `--summary FILE` writes the summary before printing it.
    private static func temporarySummaryPath() -> String {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("flow-summary-\(getpid()).txt").path
    }

    /// What a run whose journal could not be written says at once: what failed, the room left
    /// there, that the run stops, and how to go on once there is room.
    static func journalFailureMessage(_ failure: RunJournalWriteFailure, resume: String) -> String {
        let free = failure.freeBytes.map { "\(RunJournalWriteFailure.describe(bytes: $0)) free" } ?? "free space unknown"
        return "the run's journal cannot be written: \(failure) (\(free) in \(failure.folder)). "
            + "Stopping the run: no new task starts; what finished and was recorded is kept. "
            + "Make room there, then go on with: \(resume)"
    }

    /// Records the run's end; a journal that cannot be written is reported, not fatal: the run
    /// itself is over. The resume hint comes even then: a run whose end is not recorded reads
    /// as interrupted once its process is gone.
    private static func end(_ journal: RunJournal?, _ state: RunJournalInfo.State, code: Int32, options: ClusterRunOptions) {
        guard let journal else { return }
        do {
            try journal.finish(state, exitCode: code)
        } catch {
            CommandLineLogging.printError("the run's journal is incomplete: \(error)")
        }
        if let hint = ResumeHint.afterEnd(runID: journal.runID, journal: journal.path, options: options, state) { CommandLineLogging.printDiagnostic(hint) }
    }
}
