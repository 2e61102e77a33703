import Flow
import FlowStandardOps
import Foundation

extension RunExecution {
    /// Writes `run --manifest FILE`: one JSON object a line for every object the run uploaded
    /// (`target`, `size`, `algorithm`, `checksum`, `etag`), taken from the `manifest {…}` lines
    /// `UploadFileOp` logs, in the order the uploads finished. A manifest that cannot be written
    /// is reported, not fatal.
    static func writeManifest(of flow: Flow, options: ClusterRunOptions) {
        guard let path = options.manifest else { return }
        var text = ""
        for record in flow.operationRecords {
            for entry in record.logLines {
                let line = entry.text
                guard let start = line.range(of: UploadManifestEntry.logPrefix + "{"),
                      let manifest = UploadManifestEntry(logLine: String(line[start.lowerBound...])) else { continue }
                text += manifest.json + "\n"
            }
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            CommandLineLogging.printError("cannot write the manifest to \(path): \(error.localizedDescription)")
        }
    }
}
