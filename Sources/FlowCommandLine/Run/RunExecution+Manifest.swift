import Flow
import FlowStandardOps
import Foundation

extension RunExecution {
    /// Writes `run --manifest FILE`: one JSON object a line for every object the run uploaded
    /// (`target`, `size`, `algorithm`, `checksum`, `etag`) or found on the store and left alone
    /// (the same, with `skipped`: `same size`, `same modtime` or `same checksum`), taken from the
    /// `manifest {…}` lines `UploadFileOp` logs (its own, never another op's), in the order the
    /// uploads finished. A manifest
    /// that cannot be written is reported, not fatal.
    ///
    /// When `skipExisting` left files alone, it also prints, after the summary, one line that
    /// counts them apart from the uploads: `Uploads: sent 3, skipped: 1 (same modtime)` (the
    /// colon keeps the `skipped NAME` lines the only ones with `skipped ` in them).
    static func writeManifest(of flow: Flow, options: ClusterRunOptions) {
        let entries = manifestEntries(of: flow)
        if let tally = uploadTally(entries, complete: options.json != nil || options.manifest != nil || !thinned(flow)) {
            print(tally)
            fflush(nil)
        }
        guard let path = options.manifest else { return }
        let text = entries.map { $0.json + "\n" }.joined()
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            CommandLineLogging.printError("cannot write the manifest to \(path): \(error.localizedDescription)")
        }
    }

    /// The manifest entries in the run's op records, in the order they finished.
    static func manifestEntries(of flow: Flow) -> [UploadManifestEntry] {
        var entries: [UploadManifestEntry] = []
        for record in flow.operationRecords {
            // An op record's lines are what the op logged, without the summary's label.
            for entry in record.logLines {
                guard let manifest = UploadManifestEntry.recorded(by: record.operationName, line: entry.text) else { continue }
                entries.append(manifest)
            }
        }
        return entries
    }

    /// `Uploads: sent N, skipped: M (same modtime)` (several reasons: `skipped: 3 (2 same size, 1
    /// same modtime)`), `nil` when nothing was skipped. `complete`: whether every element's
    /// lines were kept in memory; if not, the line says the counts are of those kept.
    static func uploadTally(_ entries: [UploadManifestEntry], complete: Bool) -> String? {
        var reasons: [String: Int] = [:]
        var order: [String] = []
        var sent = 0
        for entry in entries {
            guard let reason = entry.skipped else {
                sent += 1
                continue
            }
            if reasons[reason] == nil { order.append(reason) }
            reasons[reason, default: 0] += 1
        }
        let skipped = reasons.values.reduce(0, +)
        guard skipped > 0 else { return nil }
        let why = order.count == 1 ? order[0] : order.map { "\(reasons[$0] ?? 0) \($0)" }.joined(separator: ", ")
        let partial = complete ? "" : " (of the elements shown; --json or --manifest counts all)"
        return "Uploads: sent \(sent), skipped: \(skipped) (\(why))\(partial)"
    }

    /// Whether a group's elements were left out of memory (the terminal's condensed summary).
    private static func thinned(_ flow: Flow) -> Bool {
        flow.logEntries.contains { $0.text.hasPrefix("[Group] … ") && $0.text.hasSuffix("their lines were not kept in memory") }
    }
}
