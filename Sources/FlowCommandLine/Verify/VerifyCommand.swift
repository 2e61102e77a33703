import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
import FlowStandardOps
import Foundation

/// `flow-coordinator verify RUN`: checks every object a run uploaded against the store.
///
/// The objects are the run's `manifest {…}` lines in its journal (``UploadManifestEntry``, the
/// latest for each target), checked by a group of `VerifyObjectOp` on the same kind of workers a
/// run uses (`--workers`, `--bind`, `--pool`). An S3 object is looked for at `--endpoint` and
/// `--region` when given, else at the endpoint and region its entry recorded, else at those the
/// run's flow (kept in the journal) gives its bucket's `UploadFileOp`, else at the environment's
/// (`AWS_ENDPOINT_URL_S3`, `AWS_REGION`, …), with credentials from the machine that runs each
/// check.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every object a run uploaded against the store (size and checksum, or ETag).",
        discussion: """
            Reads the objects from the run's journal (the manifest lines UploadFileOp logs) and checks each \
            with a HEAD, spread over the workers as a group: on S3 its size and stored checksum (checksum \
            mode), else its ETag; on HTTP its size and ETag. --deep reads each object back and hashes it. \
            Prints each object that is missing or changed, then 'verified N objects: N ok (A by checksum, B by ETag, C by size only), M missing, K changed'. \
            Exit codes: 0 every object is as recorded; 1 one is missing or changed, or could not be checked; \
            2 usage error (an unknown run); 3 cluster error.
            """
    )

    @Argument(help: ArgumentHelp("The run's id (see flow-coordinator runs) or its journal file.", valueName: "RUN_ID_OR_JOURNAL_FILE"))
    var run: String

    @Flag(name: .long, help: "Read each object back and hash it with the algorithm the run used (a GET each), instead of a HEAD.")
    var deep = false

    @Option(name: .long, help: ArgumentHelp("S3: the store's endpoint, over the one each object recorded and $AWS_ENDPOINT_URL_S3.", valueName: "URL"))
    var endpoint: String?

    @Option(name: .long, help: ArgumentHelp("S3: the signing region, over the one each object recorded and $AWS_REGION.", valueName: "REGION"))
    var region: String?

    @Option(name: .long, help: ArgumentHelp("Checks in flight at once over all workers.", valueName: "N"))
    var maxConcurrent: Int = 64

    @Option(name: .long, help: ArgumentHelp("Where run journals are (default: $XDG_STATE_HOME/flow/runs, or ~/.local/state/flow/runs).", valueName: "DIR"))
    var dir: String?

    @OptionGroup var options: ClusterRunOptions

    func validate() throws {
        if let option = [("--timeline", options.timeline), ("--summary", options.summary), ("--metrics", options.metrics),
                         ("--manifest", options.manifest)].first(where: { $0.1 != nil })?.0 {
            throw ValidationError("verify writes no \(option): leave it out (--json writes the checks)")
        }
        if maxConcurrent < 1 { throw ValidationError("--max-concurrent must be at least 1") }
        if let endpoint, URL(string: endpoint)?.host == nil { throw ValidationError("--endpoint must be an http(s):// URL, got '\(endpoint)'") }
    }

    func run() async throws {
        ProcessSignals.clearInheritedMask()
        let folder = dir ?? RunJournal.defaultFolder()
        let path = RunsCommand.journalPath(for: run, folder: folder)
        let entries: [UploadManifestEntry]
        do {
            entries = try Self.entries(journal: path, endpointGiven: endpoint != nil)
        } catch {
            let looked = path == run ? "" : " (looked for \(path); --dir DIR says where the journals are)"
            CommandLineLogging.printError("cannot verify \(run): \(error)\(looked)")
            throw ExitCode(2)
        }
        let checks = try await VerifyRun(entries: entries, options: options, parameters: operationParameters,
                                         maxConcurrent: maxConcurrent).run()
        let report = VerifyReport(entries: entries, results: checks)
        print(report.text, terminator: "")
        fflush(nil)
        if let json = options.json {
            do {
                try report.json(run: run).write(to: URL(fileURLWithPath: json), options: .atomic)
            } catch {
                CommandLineLogging.printError("cannot write the JSON report to \(json): \(error.localizedDescription)")
            }
        }
        if !report.allMatch { throw ExitCode(1) }
    }

    /// The `with:` of the group's `VerifyObjectOp`.
    private var operationParameters: [String: FlowValue] {
        var parameters: [String: FlowValue] = ["deep": .bool(deep)]
        parameters["endpoint"] = endpoint.map(FlowValue.string)
        parameters["region"] = region.map(FlowValue.string)
        return parameters
    }

    /// The objects a run's journal records: its manifest lines, the latest one for each target
    /// (an element run again after a retry or a resume), in the order they were first recorded.
    ///
    /// - Throws: ``RunJournalError`` for a file that is not a journal this version reads.
    /// - Parameter endpointGiven: whether `--endpoint` replaces every entry's endpoint; without it,
    ///   an entry whose endpoint the run's flow does not upload to is left out, with a warning.
    static func entries(journal path: String, endpointGiven: Bool = false) throws -> [UploadManifestEntry] {
        let (stored, records) = try RunJournal.readRecords(at: path)
        let settings = storeSettings(stored, file: path)
        var entries: [UploadManifestEntry] = []
        var positions: [String: Int] = [:]
        for record in records {
            for event in record.result.events {
                guard case .log(let line) = event.kind,
                      let recorded = UploadManifestEntry.recorded(by: record.result.operationName, line: line) else { continue }
                let entry = filled(recorded, from: settings)
                if !endpointGiven, let refusal = endpointRefusal(entry, settings: settings) {
                    CommandLineLogging.printDiagnostic("warning: \(refusal)")
                    continue
                }
                if let position = positions[entry.target] {
                    entries[position] = entry
                } else {
                    positions[entry.target] = entries.count
                    entries.append(entry)
                }
            }
        }
        return entries
    }
}
