import Foundation

/// What one upload left on the store: its target, size, checksum and ETag. `UploadFileOp` logs it
/// as one line, `manifest {JSON}`, so that it lands in the run's journal and `--json` report with
/// the op's other log lines, and a manifest can be read back from them (``init(logLine:)``).
public struct UploadManifestEntry: Codable, Sendable, Hashable {
    /// The object's URL, or `s3://BUCKET/KEY`.
    public var target: String
    /// Bytes sent.
    public var size: Int64
    /// The checksum's algorithm (`crc64nvme`, …), `none` without one.
    public var algorithm: String
    /// The checksum in base64 as the store keeps it (`-N` after a composite one), `nil` when none
    /// was computed or the store did not say it.
    public var checksum: String?
    /// The store's ETag, `nil` when it sent none.
    public var etag: String?
    /// Why the file was not sent (`same size`, `same modtime`, `same checksum`: `skipExisting`
    /// found it on the store), `nil` for an object this run uploaded. The size, checksum and
    /// ETag of a skipped entry are the stored object's.
    public var skipped: String?
    /// An S3 target's endpoint URL as the op used it, so that `flow-coordinator verify` reaches
    /// the same store; `nil` for HTTP.
    public var endpoint: String?
    /// An S3 target's signing region, `nil` for HTTP.
    public var region: String?

    /// A multipart upload's id, `nil` for a single `PUT` (and for HTTP).
    public var uploadId: String?
    /// A multipart upload's part size in bytes, `nil` for a single `PUT`.
    public var partSize: Int?
    /// A multipart upload's parts as completed, in order, `nil` for a single `PUT`.
    public var parts: [Part]?

    /// One part of a multipart upload as the store took it.
    public struct Part: Codable, Sendable, Hashable {
        /// Its number, from 1.
        public var number: Int
        /// The store's ETag for it.
        public var etag: String
        /// Its checksum in base64, `nil` without one.
        public var checksum: String?

        /// Creates a part.
        public init(number: Int, etag: String, checksum: String?) {
            self.number = number
            self.etag = etag
            self.checksum = checksum
        }
    }

    /// Notes an S3 target's endpoint and region (nothing for `nil`, HTTP).
    public mutating func record(_ s3: S3Target?) {
        guard let s3 else { return }
        endpoint = s3.endpoint.absoluteString
        region = s3.region
    }

    /// The prefix of the log line.
    public static let logPrefix = "manifest "

    /// Creates an entry.
    public init(target: String, size: Int64, algorithm: UploadChecksum, checksum: String?, etag: String?) {
        self.target = target
        self.size = size
        self.algorithm = algorithm.rawValue
        self.checksum = checksum
        self.etag = etag
    }

    /// The entry as one line of JSON, keys sorted.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{}"
    }

    /// `manifest {JSON}`.
    public var logLine: String { Self.logPrefix + json }

    /// The entry an `UploadFileOp` recorded: its own manifest line, whole (`manifest {JSON}` from
    /// its first character), in a result of that op; `nil` for any other op's line and for a line
    /// that only contains such text. A line of another op (a `SimplePrintOp` printing a `--set`
    /// value) once added an entry, and `verify` then sent a signed request to the endpoint it named.
    ///
    /// - Parameters:
    ///   - operation: the op of the result the line belongs to, as the coordinator named the task.
    ///   - line: the line as the op logged it, without the summary's label.
    package static func recorded(by operation: String, line: String) -> UploadManifestEntry? {
        guard operation == "UploadFileOp", line.hasPrefix(logPrefix + "{") else { return nil }
        return UploadManifestEntry(logLine: line)
    }

    /// The entry a log line holds, `nil` for any other line.
    public init?(logLine: String) {
        guard logLine.hasPrefix(Self.logPrefix),
              let entry = try? JSONDecoder().decode(Self.self, from: Data(logLine.dropFirst(Self.logPrefix.count).utf8)) else { return nil }
        self = entry
    }
}
