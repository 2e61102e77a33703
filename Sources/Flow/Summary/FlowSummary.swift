public import Foundation

/// Renders summary lines in the seed's format.
public enum FlowSummary {
    /// The whole summary: header, `TIME TEXT` lines, `Flow isSuccess:`, footer.
    ///
    /// - Parameters:
    ///   - entries: the lines.
    ///   - isSuccess: the flow's result.
    ///   - timeZone: the zone the times are shown in; `nil` (the default): the local one.
    public static func render(entries: [FlowLogEntry], isSuccess: Bool, timeZone: TimeZone? = nil) -> String {
        let formatter = timeFormatter(timeZone: timeZone)
        var summary = header
        for entry in entries {
            summary += lineText(entry, formatter: formatter)
        }
        summary += footer(isSuccess: isSuccess)
        return summary
    }

    /// The summary's first line, with its line break.
    public static let header = "====== Flow Summary ======\n"

    /// One line as the summary writes it: `TIME TEXT` and a line break.
    ///
    /// - Parameters:
    ///   - entry: the line.
    ///   - formatter: a ``timeFormatter(timeZone:)``.
    public static func lineText(_ entry: FlowLogEntry, formatter: FlowSummaryTimeStamp) -> String {
        // Whole seconds, cut, not rounded: the same stamp a streamed summary file writes.
        formatter.string(from: Date(timeIntervalSince1970: entry.time.timeIntervalSince1970.rounded(.down))) + " " + entry.text + "\n"
    }

    /// The summary's last lines: the flow's result and the closing line.
    public static func footer(isSuccess: Bool) -> String {
        "Flow isSuccess: \(isSuccess)\n======    Ending    ======\n"
    }

    /// The line that stands for group elements a ``FlowElementRetention`` left out of memory, in
    /// ``Flow/generateSummary()``.
    static func leftOutNote(_ count: Int) -> String {
        "[Group] … \(count) more elements succeeded; their lines were not kept in memory"
    }

    /// The seed's time stamp: `4:17:18 PM`.
    ///
    /// - Parameter timeZone: the zone the times are shown in; `nil` (the default): the local one.
    public static func timeFormatter(timeZone: TimeZone? = nil) -> FlowSummaryTimeStamp {
        FlowSummaryTimeStamp(timeZone: timeZone)
    }

    /// `TITLE` then one `key: value` line per bucket entry, keys sorted so summaries compare.
    static func bucketDump(title: String, bucket: [String: Any], limit: Int? = nil) -> String {
        var text = title
        for key in bucket.keys.sorted() {
            text += "\n\(key): " + describe(bucket[key]!, limit: limit, written: key.utf8.count + 2)
        }
        return text
    }

    /// Value types whose printed form never changes once stored.
    private static let settledTypes: [Any.Type] = [
        Int.self, Int64.self, Double.self, Float.self, Bool.self, String.self, Date.self, [Int].self, [String].self, [Double].self,
    ]

    /// Whether `value` prints the same later as now, so its summary line can be written when the
    /// summary is: numbers, strings, booleans, dates, and lists and maps of them (a class
    /// instance could change meanwhile). Looks at each element of a list, never formats one.
    static func isSettled(_ value: Any, depth: Int = 0) -> Bool {
        let type = type(of: value)
        if settledTypes.contains(where: { $0 == type }) { return true }
        guard depth < 3 else { return false }
        if type == [Any].self {
            return (value as! [Any]).allSatisfy { isSettled($0, depth: depth + 1) }
        }
        if type == [String: Any].self {
            return (value as! [String: Any]).values.allSatisfy { isSettled($0, depth: depth + 1) }
        }
        return false
    }

    /// Room for `… (N more bytes)` after a cut text.
    static let markerRoom = 40

    /// The most characters of one bucket value a summary line writes when no retention limits
    /// lines: a 200 MB output printed whole in its `[DataBucket]` line (and again in the
    /// `end with:` dump, the report's summary and its op's log lines) cost the coordinator ten times
    /// its size. The bucket itself, and the `--json` report's `bucket`, keep the whole value.
    public static let longestValue = 1 << 20

    /// A bucket value as the summary prints it, `String(describing:)`, written only to about
    /// `limit` characters (``longestValue`` without one): a longer list then ends with `…` and how
    /// many values it has (a million-value list never becomes a 20 MB line), and a longer text
    /// with `…` and how many bytes were left out, without copying the text whole.
    ///
    /// - Parameter written: how many characters the line holds before the value: a text is cut
    ///   short enough that the line, with its `… (N more bytes)`, stays within `limit`, and the
    ///   line's own cut (``FlowElementRetention/maxLineLength``) leaves it whole.
    static func describe(_ value: Any, limit: Int?, written: Int = 0) -> String {
        let limit = limit ?? longestValue
        // Lists, the usual group inputs and outputs, written directly: `String(describing:)`
        // prints each element through dynamic casts, a cost per element. A list's type is looked
        // at, not cast to: `as? [String]` converted each element of an `[Any]` of a million
        // texts to make a new list (perf: 10 ms of the end of a 100,000-element run), of which a
        // limited line then wrote a few.
        let type = type(of: value)
        if type == String.self {
            // A text may come from a worker (a program's output): an escape sequence in it is
            // written out, never sent to the terminal; its lines stay lines.
            let text = value as! String
            guard written + text.utf8.count > limit else { return text.escapingTerminalControls }
            let kept = max(0, limit - written - markerRoom)
            let cut = text.index(text.startIndex, offsetBy: kept, limitedBy: text.endIndex) ?? text.endIndex
            guard cut < text.endIndex else { return text.escapingTerminalControls }
            // Bytes, not characters, are counted: counting the characters of a 200 MB text took
            // longer than the rest of its way through the coordinator.
            return String(text[..<cut]).escapingTerminalControls + "… (\(text.utf8.count - text[..<cut].utf8.count) more bytes)"
        }
        if type == [Int].self {
            let integers = value as! [Int]
            return listText(integers.count, limit) { String(integers[$0]) }
        }
        if type == [String].self {
            let strings = value as! [String]
            return listText(strings.count, limit) { strings[$0].debugDescription }
        }
        if type == [Any].self {
            let list = value as! [Any]
            return listText(list.count, limit) { elementText(list[$0]) }
        }
        // Other lists (an optional one, one of another element type): cast as they always were.
        if let integers = value as? [Int] { return listText(integers.count, limit) { String(integers[$0]) } }
        if let strings = value as? [String] { return listText(strings.count, limit) { strings[$0].debugDescription } }
        guard let list = value as? [Any], list.count > 1 else { return String(describing: value) }
        return listText(list.count, limit) { String(reflecting: list[$0]) }
    }

    /// An element of a list as `String(describing:)` writes it inside the list, as
    /// `String(reflecting:)` does; texts and integers without going through it.
    private static func elementText(_ element: Any) -> String {
        let type = type(of: element)
        if type == String.self { return (element as! String).debugDescription }
        if type == Int.self { return String(element as! Int) }
        return String(reflecting: element)
    }

    /// `[e0, e1, …]` as `String(describing:)` writes a list, cut as ``describe(_:limit:)`` cuts one.
    private static func listText(_ count: Int, _ limit: Int, _ element: (Int) -> String) -> String {
        var text = "["
        for index in 0..<count {
            if index > 0 { text += ", " }
            if count > 1, text.utf8.count > limit {
                return text + "…] (\(count) values)"
            }
            text += element(index)
        }
        return text + "]"
    }
}
