import Foundation

extension FlowSummary {
    /// The summary of `lines` with big groups condensed: see
    /// ``Flow/generateSummary(condensingGroupsOver:showingFirst:maxLineLength:hiddenNote:)``.
    static func condensed(_ lines: [FlowLogEntry], isSuccess success: Bool, over limit: Int, showingFirst shown: Int,
                          maxLineLength: Int?, hiddenNote: (_ count: Int) -> String) -> String {
        // Without a group to condense, the summary is the full one, long lines and all.
        guard lines.contains(where: { ($0.element?.groupSize ?? 0) > limit }) else {
            return FlowSummary.render(entries: lines, isSuccess: success)
        }
        var condensed: [FlowLogEntry] = []
        condensed.reserveCapacity(min(lines.count, 4 * shown + 64))
        var hiddenGroup: Int?
        var hiddenElements = Set<Int>()
        var leftOut = 0
        var lastHiddenTime = Date()
        func closeHidden() {
            guard hiddenGroup != nil, !hiddenElements.isEmpty || leftOut > 0 else { return }
            condensed.append(FlowLogEntry(time: lastHiddenTime, text: hiddenNote(hiddenElements.count + leftOut)))
            hiddenGroup = nil
            hiddenElements = []
            leftOut = 0
        }
        for entry in lines {
            // Elements a retention left out of memory are hidden ones already counted.
            if let mark = entry.element, let count = mark.leftOut {
                if hiddenGroup != mark.group { closeHidden() }
                hiddenGroup = mark.group
                leftOut += count
                lastHiddenTime = entry.time
                continue
            }
            if let mark = entry.element, mark.groupSize > limit, mark.index >= shown, !mark.failed {
                if hiddenGroup != mark.group { closeHidden() }
                hiddenGroup = mark.group
                hiddenElements.insert(mark.index)
                lastHiddenTime = entry.time
                continue
            }
            if entry.element?.group != hiddenGroup { closeHidden() }
            var kept = entry
            if let maxLineLength { kept.text = shortened(entry.text, to: maxLineLength) }
            condensed.append(kept)
        }
        closeHidden()
        return FlowSummary.render(entries: condensed, isSuccess: success)
    }

    /// `text` with every line longer than `limit` characters cut to it.
    static func shortened(_ text: String, to limit: Int) -> String {
        // Counting in UTF-8 first: a line of a million characters costs no copy when it is short
        // enough in bytes, and no array of characters when it is not.
        guard text.utf8.count > limit else { return text }
        var result = ""
        var first = true
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !first { result += "\n" }
            first = false
            let cut = line.index(line.startIndex, offsetBy: limit, limitedBy: line.endIndex) ?? line.endIndex
            if cut == line.endIndex {
                result += line
            } else {
                result += line[..<cut]
                result += "… (\(line[cut...].count) more characters)"
            }
        }
        return result
    }
}
