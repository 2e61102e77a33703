import Flow

/// What `VerifyObjectOp` found for one recorded object, compared with what the run recorded
/// (``UploadManifestEntry``): its group output, a map `{target, status, detail}`.
public struct ObjectCheck: Sendable, Hashable {
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

    /// Creates a check.
    public init(target: String, status: Status, detail: String = "") {
        self.target = target
        self.status = status
        self.detail = detail
    }

    /// The check as the group collects it.
    public var flowValue: FlowValue {
        .map(["target": .string(target), "status": .string(status.rawValue), "detail": .string(detail)])
    }

    /// The check a group output holds, `nil` for anything else.
    public init?(_ value: Any) {
        let map = (value as? FlowValue)?.anyValue ?? value
        guard let map = map as? [String: Any], let target = map["target"] as? String,
              let status = (map["status"] as? String).flatMap(Status.init(rawValue:)) else { return nil }
        self.init(target: target, status: status, detail: map["detail"] as? String ?? "")
    }

    /// The differences between what was recorded and what is stored, in order; empty when none.
    ///
    /// - Parameters:
    ///   - entry: what the run recorded.
    ///   - size: the stored size, `nil` when the store did not say it.
    ///   - checksum: the stored checksum of the entry's algorithm in base64, `nil` when unknown.
    ///   - etag: the stored ETag, `nil` when the store sent none.
    static func differences(_ entry: UploadManifestEntry, size: Int64?, checksum: String?, etag: String?) -> [String] {
        var found: [String] = []
        if let size, size != entry.size { found.append("size \(entry.size) ≠ \(size)") }
        if let recorded = entry.checksum, let checksum, recorded != checksum {
            found.append("\(entry.algorithm) \(recorded) ≠ \(checksum)")
        } else if entry.checksum == nil || checksum == nil, let recorded = entry.etag, let etag, recorded != etag {
            // The ETag only when the checksum cannot say: a store's ETag may change on a copy
            // that leaves the bytes as they were.
            found.append("etag \(recorded) ≠ \(etag)")
        }
        return found
    }
}
