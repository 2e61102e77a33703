import Flow
import FlowWire

/// Worker labels as people write them: `KEY=VALUE` (`flow-worker --label role=recorder`), and the
/// rules a label must keep to travel in LABELS (docs/PROTOCOL.md §7.10).
public enum Labels {
    /// Why these labels cannot be a worker's, `nil` when they can: at most 64, each key and value
    /// within what LABELS carries.
    public static func problem(with labels: [String: String]) -> String? {
        if labels.count > WireLimits.maximumLabels {
            return "a worker has at most \(WireLimits.maximumLabels) labels, not \(labels.count)"
        }
        for (key, value) in labels.sorted(by: { $0.key < $1.key }) {
            if let problem = WireLabel.problem(withKey: key) { return "label '\(key.escapingControlCharacters)': \(problem)" }
            if let problem = WireLabel.problem(withValue: value) { return "label '\(key)': \(problem)" }
        }
        return nil
    }

    /// Reads `KEY=VALUE` texts into labels, a key given twice keeping its last value.
    ///
    /// - Throws: ``ClusterError/invalidWorker(_:)`` naming the text that is not a label.
    public static func parse(_ texts: [String]) throws(ClusterError) -> [String: String] {
        var labels: [String: String] = [:]
        for text in texts {
            guard let equals = text.firstIndex(of: "=") else {
                throw ClusterError.invalidWorker("'\(text.escapingControlCharacters)' is not a label: write KEY=VALUE (e.g. role=recorder)")
            }
            labels[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        if let problem = problem(with: labels) { throw ClusterError.invalidWorker(problem) }
        return labels
    }
}
