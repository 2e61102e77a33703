import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
import FlowStandardOps
import Foundation

/// `flow-coordinator resume RUN`: goes on with a run that stopped before its end.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Go on with a run that stopped before its end (a crash, kill -9, Ctrl-C).",
        discussion: """
            Runs the flow the run started with (from its journal, not the flow file as it is now), from its \
            starting bucket. What the run finished is taken as it was and not run again; what was in flight \
            when it stopped runs again (at least once). The summary and reports come out as if the run had \
            never stopped. A run that ended does nothing and exits with its code; --retry-failed runs only \
            the failed elements of a failed run again.
            """
    )

    @Argument(help: ArgumentHelp("The run's id (see flow-coordinator runs) or its journal file.", valueName: "RUN_ID_OR_JOURNAL_FILE"))
    var run: String

    @Flag(name: .long, help: "Run the failed elements (and a failed op) of a failed run again; everything else is taken as it was.")
    var retryFailed = false

    @Option(name: .long, help: ArgumentHelp("Where run journals are (default: $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "DIR"))
    var dir: String?

    @OptionGroup var options: ClusterRunOptions

    func run() async throws {
        ProcessSignals.clearInheritedMask()
        MemoryTuning.returnBigBuffersToTheSystem()
        let path = RunsCommand.journalPath(for: run, folder: dir ?? RunJournal.defaultFolder())
        let info: RunJournalInfo
        do {
            info = try RunJournal.read(at: path)
        } catch {
            CommandLineLogging.printError("cannot resume \(run): \(error)")
            throw ExitCode(2)
        }
        switch info.state {
        case .succeeded:
            CommandLineLogging.printDiagnostic("run \(info.runID) already succeeded; nothing to resume")
            return
        case .failed where !retryFailed:
            let code = info.exitCode ?? 1
            CommandLineLogging.printDiagnostic("run \(info.runID) already ended: it failed (exit \(code)); nothing to resume "
                                               + "(--retry-failed runs its failed elements again)")
            throw ExitCode(code)
        case .running:
            CommandLineLogging.printError("cannot resume \(run): run \(info.runID) is still running (\(info.runningProcess ?? "elsewhere")); stop it first")
            throw ExitCode(2)
        case .failed, .interrupted:
            break
        }

        let journal: RunJournal
        let stored: RunJournal.Stored
        do {
            (journal, stored) = try RunJournal.resume(at: path, retryFailed: retryFailed)
        } catch {
            CommandLineLogging.printError("cannot resume \(run): \(error)")
            throw ExitCode(2)
        }
        let line = "[Journal] resumed run \(info.runID) (\(info.flowFile)): \(journal.replayedCount) result(s) recorded before it stopped "
            + "are taken as they were\(retryFailed ? ", failed ones run again" : ""); the rest runs now"
        try await RunExecution.execute(options: options, firstLine: line, load: {
            let definition = try await Self.definition(stored, file: info.flowFile, journal: journal, path: path, registry: !options.workersMayOfferOtherOps)
            CommandLineLogging.printDiagnostic("run \(info.runID); journal \(path); resuming with \(journal.replayedCount) result(s) already recorded")
            return definition
        }) { _ in .success(journal) }
    }

    /// The journal's flow with its starting bucket; a flow that no longer loads ends the resume.
    private static func definition(_ stored: RunJournal.Stored, file: String, journal: RunJournal, path: String,
                                   registry: Bool) async throws -> FlowDefinition {
        var definition: FlowDefinition
        do {
            let loader = FlowFileLoader(registry: registry ? FlowOperationRegistry.standard : nil)
            definition = try loader.load(text: stored.flowText, file: file)
        } catch {
            CommandLineLogging.printDiagnostic(String(describing: error))
            CommandLineLogging.printError("the flow in \(path) no longer loads (see above); nothing was run")
            try? await journal.finish(.interrupted, exitCode: 2)
            throw ExitCode(2)
        }
        definition.bucket = stored.bucket
        return definition
    }
}
