import Flow
import FlowStandardOps
import Foundation
import Testing

/// Summaries made comparable: what legitimately differs between two runs of one flow (times,
/// group ids, worker names, dates an op sets) is masked.
enum SummaryMask {
    /// The summary's lines, each masked.
    static func lines(_ summary: String) -> [String] {
        summary.split(separator: "\n", omittingEmptySubsequences: false).map { mask(String($0)) }
    }

    /// `2:30:37 AM [UploadSingleImageOp 3f2a @ worker-2] DidFinish` → `[UploadSingleImageOp ####] DidFinish`.
    static func mask(_ line: String) -> String {
        var text = line
        text.replace(#/^\d{1,2}:\d{2}:\d{2} [AP]M /#, with: "")
        text.replace(#/ @ [^\]]+\]/#, with: "]")
        text.replace(#/^\[(\w+) [0-9a-f]{4}\]/#) { match in "[\(match.1) ####]" }
        text.replace(#/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4}/#, with: "<date>")
        return text
    }
}

/// Runs a flow file in this process, as the seed does, and returns its summary.
///
/// - Parameter settings: `--set` overrides, read as the coordinator reads them.
func inProcessSummary(of path: String, settings: [String: String] = [:]) async throws -> (summary: String, isSuccess: Bool) {
    var definition = try FlowFileLoader(registry: .standard).load(contentsOf: path)
    for (key, text) in settings { definition.bucket[key] = FlowFileLoader.value(fromScalar: text) }
    let flow = Flow(definition: definition, registry: .standard)
    await flow.run()
    return (flow.generateSummary(), flow.isSuccess)
}

/// Records one issue naming the first line where two masked summaries differ.
func expectSameLines(_ cluster: [String], _ local: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    guard cluster != local else { return }
    let index = zip(cluster, local).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(cluster.count, local.count)
    let clusterLine = index < cluster.count ? cluster[index] : "<end>"
    let localLine = index < local.count ? local[index] : "<end>"
    Issue.record("""
        \(what): masked summaries differ at line \(index + 1):
          cluster:    \(clusterLine)
          in-process: \(localLine)
        cluster summary:
        \(cluster.joined(separator: "\n"))
        in-process summary:
        \(local.joined(separator: "\n"))
        """, sourceLocation: sourceLocation)
}

extension String {
    /// The value of the `KEY: VALUE` line under the summary's `[DataBucket] end with:`.
    func finalBucketValue(_ key: String) -> String? {
        guard let end = range(of: "[DataBucket] end with:") else { return nil }
        for line in self[end.upperBound...].split(separator: "\n") where line.hasPrefix(key + ": ") {
            return String(line.dropFirst(key.count + 2))
        }
        return nil
    }

    /// The lines of the summary's `[DataBucket] start with:` block.
    var initialBucketLines: [String] {
        let lines = split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasSuffix("[DataBucket] start with:") }) else { return [] }
        return Array(lines[(start + 1)...].prefix { line in
            line.prefixMatch(of: #/\d{1,2}:\d{2}:\d{2} [AP]M /#) == nil && !line.hasPrefix("Flow isSuccess")
        })
    }
}
