public import Foundation

/// A finished run as data, for tools: the flow's result, final bucket, every op run, and the
/// seed-format summary, encoded as JSON by ``jsonData()``.
///
/// ```swift
/// let startedAt = Date()
/// await flow.run()
/// try FlowRunReport(flow: flow, startedAt: startedAt).write(to: "report.json")
/// ```
///
/// Times are ISO 8601 strings in UTC with milliseconds (`2025-01-31T16:17:18.250Z`), whichever
/// encoder is used. Bucket values are encoded as ``BucketValue`` describes.
public struct FlowRunReport: Encodable, Sendable {
    /// The flow's name, `nil` for a blueprint built in Swift without one.
    public var flowName: String?
    /// Whether the flow succeeded (also when it ended early at an unmatched case).
    public var isSuccess: Bool
    /// The printed form of the error that stopped the flow, `nil` when it succeeded.
    public var error: String?
    /// When the run started, as the caller measured it.
    public var startedAt: Date
    /// When the run finished, as the caller measured it.
    public var finishedAt: Date
    /// The final data bucket.
    public var bucket: [String: BucketValue]
    /// Every op run (serial ops and group elements), in the order they finished.
    public var operations: [Operation]
    /// Per group: how many elements ran, succeeded and failed, in the order the groups first finished an element.
    public var groups: [GroupTotal]
    /// The summary in the seed's format, as ``Flow/generateSummary()`` writes it.
    public var summary: String

    /// Seconds from ``startedAt`` to ``finishedAt``.
    public var durationSeconds: Double { finishedAt.timeIntervalSince(startedAt) }

    /// Takes a report of a finished flow.
    ///
    /// - Parameters:
    ///   - flow: the flow, after ``Flow/run()`` returned or its did-finish block was called.
    ///   - startedAt: when the caller started the flow.
    ///   - finishedAt: when it finished; now by default.
    public init(flow: Flow, startedAt: Date, finishedAt: Date = Date()) {
        flowName = flow.name
        isSuccess = flow.isSuccess
        error = flow.error.map { String(describing: $0) }
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        bucket = flow.dataBucket.mapValues(BucketValue.init(any:))
        let records = flow.operationRecords
        operations = records.map(Operation.init(record:))
        groups = GroupTotal.totals(of: records)
        summary = flow.generateSummary()
    }

    /// The report as pretty-printed JSON with sorted keys.
    ///
    /// - Throws: `EncodingError` if encoding fails (no value the report holds should make it).
    /// - Returns: UTF-8 JSON.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    private enum CodingKeys: String, CodingKey {
        case flow, isSuccess, error, startedAt, finishedAt, durationSeconds, bucket, operations, groups, summary
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(flowName, forKey: .flow)
        try container.encode(isSuccess, forKey: .isSuccess)
        try container.encode(error, forKey: .error)
        try container.encode(Self.timestamp(startedAt), forKey: .startedAt)
        try container.encode(Self.timestamp(finishedAt), forKey: .finishedAt)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(bucket, forKey: .bucket)
        try container.encode(operations, forKey: .operations)
        try container.encode(groups, forKey: .groups)
        try container.encode(summary, forKey: .summary)
    }

    /// A time as the report writes it: ISO 8601, UTC, with milliseconds.
    static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}
