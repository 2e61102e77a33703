import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
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

    @Option(name: .customLong("set"), help: ArgumentHelp("Override one bucket value, typed as YAML 1.2 types it (count=3 an integer, ok=true a bool, zip=0123 the integer 123).", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    @Option(name: .customLong("set-string"), help: ArgumentHelp("Override one bucket value with text, as it is (zip=0123, version=1.10).", valueName: "KEY=VALUE"))
    var textAssignments: [String] = []

    @Option(name: .long, help: ArgumentHelp("Merge a JSON or YAML map into the bucket.", valueName: "FILE"))
    var bucket: String?

    @OptionGroup var options: ClusterRunOptions

    @Option(name: .long, help: ArgumentHelp("Keep the run's journal in FILE (default: a new file in $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "FILE"))
    var journal: String?

    @Flag(name: .long, help: "Keep no journal: the run cannot be resumed and is not listed by runs.")
    var noJournal = false

    @Flag(name: .long, help: "Run only what reads (listings, the skipExisting HEADs), here and with no workers; write nothing, keep no journal, and print the plan: files and bytes to send, files skipped and why, requests, steps not run.")
    var dryRun = false

    func validate() throws {
        if noJournal && journal != nil { throw ValidationError("--no-journal and --journal exclude each other") }
        if dryRun && journal != nil { throw ValidationError("--dry-run keeps no journal: leave out --journal") }
        if dryRun, let report = [("--json", options.json), ("--timeline", options.timeline), ("--summary", options.summary),
                                 ("--metrics", options.metrics), ("--manifest", options.manifest)].first(where: { $0.1 != nil })?.0 {
            throw ValidationError("--dry-run prints its plan and writes no \(report): leave out \(report)")
        }
        for (option, list) in [("--set", assignments), ("--set-string", textAssignments)] {
            for assignment in list where !assignment.contains("=") || assignment.hasPrefix("=") {
                throw ValidationError("\(option) takes KEY=VALUE, got '\(assignment)'")
            }
        }
        // The two lists arrive apart, so which of them came last is not known: one key, one option.
        let typedKeys = Set(assignments.map(Self.key))
        if let key = textAssignments.map(Self.key).first(where: typedKeys.contains) {
            throw ValidationError("'\(key)' is given by both --set and --set-string: keep one")
        }
    }

    func run() async throws {
        ProcessSignals.clearInheritedMask()
        MemoryTuning.returnBigBuffersToTheSystem()
        if dryRun { return try await runDry() }
        var text = ""
        let load = {
            let (definition, read) = try loadDefinition()
            text = read
            return definition
        }
        if noJournal {
            try await RunExecution.execute(options: options, load: load) { _ in .success(nil) }
            return
        }
        let runID = RunJournal.newRunID()
        let path = journal ?? RunJournal.defaultFolder() + "/\(runID).sqlite"
        try await RunExecution.execute(options: options, load: load) { definition in
            do {
                let record = try RunJournal.create(at: path, runID: runID, flowFile: flowFile, flowText: text, definition: definition)
                CommandLineLogging.printDiagnostic("run \(runID); journal \(path) (resume it with: \(ResumeHint.command(runID: runID, journal: path, options: options)))")
                return .success(record)
            } catch {
                CommandLineLogging.printError("cannot start the run's journal: \(error)")
                return .failure(ExitCode(2))
            }
        }
    }

    /// The flow with its starting bucket, and the file's text (which the journal keeps).
    func loadDefinition() throws -> (FlowDefinition, String) {
        // With local workers the ops are the stock ones, so unknown names are errors now, not after
        // a worker time-out; remote workers (--bind, --pool) may offer other ops. The stock ops'
        // `with:` keys are checked either way, as `validate` checks them.
        let loader = FlowFileLoader(registry: options.workersMayOfferOtherOps ? nil : FlowOperationRegistry.standard,
                                    parameterDeclarations: FlowOperationRegistry.standard)
        var definition: FlowDefinition
        let text: String
        do {
            text = try FlowFileLoader.readText(at: flowFile)
            definition = try loader.load(text: text, file: flowFile)
            if let bucket {
                definition.bucket.merge(try loader.loadBucket(contentsOf: bucket)) { _, new in new }
            }
        } catch {
            CommandLineLogging.printDiagnostic(String(describing: error))
            throw ExitCode(2)
        }
        for assignment in assignments {
            definition.bucket[Self.key(assignment)] = FlowFileLoader.value(fromScalar: Self.value(assignment))
        }
        for assignment in textAssignments {
            definition.bucket[Self.key(assignment)] = .string(Self.value(assignment))
        }
        return (definition, text)
    }

    /// The KEY of KEY=VALUE.
    private static func key(_ assignment: String) -> String {
        String(assignment.prefix { $0 != "=" })
    }

    /// The VALUE of KEY=VALUE (everything after the first `=`).
    private static func value(_ assignment: String) -> String {
        assignment.firstIndex(of: "=").map { String(assignment[assignment.index(after: $0)...]) } ?? ""
    }
}
