import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
import Foundation
import Logging
import ServiceLifecycle
import ZeroMQ

/// Runs a loaded flow on a cluster, for `run` and `resume`: starts the cluster, shows progress,
/// prints the summary, writes the reports, records the run's end in its journal, and exits with
/// the run's code.
///
/// The run and its helpers (progress output, the control socket, the metrics server, the key
/// reloader, Ctrl-C) are `Service`s in one `ServiceGroup`: when the run ends, the group shuts the
/// helpers down (``RunService``).
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
    static func execute(options: ClusterRunOptions, firstLine: String? = nil, load: () async throws -> FlowDefinition,
                        makeJournal: (FlowDefinition) -> Result<RunJournal?, ExitCode>) async throws {
        let logger = CommandLineLogging.logger(label: "flow-coordinator", level: options.logLevel)
        let progress = ProgressReporter(quiet: options.quiet, pool: options.pool)
        let clusterOptions = try checkedClusterOptions(options)
        // A worker boots in about the time a small flow file takes to load (15-20 ms each here).
        // When this fails, `run.start()` below tries again and reports why.
        let localStart = options.bind == nil && options.pool == nil ? try? await ClusterRun.startLocal(options: clusterOptions, logger: logger) : nil
        // Stopped on every way out: a no-op once the run has taken them over.
        do {
            try await execute(options: options, clusterOptions: clusterOptions, logger: logger, progress: progress, localStart: localStart,
                              firstLine: firstLine, load: load, makeJournal: makeJournal)
        } catch {
            await localStart?.stop()
            throw error
        }
        await localStart?.stop()
    }

    /// ``execute(options:firstLine:load:makeJournal:)`` once the local workers are starting.
    private static func execute(options: ClusterRunOptions, clusterOptions: ClusterRun.Options, logger: Logger, progress: ProgressReporter,
                                localStart: ClusterRun.LocalStart?, firstLine: String?, load: () async throws -> FlowDefinition,
                                makeJournal: (FlowDefinition) -> Result<RunJournal?, ExitCode>) async throws {
        var definition = try await load()
        let reports = RunReports(options: options, flowName: definition.name)
        let run = ClusterRun(definition: definition, options: clusterOptions, logger: logger, localStart: localStart) { event in
            progress.report(event)
            reports.timeline?.record(event)
        }
        let metricsServer = try await startMetrics(options: options, run: run, reports: reports)
        let summaryFile = try openSummaryFile(options: options)
        defer { summaryFile?.close(options: options) }
        prepareFlow(run.flow, options: options, summaryFile: summaryFile, firstLine: firstLine)
        // A pool is told the run's id, which the journal gives: its coordinator starts after it.
        let started: Result<String, any Error>? = options.pool == nil ? await starting(run) : nil
        let made = makeJournal(definition)
        definition.bucket = [:]
        let journal = try await attachJournal(made, to: run, options: options)
        let outcome: Result<String, any Error>
        if let started {
            outcome = started
        } else {
            outcome = await starting(run, runID: journal?.runID)
        }
        try await announce(outcome, run: run, journal: journal,
                           options: options, clusterOptions: clusterOptions, progress: progress)
        progress.start { run.status }
        let session = RunService(run: run, journal: journal, options: options, progress: progress, reports: reports,
                                 summaryFile: summaryFile)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: session, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: StoppingService { progress.stop() }),
            .init(service: InterruptService(isEnding: { session.isEnding }) { run.flow.cancel() }),
        ]
        if let control = await startControl(run: run, journal: journal, definition: definition, progress: progress) {
            services.append(.init(service: StoppingService { await control.stop() }))
        }
        if let metricsServer { services.append(.init(service: MetricsService(server: metricsServer))) }
        if let reloader = keyReloader(options: options, clusterOptions: clusterOptions, run: run, progress: progress) {
            services.append(.init(service: reloader))
        }
        try await ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger)).run()
        let code = session.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    /// The cluster's options from the command line's, checked: CURVE keys, the pool, report paths,
    /// metrics. A problem is printed and exits with code 2.
    private static func checkedClusterOptions(_ options: ClusterRunOptions) throws -> ClusterRun.Options {
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
        return clusterOptions
    }

    /// Serves `--metrics`; a server that cannot start exits with code 2.
    private static func startMetrics(options: ClusterRunOptions, run: ClusterRun, reports: RunReports) async throws -> MetricsServer? {
        guard let metrics = options.metrics else { return nil }
        do {
            return try await MetricsExport.start(metrics, program: "flow-coordinator") {
                reports.coordinatorMetrics?.update(status: run.status, budgets: run.groupBudgets)
            }
        } catch {
            CommandLineLogging.printError(error.description)
            throw ExitCode(2)
        }
    }

    /// Opens `--summary FILE`, or a temporary file for `--full-summary`; exits with code 2 when it
    /// cannot.
    private static func openSummaryFile(options: ClusterRunOptions) throws -> SummaryFile? {
        do {
            return try (options.summary ?? (options.fullSummary ? temporarySummaryPath() : nil)).map(SummaryFile.init(path:))
        } catch {
            CommandLineLogging.printError("\(error); choose another path with --summary FILE")
            throw ExitCode(2)
        }
    }

    /// What the flow keeps and where its summary goes, before it starts.
    private static func prepareFlow(_ flow: Flow, options: ClusterRunOptions, summaryFile: SummaryFile?, firstLine: String?) {
        // Big groups stay out of memory: the terminal shows them condensed anyway, the whole
        // summary is streamed to its file, the manifest written as ops finish, and every element
        // is in the journal. A JSON report lists every op, so it keeps them all.
        if options.json == nil { flow.setElementRetention(FlowElementRetention(groupsOver: condenseOver, keepingFirst: condensedShown)) }
        if let summaryFile { flow.setSummaryStream { entry in summaryFile.write(entry) } }
        if let firstLine { flow.log(message: firstLine) }
    }

    /// Starts the run's cluster: the endpoint, or why it did not start.
    private static func starting(_ run: ClusterRun, runID: String? = nil) async -> Result<String, any Error> {
        do {
            return .success(try await run.start(runID: runID))
        } catch {
            return .failure(error)
        }
    }

    /// Hands the journal `makeJournal` opened to the run; a journal that cannot be made stops the
    /// run with its code.
    private static func attachJournal(_ made: Result<RunJournal?, ExitCode>, to run: ClusterRun, options: ClusterRunOptions) async throws -> RunJournal? {
        let journal: RunJournal?
        switch made {
        case .success(let made): journal = made
        case .failure(let code):
            await run.stop()
            throw code
        }
        guard let journal else { return nil }
        run.flow.setJournal(journal)
        // A journal that cannot be written stops the run as Ctrl-C does: what the run did next
        // would not be recorded, and a resume would do it again.
        let resume = ResumeHint.command(runID: journal.runID, journal: journal.path, options: options)
        journal.onWriteFailure { failure in
            // Off the progress line a terminal shows.
            if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\n".utf8)) }
            CommandLineLogging.printError(journalFailureMessage(failure, resume: resume))
            run.flow.cancel()
        }
        return journal
    }

    /// Says where workers connect (with `--bind`); a cluster that did not start ends the run with
    /// exit code 3.
    private static func announce(_ started: Result<String, any Error>, run: ClusterRun, journal: RunJournal?, options: ClusterRunOptions,
                                 clusterOptions: ClusterRun.Options, progress: ProgressReporter) async throws {
        switch started {
        case .success(let endpoint):
            guard options.bind != nil else { return }
            let connect = WorkerEndpoint.toConnect(bound: endpoint)
            let which = connect == endpoint ? "" : " (this machine's name; any address of it that the workers reach will do)"
            // With CURVE, the coordinator's public key too (Z85 has no quote, but has & and *).
            let keys = clusterOptions.curve.map { " --curve-key WORKER.key --coordinator-key '\($0.keyPair.publicKey)'" } ?? ""
            progress.note("listening on \(endpoint); start workers with: flow-worker --connect \(connect)\(keys)\(which)")
        case .failure(let error):
            await run.stop()
            CommandLineLogging.printError(String(describing: error))
            await end(journal, .interrupted, code: 3, options: options)
            throw ExitCode(3)
        }
    }

    /// Re-reads `--authorized-keys` on SIGHUP, for a CURVE coordinator.
    private static func keyReloader(options: ClusterRunOptions, clusterOptions: ClusterRun.Options, run: ClusterRun,
                                    progress: ProgressReporter) -> HangupReloader? {
        guard clusterOptions.curve != nil, let path = options.authorizedKeysPath else { return nil }
        return HangupReloader {
            do {
                let keys = try AuthorizedKeys.read(at: path)
                run.reloadAuthorizedKeys(keys)
                progress.note("SIGHUP: \(keys.names.count) authorised key(s) read from \(path)")
            } catch {
                CommandLineLogging.printError("SIGHUP: kept the authorised keys as they were: \(error)")
            }
        }
    }

    /// Prints the run's summary: condensed on the terminal, or the whole of it with
    /// `--full-summary`; finishes the `--summary` file first.
    static func printSummary(of flow: Flow, file summaryFile: SummaryFile?, options: ClusterRunOptions) {
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
    static func end(_ journal: RunJournal?, _ state: RunJournalInfo.State, code: Int32, options: ClusterRunOptions) async {
        guard let journal else { return }
        do {
            try await journal.finish(state, exitCode: code)
        } catch {
            CommandLineLogging.printError("the run's journal is incomplete: \(error)")
        }
        if let hint = ResumeHint.afterEnd(runID: journal.runID, journal: journal.path, options: options, state) { CommandLineLogging.printDiagnostic(hint) }
    }
}

extension SummaryFile {
    /// Lets the file go at the run's end; the temporary one `--full-summary` made is removed.
    func close(options: ClusterRunOptions) {
        discard()
        if options.summary == nil && options.fullSummary { unlink(path) }
    }
}
