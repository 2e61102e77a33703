import Foundation

extension Flow {
    /// The summary with big groups condensed, for a terminal: a group of more than `limit`
    /// elements shows the lines of its first `shown` elements (by index) and of every element
    /// that failed; the lines of its other elements give way to one line, `hiddenNote(count)`,
    /// where they would have been. Everything else is as ``generateSummary()`` has it, and a
    /// flow with no such group gets exactly ``generateSummary()``.
    ///
    /// - Parameters:
    ///   - limit: groups with more elements than this are condensed.
    ///   - shown: how many of their first elements keep their lines.
    ///   - maxLineLength: when a group is condensed, lines longer than this many characters (a
    ///     bucket dump of a long list) are cut there and end with how many characters were left
    ///     out; `nil` keeps them whole.
    ///   - hiddenNote: the line that stands for `count` elements not shown.
    public func generateSummary(condensingGroupsOver limit: Int, showingFirst shown: Int, maxLineLength: Int? = nil,
                                hiddenNote: (_ count: Int) -> String) -> String {
        let (lines, success) = lock.withLock { (entries, storedIsSuccess) }
        // Without a group to condense, the summary is the full one, long lines and all.
        guard lines.contains(where: { ($0.element?.groupSize ?? 0) > limit }) else {
            return FlowSummary.render(entries: lines, isSuccess: success)
        }
        var condensed: [FlowLogEntry] = []
        condensed.reserveCapacity(min(lines.count, 4 * shown + 64))
        var hiddenGroup: Int?
        var hiddenElements = Set<Int>()
        var lastHiddenTime = Date()
        func closeHidden() {
            guard hiddenGroup != nil, !hiddenElements.isEmpty else { return }
            condensed.append(FlowLogEntry(time: lastHiddenTime, text: hiddenNote(hiddenElements.count)))
            hiddenGroup = nil
            hiddenElements = []
        }
        for entry in lines {
            if let mark = entry.element, mark.groupSize > limit, mark.index >= shown, !mark.failed {
                if hiddenGroup != mark.group { closeHidden() }
                hiddenGroup = mark.group
                hiddenElements.insert(mark.index)
                lastHiddenTime = entry.time
                continue
            }
            if entry.element?.group != hiddenGroup { closeHidden() }
            var kept = entry
            if let maxLineLength { kept.text = Self.shortened(entry.text, to: maxLineLength) }
            condensed.append(kept)
        }
        closeHidden()
        return FlowSummary.render(entries: condensed, isSuccess: success)
    }

    /// `text` with every line longer than `limit` characters cut to it.
    static func shortened(_ text: String, to limit: Int) -> String {
        guard text.count > limit else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.count > limit else { return String(line) }
            return line.prefix(limit) + "… (\(line.count - limit) more characters)"
        }.joined(separator: "\n")
    }
}
