import Foundation

extension Flow {
    /// Writes one op's lines, all together so concurrent ops never interleave within an op:
    /// WillStart, its log lines (and, for serial ops, its bucket changes), DidFinish.
    /// Returns the op's record for reports.
    @discardableResult
    func record(_ result: FlowTaskResult, tag: String?, appliesBucketChanges: Bool, groupOutputKey: String? = nil,
                location: FlowSourceLocation? = nil, group: (number: Int, size: Int)? = nil) -> FlowOperationRecord {
        let mark = group.map { FlowElementMark(group: $0.number, index: result.groupIndex ?? 0, groupSize: $0.size,
                                               failed: !result.state.isSuccess) }
        var logLines: [FlowLogEntry] = []
        for event in result.events {
            if case .log(let message) = event.kind { logLines.append(FlowLogEntry(time: event.time, text: message)) }
        }
        let record = FlowOperationRecord(
            operationName: result.operationName, tag: tag, groupIndex: result.groupIndex, groupOutputKey: groupOutputKey,
            worker: result.worker, startedAt: result.startedAt, finishedAt: result.finishedAt, state: result.state,
            logLines: logLines, location: location, attempt: result.attempt, earlierAttempts: result.earlierAttempts)
        lock.withLock {
            let kept = mark.map { retention?.keeps(index: $0.index, groupSize: $0.groupSize, failed: $0.failed) ?? true } ?? true
            guard kept || summaryStream != nil else {
                // A group element left out of memory, with no summary file to write to: its lines
                // would go nowhere, so they are not made (a group element changes no bucket).
                if let mark { leaveOutLocked(group: mark.group, groupSize: mark.groupSize, finishedAt: result.finishedAt) }
                return
            }
            let label = FlowLabel(name: result.operationName, tag: tag, worker: result.worker)
            appendLocked(FlowLogEntry(time: result.startedAt, label: label, rest: "WillStart", element: mark), kept: kept)
            for event in result.events {
                switch event.kind {
                case .log(let message):
                    appendLocked(FlowLogEntry(time: event.time, label: label, rest: message, element: mark), kept: kept)
                case .set(let key, let value):
                    if appliesBucketChanges { applyLocked(key: key, value: value, at: event.time) }
                }
            }
            appendLocked(FlowLogEntry(time: result.finishedAt, label: label, rest: result.state.didFinishText, element: mark), kept: kept)
            if kept {
                records.append(record)
            } else if let mark {
                leaveOutLocked(group: mark.group, groupSize: mark.groupSize, finishedAt: result.finishedAt)
            }
        }
        return record
    }

    /// Numbers a group as it starts, for ``FlowElementMark``.
    func nextGroupNumber() -> Int {
        lock.withLock {
            groupsStarted += 1
            return groupsStarted
        }
    }

    /// Makes room in the summary for a group of `size` elements that are all kept (two lines and a
    /// record each), so that a big group's summary is not copied again and again as it grows:
    /// about a tenth of an in-process group's time went to that (perf, `flow-bench 50000 1`).
    func reserveSummary(forGroupOf size: Int) {
        lock.withLock {
            guard retention == nil else { return }
            // A few more lines than two an element: the group's own, and the bucket change after.
            Self.reserve(&entries, more: 2 * size + 64)
            Self.reserve(&records, more: size + 8)
        }
    }

    /// Grows `array`'s capacity to hold `more` elements, at least doubling it when it grows, so
    /// that many small groups do not copy it each time.
    private static func reserve<Element>(_ array: inout [Element], more: Int) {
        let needed = array.count + more
        guard array.capacity < needed else { return }
        array.reserveCapacity(max(needed, array.capacity * 2))
    }

    /// Whether a progress handler is set: events nobody hears need not be made.
    var hasProgressHandler: Bool {
        lock.withLock { progressHandler != nil }
    }

    /// Tells the progress handler, if any.
    func progress(_ event: FlowProgressEvent) {
        let handler = lock.withLock { progressHandler }
        handler?(event)
    }

    /// Writes the whole bucket under `title` (`[DataBucket] start with:`), one `key: value` line
    /// per key.
    func logBucketDump(title: String) {
        let limit = lineLimit
        lock.withLock {
            appendLocked(FlowLogEntry(time: Date(), describing: [storedBucket]) { values in
                FlowSummary.bucketDump(title: title, bucket: values[0] as! [String: Any], limit: limit)
            })
        }
    }

    /// Sets a bucket value and writes the seed's `[DataBucket] add for` / `replace for` line.
    func applyBucketChange(key: String, value: Any, at time: Date) {
        lock.withLock { applyLocked(key: key, value: value, at: time) }
    }

    private func applyLocked(key: String, value: Any, at time: Date) {
        let limit = retention?.maxLineLength
        let old = storedBucket[key]
        let line: @Sendable ([Any]) -> String = { values in
            guard values.count > 1 else {
                let head = "[DataBucket] add for \(key): "
                return head + FlowSummary.describe(values[0], limit: limit, written: head.utf8.count)
            }
            // Two values share the line: each gets half of it.
            let half = limit.map { $0 / 2 }
            let head = "[DataBucket] replace for \(key): "
            let old = FlowSummary.describe(values[1], limit: half, written: head.utf8.count)
            return head + old + " -> " + FlowSummary.describe(values[0], limit: half, written: 4)
        }
        appendLocked(FlowLogEntry(time: time, describing: [value] + (old.map { [$0] } ?? []), line))
        storedBucket[key] = value
    }
}

extension FlowTaskResult {
    /// The error a failed result stands for.
    var failure: any Error {
        if let error { return error }
        switch state {
        case .withInsufficientInputData(let text): return FlowDataError.insufficientInputData(text)
        case .withMismatchInputDataType(let text): return FlowDataError.mismatchInputDataType(text)
        case .withError(let text): return FlowRemoteError(operation: operationName, worker: worker, message: text)
        case .cancelled: return FlowError.cancelled
        case .successfully: return FlowRemoteError(operation: operationName, worker: worker, message: "no error")
        }
    }
}

/// An op that failed on another machine: its error's printed form.
public struct FlowRemoteError: Error, CustomStringConvertible, Sendable {
    /// The op.
    public let operation: String
    /// The worker it ran on.
    public let worker: String?
    /// `"\(error)"` on the worker.
    public let message: String

    /// Creates an error.
    public init(operation: String, worker: String?, message: String) {
        self.operation = operation
        self.worker = worker
        self.message = message
    }

    public var description: String { message }
}
