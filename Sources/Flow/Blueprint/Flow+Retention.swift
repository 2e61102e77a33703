import Foundation

/// How much of a big group a flow keeps in memory.
///
/// A group of a million elements writes three or more summary lines and one
/// ``FlowOperationRecord`` for each; kept in memory they cost about a kilobyte an element. With a
/// retention, the elements of a group of more than ``groupsOver`` elements are kept only when
/// their index is below ``keepingFirst`` or when they failed; the others are counted, and their
/// lines reach the summary stream (``Flow/setSummaryStream(_:)``) and the journal only. Where their
/// lines would have been, the summary has one line saying how many were left out, which
/// ``Flow/generateSummary(condensingGroupsOver:showingFirst:maxLineLength:hiddenNote:)``
/// words as its `hiddenNote`. The condensed summary of a flow with a retention is exactly the
/// condensed summary it would have without one.
///
/// What it changes: ``Flow/logEntries``, ``Flow/operationRecords``, ``Flow/generateSummary()``
/// and a ``FlowRunReport`` lack the elements left out. The bucket, the group outputs and the
/// flow's result do not change.
public struct FlowElementRetention: Sendable, Hashable {
    /// Groups with more elements than this are thinned.
    public var groupsOver: Int
    /// How many of a thinned group's first elements (by index) are kept.
    public var keepingFirst: Int
    /// Lines longer than this many characters are kept cut to it, ending with how many characters
    /// were left out, and bucket lists in `[DataBucket]` lines are written only to about this
    /// length, ending with how many values they have (a million-value list would be a 20 MB line);
    /// `nil` keeps everything whole. The summary stream gets the lines as written, before the cut.
    public var maxLineLength: Int?

    /// Creates a retention.
    ///
    /// - Parameters:
    ///   - groupsOver: groups with more elements than this are thinned (100 by default).
    ///   - keepingFirst: how many of their first elements are kept (10 by default).
    ///   - maxLineLength: lines longer than this are kept cut (4,096 characters by default).
    public init(groupsOver: Int = 100, keepingFirst: Int = 10, maxLineLength: Int? = 4096) {
        self.groupsOver = groupsOver
        self.keepingFirst = keepingFirst
        self.maxLineLength = maxLineLength
    }

    /// Whether a group element's lines and record are kept.
    func keeps(index: Int, groupSize: Int, failed: Bool) -> Bool {
        failed || groupSize <= groupsOver || index < keepingFirst
    }
}

/// The elements of one group left out of memory since the last line that was kept.
struct FlowLeftOutElements {
    var group: Int
    var groupSize: Int
    var count: Int
    var lastTime: Date
}

extension Flow {
    /// Keeps only part of big groups in memory; see ``FlowElementRetention``. `nil` (the default)
    /// keeps everything. Set it before the flow starts.
    @discardableResult
    public func setElementRetention(_ retention: FlowElementRetention?) -> Flow {
        lock.withLock { self.retention = retention }
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
        lock.withLock { summaryStream = stream }
        return self
    }

    /// How long bucket values in summary lines may get, by the retention.
    var lineLimit: Int? { lock.withLock { retention?.maxLineLength } }

    /// Writes one summary line: to the stream, and to memory unless `kept` is false, in which
    /// case it counts as part of a left-out element. Call with the lock held.
    func appendLocked(_ entry: FlowLogEntry, kept: Bool = true) {
        summaryStream?(entry)
        if kept {
            if let open = leftOut, entry.element?.group != open.group { closeLeftOutLocked() }
            if let limit = retention?.maxLineLength, entry.text.utf8.count > limit {
                var cut = entry
                cut.text = Self.shortened(entry.text, to: limit)
                entries.append(cut)
            } else {
                entries.append(entry)
            }
        }
    }

    /// Counts a group element left out of memory.
    func leaveOutLocked(group: Int, groupSize: Int, finishedAt: Date) {
        if let open = leftOut, open.group != group { closeLeftOutLocked() }
        if leftOut == nil { leftOut = FlowLeftOutElements(group: group, groupSize: groupSize, count: 0, lastTime: finishedAt) }
        leftOut?.count += 1
        leftOut?.lastTime = finishedAt
    }

    /// Writes the line that stands for the elements left out since the last kept line.
    func closeLeftOutLocked() {
        guard let open = leftOut else { return }
        leftOut = nil
        let mark = FlowElementMark(group: open.group, index: -1, groupSize: open.groupSize, failed: false, leftOut: open.count)
        entries.append(FlowLogEntry(time: open.lastTime, text: FlowSummary.leftOutNote(open.count), element: mark))
    }
}
