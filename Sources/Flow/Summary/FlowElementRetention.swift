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
