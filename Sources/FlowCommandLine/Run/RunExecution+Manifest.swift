import Flow
import FlowStandardOps
import Foundation

extension RunExecution {
    /// Writes `run --manifest FILE` (one JSON object a line for every object the run uploaded,
    /// `target`, `size`, `algorithm`, `checksum`, `etag`, or found on the store and left alone,
    /// the same with `skipped`: `same size`, `same modtime` or `same checksum`, in the order the
    /// uploads finished), made as the run went (``ManifestRecorder``). A manifest that cannot be
    /// written is reported, not fatal.
    ///
    /// When `skipExisting` left files alone, it also prints, after the summary, one line that
    /// counts them apart from the uploads: `Uploads: sent 3, skipped: 1 (same modtime)` (the
    /// colon keeps the `skipped NAME` lines the only ones with `skipped ` in them), counted over
    /// every element, those the condensed summary leaves out too.
    static func writeManifest(_ manifest: ManifestRecorder) {
        if let tally = manifest.tally {
            print(tally)
            fflush(nil)
        }
        manifest.finish()
    }
}
