import Foundation

/// Renders summary lines in the seed's format.
public enum FlowSummary {
    /// The whole summary: header, `TIME TEXT` lines, `Flow isSuccess:`, footer.
    ///
    /// - Parameters:
    ///   - entries: the lines.
    ///   - isSuccess: the flow's result.
    ///   - timeZone: the zone the times are shown in (the local one by default).
    public static func render(entries: [FlowLogEntry], isSuccess: Bool, timeZone: TimeZone = .current) -> String {
        let formatter = timeFormatter(timeZone: timeZone)
        var summary = "====== Flow Summary ======\n"
        for entry in entries {
            summary += formatter.string(from: entry.time) + " " + entry.text + "\n"
        }
        summary += "Flow isSuccess: \(isSuccess)\n"
        summary += "======    Ending    ======\n"
        return summary
    }

    /// The seed's time stamp: `4:17:18 PM`.
    public static func timeFormatter(timeZone: TimeZone = .current) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "h:mm:ss a"
        return formatter
    }

    /// `TITLE` then one `key: value` line per bucket entry, keys sorted so summaries compare.
    static func bucketDump(title: String, bucket: [String: Any]) -> String {
        var text = title
        for key in bucket.keys.sorted() {
            text += "\n\(key): " + String(describing: bucket[key]!)
        }
        return text
    }
}
