import Foundation

extension FlowSummaryLines {
    /// One op's record for reports, made outside the lock.
    static func record(of result: FlowTaskResult, tag: String?, groupOutputKey: String?,
                       location: FlowSourceLocation?) -> FlowOperationRecord {
        var logLines: [FlowLogEntry] = []
        for event in result.events {
            if case .log(let message) = event.kind { logLines.append(FlowLogEntry(time: event.time, text: message)) }
        }
        return FlowOperationRecord(
            operationName: result.operationName, tag: tag, groupIndex: result.groupIndex, groupOutputKey: groupOutputKey,
            worker: result.worker, startedAt: result.startedAt, finishedAt: result.finishedAt, state: result.state,
            logLines: logLines, location: location, attempt: result.attempt, earlierAttempts: result.earlierAttempts)
    }

    /// Writes one op's lines, all together so concurrent ops never interleave within an op:
    /// WillStart, its log lines (and, for serial ops, its bucket changes to `bucket`), DidFinish;
    /// and keeps its record.
    mutating func write(_ result: FlowTaskResult, tag: String?, record: FlowOperationRecord, mark: FlowElementMark?,
                        appliesBucketChanges: Bool, to bucket: inout [String: Any]) {
        let kept = mark.map { retention?.keeps(index: $0.index, groupSize: $0.groupSize, failed: $0.failed) ?? true } ?? true
        guard kept || stream != nil else {
            // A group element left out of memory, with no summary file to write to: its lines
            // would go nowhere, so they are not made (a group element changes no bucket).
            if let mark { leaveOut(group: mark.group, groupSize: mark.groupSize, finishedAt: result.finishedAt) }
            return
        }
        let label = FlowLabel(name: result.operationName, tag: tag, worker: result.worker)
        append(FlowLogEntry(time: result.startedAt, label: label, rest: "WillStart", element: mark), kept: kept)
        for event in result.events {
            switch event.kind {
            case .log(let message):
                append(FlowLogEntry(time: event.time, label: label, rest: message, element: mark), kept: kept)
            case .set(let key, let value):
                if appliesBucketChanges { set(key: key, value: value, at: event.time, in: &bucket) }
            }
        }
        append(FlowLogEntry(time: result.finishedAt, label: label, rest: result.state.didFinishText, element: mark), kept: kept)
        if kept {
            append(record)
        } else if let mark {
            leaveOut(group: mark.group, groupSize: mark.groupSize, finishedAt: result.finishedAt)
        }
    }

    /// Writes the whole bucket under `title` (`[DataBucket] start with:`), one `key: value` line
    /// per key.
    mutating func dump(_ bucket: [String: Any], title: String) {
        let limit = lineLimit
        append(FlowLogEntry(time: Date(), describing: [bucket]) { values in
            FlowSummary.bucketDump(title: title, bucket: values[0] as! [String: Any], limit: limit)
        })
    }

    /// Sets a bucket value and writes the seed's `[DataBucket] add for` / `replace for` line.
    mutating func set(key: String, value: Any, at time: Date, in bucket: inout [String: Any]) {
        let limit = retention?.maxLineLength
        let old = bucket[key]
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
        append(FlowLogEntry(time: time, describing: [value] + (old.map { [$0] } ?? []), line))
        bucket[key] = value
    }
}
