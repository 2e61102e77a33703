import ArgumentParser
import Flow
import FlowCluster
import FlowJournal
import FlowStandardOps
import Foundation

/// `flow-coordinator verify RUN`: checks every object a run uploaded against the store.
///
/// The objects are the run's `manifest {…}` lines in its journal (``UploadManifestEntry``, the
/// latest for each target), written to a file and checked by a group of `VerifyObjectOp` that
/// reads it (`input: {file:}`, its checks to another file) on the same kind of workers a run uses
/// (`--workers`, `--bind`, `--pool`): neither the objects nor their checks are held in memory. An S3 object is looked for at `--endpoint` and
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
        let scratch: String
        do {
            scratch = try Self.scratchFolder()
        } catch {
            CommandLineLogging.printError("cannot verify \(run): cannot make a temporary folder: \(error)")
            throw ExitCode(2)
        }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let objects = scratch + "/objects.jsonl"
        let count: Int
        do {
            count = try Self.writeObjects(journal: path, endpointGiven: endpoint != nil, to: objects)
        } catch {
            let looked = path == run ? "" : " (looked for \(path); --dir DIR says where the journals are)"
            CommandLineLogging.printError("cannot verify \(run): \(error)\(looked)")
            throw ExitCode(2)
        }
        let report = try await VerifyRun(objects: objects, count: count, checks: scratch + "/checks.jsonl", options: options,
                                          parameters: operationParameters, maxConcurrent: maxConcurrent).run()
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

    /// A private folder for the objects and their checks, removed when `verify` ends.
    static func scratchFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "flow-verify-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return folder
    }

    /// Writes the objects a run's journal records to `file`, one JSON line each: its manifest
    /// lines, the latest one for each target (an element run again after a retry or a resume), in
    /// the order they were first recorded. The journal is read a record at a time and the targets
    /// kept on disk (``LatestByKey``): a run of ten million uploads is checked in flat memory.
    ///
    /// - Returns: how many objects it wrote.
    /// - Throws: ``RunJournalError`` for a file that is not a journal this version reads; an
    ///   error of the disk.
    /// - Parameter endpointGiven: whether `--endpoint` replaces every entry's endpoint; without it,
    ///   an entry whose endpoint the run's flow does not upload to is left out, with a warning.
    static func writeObjects(journal path: String, endpointGiven: Bool = false, to file: String) throws -> Int {
        let stored = try RunJournal.readStored(at: path)
        let settings = storeSettings(stored, file: path)
        let latest = try LatestByKey(folder: (file as NSString).deletingLastPathComponent)
        try RunJournal.forEachRecord(at: path) { record in
            for event in record.result.events {
                guard case .log(let line) = event.kind,
                      let recorded = UploadManifestEntry.recorded(by: record.result.operationName, line: line) else { continue }
                let entry = filled(recorded, from: settings)
                if !endpointGiven, let refusal = endpointRefusal(entry, settings: settings) {
                    CommandLineLogging.printDiagnostic("warning: \(refusal)")
                    continue
                }
                try latest.add(entry.json, forKey: entry.target)
            }
        }
        guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]),
              let output = FileHandle(forWritingAtPath: file) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file])
        }
        defer { try? output.close() }
        var count = 0
        var chunk = Data()
        try latest.forEach { json in
            chunk.append(contentsOf: json.utf8)
            chunk.append(0x0A)
            count += 1
            if chunk.count >= 1 << 20 {
                try output.write(contentsOf: chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try output.write(contentsOf: chunk)
        return count
    }
}
