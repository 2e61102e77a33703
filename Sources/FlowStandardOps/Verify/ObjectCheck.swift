public import Flow

/// What `VerifyObjectOp` found for one recorded object, compared with what the run recorded
/// (``UploadManifestEntry``): its group output, a map `{target, status, detail, by}`.
public struct ObjectCheck: Sendable, Hashable {
    /// What a check compared besides the size, the strongest the store and the record allowed.
    public enum Basis: String, Sendable, CaseIterable {
        /// A checksum: the one the store keeps, or (deep) the one the bytes read back hash to.
        case checksum
        /// An ETag: the store's, against the recorded one or the one computed from the recorded
        /// parts' ETags (a multipart object on a store whose `CompleteMultipartUpload` named none);
        /// deep, the MD5 of each part (or of the object) read back.
        case etag
        /// The size alone: neither the store nor the record had anything more to compare.
        case size
    }

    /// How the stored object compares.
    public enum Status: String, Sendable, CaseIterable {
        /// As recorded.
        case ok
        /// Not on the store (404).
        case missing
        /// On the store, but not as recorded (`detail` says what differs).
        case changed
    }

    /// The object, as the manifest names it.
    public var target: String
    /// How it compares.
    public var status: Status
    /// What differs, one difference a clause: `size 10 ≠ 12`, `crc64nvme X ≠ Y`, `etag "a" ≠ "b"`
    /// (recorded first, then stored); empty when nothing does.
    public var detail: String
    /// What the check compared, `nil` for a missing object (and from a worker that did not say).
    public var basis: Basis?

    /// Creates a check.
    public init(target: String, status: Status, detail: String = "", basis: Basis? = nil) {
        self.target = target
        self.status = status
        self.detail = detail
        self.basis = basis
    }

    /// The check as the group collects it (`by` holds the basis).
    public var flowValue: FlowValue {
        var map: [String: FlowValue] = ["target": .string(target), "status": .string(status.rawValue), "detail": .string(detail)]
        map["by"] = basis.map { .string($0.rawValue) }
        return .map(map)
    }

    /// The check a group output holds, `nil` for anything else.
    public init?(_ value: Any) {
        let map = (value as? FlowValue)?.anyValue ?? value
        guard let map = map as? [String: Any], let target = map["target"] as? String,
              let status = (map["status"] as? String).flatMap(Status.init(rawValue:)) else { return nil }
        self.init(target: target, status: status, detail: map["detail"] as? String ?? "",
                  basis: (map["by"] as? String).flatMap(Basis.init(rawValue:)))
    }

    /// The differences between what was recorded and what is stored, and what was compared: the
    /// size, then the stored checksum where the store keeps one and the run recorded one, else the
    /// ETag (the recorded one, or the one the recorded parts' ETags make), else nothing more. The
    /// ETag only when the checksum cannot say: a store's ETag may change on a copy that leaves
    /// the bytes as they were.
    static func compare(_ entry: UploadManifestEntry, size: Int64?, checksum: String?, etag: String?)
        -> (differences: [String], basis: Basis) {
        var found: [String] = []
        if let size, size != entry.size { found.append("size \(entry.size) ≠ \(size)") }
        if let recorded = entry.checksum, let checksum {
            if recorded != checksum { found.append("\(entry.algorithm) \(recorded) ≠ \(checksum)") }
            return (found, .checksum)
        }
        if let expected = entry.expectedETag, let stored = etag.flatMap(UploadManifestEntry.unquoted) {
            if expected != stored { found.append("etag \"\(expected)\" ≠ \"\(stored)\"") }
            return (found, .etag)
        }
        return (found, .size)
    }
}
