import Foundation

/// Where the engine writes a run: its bucket, summary lines, records and progress. The one way
/// the engine reaches a run's state (the `FlowRunState` a ``Flow`` makes), never the flow itself.
protocol FlowRunRecorder: AnyObject, Sendable {
    /// The bucket as it stands.
    var bucket: [String: Any] { get }

    /// Writes one op's result: its summary lines together (and a serial op's bucket writes, with
    /// `appliesBucketChanges`), and its record, which it returns for progress.
    ///
    /// - Parameters:
    ///   - tag: a group element's short id.
    ///   - groupOutputKey: the key a group element's group collects into.
    ///   - location: where the step was written.
    ///   - group: a group element's group: its number (``groupStarts(size:)``) and size.
    func record(_ result: FlowTaskResult, tag: String?, appliesBucketChanges: Bool, groupOutputKey: String?,
                location: FlowSourceLocation?, group: (number: Int, size: Int)?) -> FlowOperationRecord

    /// Adds a line to the summary.
    func log(_ text: String)

    /// Sets a bucket value, with the seed's `[DataBucket] add for` / `replace for` line.
    func setBucketValue(_ value: Any, forKey key: String)

    /// A group of `size` elements starts: its number in the run, counted from 1; room is made for
    /// its lines.
    func groupStarts(size: Int) -> Int

    /// Who hears the run's progress, `nil` when nobody does (events nobody hears need not be made).
    var progressHandler: (@Sendable (FlowProgressEvent) -> Void)? { get }

    /// Stops the run as a cancellation does: the journal refused to keep what may start.
    func stop()
}

extension FlowRunRecorder {
    /// Writes a serial op's result (``record(_:tag:appliesBucketChanges:groupOutputKey:location:group:)``).
    func record(_ result: FlowTaskResult, appliesBucketChanges: Bool, location: FlowSourceLocation?) -> FlowOperationRecord {
        record(result, tag: nil, appliesBucketChanges: appliesBucketChanges, groupOutputKey: nil, location: location, group: nil)
    }

    /// Tells the progress handler, if any.
    func progress(_ event: FlowProgressEvent) {
        progressHandler?(event)
    }
}
