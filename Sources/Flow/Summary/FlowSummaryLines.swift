import Foundation

/// A run's summary lines and op records as they are written: the line store the recording
/// writes to, with the retention that thins big groups and the stream that gets every line.
struct FlowSummaryLines {
    /// Every line kept, in order.
    private(set) var entries: [FlowLogEntry] = []
    /// Every op record kept, in the order the ops finished.
    private(set) var records: [FlowOperationRecord] = []
    /// How much of a big group is kept; `nil` keeps everything.
    var retention: FlowElementRetention?
    /// Gets every line as it is written, kept or not.
    var stream: (@Sendable (FlowLogEntry) -> Void)?
    /// The elements left out since the last line kept.
    private var leftOut: FlowLeftOutElements?

    /// How long bucket values in summary lines may get, by the retention.
    var lineLimit: Int? { retention?.maxLineLength }

    /// The lines, with the line standing for the elements left out last.
    mutating func closedEntries() -> [FlowLogEntry] {
        closeLeftOut()
        return entries
    }

    /// Writes one summary line: to the stream, and to memory unless `kept` is false, in which
    /// case it counts as part of a left-out element.
    mutating func append(_ entry: FlowLogEntry, kept: Bool = true) {
        stream?(entry)
        guard kept else { return }
        if let open = leftOut, entry.element?.group != open.group { closeLeftOut() }
        if let limit = retention?.maxLineLength, entry.text.utf8.count > limit {
            var cut = entry
            cut.text = FlowSummary.shortened(entry.text, to: limit)
            entries.append(cut)
        } else {
            entries.append(entry)
        }
    }

    /// Keeps an op's record.
    mutating func append(_ record: FlowOperationRecord) {
        records.append(record)
    }

    /// Counts a group element left out of memory.
    mutating func leaveOut(group: Int, groupSize: Int, finishedAt: Date) {
        if let open = leftOut, open.group != group { closeLeftOut() }
        if leftOut == nil { leftOut = FlowLeftOutElements(group: group, groupSize: groupSize, count: 0, lastTime: finishedAt) }
        leftOut?.count += 1
        leftOut?.lastTime = finishedAt
    }

    /// Writes the line that stands for the elements left out since the last kept line.
    mutating func closeLeftOut() {
        guard let open = leftOut else { return }
        leftOut = nil
        let mark = FlowElementMark(group: open.group, index: -1, groupSize: open.groupSize, failed: false, leftOut: open.count)
        entries.append(FlowLogEntry(time: open.lastTime, text: FlowSummary.leftOutNote(open.count), element: mark))
    }

    /// Makes room for a group of `size` elements that are all kept (two lines and a record each),
    /// so that a big group's summary is not copied again and again as it grows: about a tenth of
    /// an in-process group's time went to that (perf, `flow-bench 50000 1`).
    mutating func reserve(forGroupOf size: Int) {
        guard retention == nil else { return }
        // A few more lines than two an element: the group's own, and the bucket change after.
        Self.reserve(&entries, more: 2 * size + 64)
        Self.reserve(&records, more: size + 8)
    }

    /// Grows `array`'s capacity to hold `more` elements, at least doubling it when it grows, so
    /// that many small groups do not copy it each time.
    private static func reserve<Element>(_ array: inout [Element], more: Int) {
        let needed = array.count + more
        guard array.capacity < needed else { return }
        array.reserveCapacity(max(needed, array.capacity * 2))
    }
}

/// The elements of one group left out of memory since the last line that was kept.
struct FlowLeftOutElements {
    var group: Int
    var groupSize: Int
    var count: Int
    var lastTime: Date
}

/// Which group element a summary line belongs to, so a long group can be shown condensed.
struct FlowElementMark: Sendable, Hashable {
    /// The group's number in this run (groups counted as they start).
    var group: Int
    /// The element's index.
    var index: Int
    /// How many elements the group has.
    var groupSize: Int
    /// Whether the element failed.
    var failed: Bool
    /// For the line that stands for elements a retention left out of memory: how many.
    var leftOut: Int?
}
