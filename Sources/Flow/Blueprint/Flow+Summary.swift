import Foundation

extension Flow {
    /// Keeps only part of big groups in memory; see ``FlowElementRetention``. `nil` (the default)
    /// keeps everything. Set it before the flow starts.
    @discardableResult
    public func setElementRetention(_ retention: FlowElementRetention?) -> Flow {
        runState.setRetention(retention)
        return self
    }

    /// Hands every summary line to `stream` as it is written, in summary order, including the
    /// lines of elements a retention leaves out of memory (and not the line that stands for
    /// them). Calls come one at a time, in order, while the flow holds its lock: write the line
    /// somewhere and return, without calling back into the flow. Set it before the flow starts
    /// (lines written before are not handed over).
    ///
    /// With ``FlowSummary/lineText(_:formatter:)`` for each line between
    /// ``FlowSummary/header`` and ``FlowSummary/footer(isSuccess:)``, a file receives the whole
    /// summary as ``generateSummary()`` would write it without a retention, in bounded memory.
    @discardableResult
    public func setSummaryStream(_ stream: @escaping @Sendable (FlowLogEntry) -> Void) -> Flow {
        runState.setSummaryStream(stream)
        return self
    }

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
        let (lines, success) = runState.summaryLines()
        return FlowSummary.condensed(lines, isSuccess: success, over: limit, showingFirst: shown,
                                     maxLineLength: maxLineLength, hiddenNote: hiddenNote)
    }
}
