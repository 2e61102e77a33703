import Foundation

/// The ETag an entry lets `verify` expect. A store may answer `CompleteMultipartUpload` with an
/// empty `<ETag></ETag>` (Ceph RGW 16) while its `HEAD` shows the usual `MD5-of-part-MD5s-N`:
/// an empty ETag is no ETag, and the parts' ETags the entry holds make the one to expect.
extension UploadManifestEntry {
    /// The ETag to expect of the stored object, without quotes and in lowercase: the recorded
    /// one when the store sent one, else for a multipart upload whose parts all have plain-MD5
    /// ETags the ETag S3 gives such an object (the MD5 of the parts' MD5s, then `-N`); `nil`
    /// when neither can be had.
    var expectedETag: String? {
        if let etag, let recorded = Self.unquoted(etag) { return recorded }
        guard let parts, !parts.isEmpty else { return nil }
        var digests: [UInt8] = []
        for part in parts.sorted(by: { $0.number < $1.number }) {
            guard let hex = S3Upload.plainMD5(etag: part.etag), let bytes = ObjectHead.bytes(hex: hex) else { return nil }
            digests += bytes
        }
        var md5 = UploadChecksumHasher(.md5)
        md5.update(digests)
        return md5.digest.map { String(format: "%02x", $0) }.joined() + "-\(parts.count)"
    }

    /// An ETag without its quotes and spaces, in lowercase; `nil` for an empty one.
    static func unquoted(_ etag: String) -> String? {
        let text = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        return text.isEmpty ? nil : text
    }
}
