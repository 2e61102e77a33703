import Flow
import Foundation
import Synchronization

/// `skipExisting`: what the `HEAD` before an upload must show for the file to be left alone, the
/// same in a real run and a dry run (``UploadSkipRule``).
extension UploadFileOp {
    /// An object found on the store that the file need not replace.
    struct ExistingCopy: Sendable {
        /// The rule it passed.
        var rule: UploadSkipRule
        /// Its size, the file's.
        var size: Int64
        /// Its stored checksum of the op's algorithm, when the store said it.
        var checksum: String?
        /// Its ETag, when the store said it.
        var etag: String?

        /// `N bytes` for `size` (as before the other rules), `N bytes, same modtime` otherwise.
        var detail: String { rule == .size ? "\(size) bytes" : "\(size) bytes, \(rule.reason)" }

        /// What the dry run's plan says: `exists with the same size (N bytes) at TARGET`, or
        /// `… the same size and modification time …`, `… the same size and crc64nvme checksum …`.
        func planReason(at target: String, algorithm: UploadChecksum) -> String {
            let what: String
            switch rule {
            case .off, .size: what = "the same size"
            case .modtime: what = "the same size and modification time"
            case .checksum: what = "the same size and \(algorithm.rawValue) checksum"
            }
            return "exists with \(what) (\(size) bytes) at \(target)"
        }

        /// The manifest line of the skipped object.
        func manifestEntry(target: String, algorithm: UploadChecksum, s3: S3Target?) -> UploadManifestEntry {
            var entry = UploadManifestEntry(target: target, size: size, algorithm: algorithm, checksum: checksum, etag: etag)
            entry.skipped = rule.reason
            entry.record(s3)
            return entry
        }
    }

    /// The object the store already has in place of `input`, by the op's ``skipRule``, or `nil`:
    /// the file is to be sent.
    ///
    /// - Parameters:
    ///   - element: the group element as the bucket holds it (a coordinator-read file's `mtime`).
    ///   - head: makes the `HEAD` (with checksum mode on S3 for ``UploadSkipRule/checksum``).
    /// - Throws: what the `HEAD` throws; a file that cannot be read for its checksum.
    func existingCopy(of input: FileInput, element: Any?, head: () async throws -> ObjectHead) async throws -> ExistingCopy? {
        guard skipRule != .off else { return nil }
        let size = try Self.size(of: input)
        let answer = try await head()
        guard answer.status == 200, answer.size == size else { return nil }
        var copy = ExistingCopy(rule: skipRule, size: size, checksum: answer.checksum(checksum), etag: answer.etag)
        switch skipRule {
        case .off: return nil
        case .size: return copy
        case .modtime:
            guard let stored = answer.modificationTime, stored == Self.modificationTime(of: input, element: element) else { return nil }
            return copy
        case .checksum:
            guard let stored = answer.checksum(checksum) else { return withoutStoredChecksum(answer, copy: copy, input: input, element: element) }
            let local = try await Self.localChecksum(of: input, algorithm: checksum, isCancelled: { self.isCancelled })
            guard local == stored else { return nil }
            copy.checksum = stored
            return copy
        }
    }

    /// The store keeps no checksum of the op's algorithm (Ceph RGW before Squid, nginx, a store
    /// that was sent none): `skipExisting: checksum` compares what it can, the size and the
    /// modification time stored with the upload (`x-amz-meta-mtime`, sent for this rule too), and
    /// says so once per store for the process's life, instead of sending every file again silently.
    private func withoutStoredChecksum(_ answer: ObjectHead, copy: ExistingCopy, input: FileInput, element: Any?) -> ExistingCopy? {
        let store = s3Target?.endpoint.absoluteString ?? baseURL.host ?? baseURL.absoluteString
        if Self.storesWithoutChecksum.withLock({ $0.insert(store).inserted }) {
            log(message: "the store at \(store) keeps no \(checksum.rawValue) checksum: skipExisting: checksum compares size and "
                + "modification time there (an object stored without its time is sent again)")
        }
        guard let stored = answer.modificationTime, stored == Self.modificationTime(of: input, element: element) else { return nil }
        var copy = copy
        copy.rule = .modtime
        return copy
    }

    /// The stores that said they keep no checksum of the op's algorithm, said once each.
    static let storesWithoutChecksum = Mutex<Set<String>>([])

    /// The file's modification time: read here for a path; for bytes the coordinator read, what
    /// it noted in the element (`mtime`), else `nil`.
    static func modificationTime(of input: FileInput, element: Any?) -> FileModificationTime? {
        switch input {
        case .path(let path, _): return FileModificationTime(path: path)
        case .bytes:
            let value = (element as? FlowValue)?.anyValue ?? element
            return ((value as? [String: Any])?["mtime"] as? String).flatMap(FileModificationTime.init(text:))
        }
    }

    /// The metadata stored with an upload for `skipExisting: modtime` (and `checksum`, whose store
    /// may keep no checksum): `x-amz-meta-mtime`, none for other rules or when the time cannot be read.
    func modificationTimeHeaders(of input: FileInput, element: Any?) -> [String: String] {
        guard skipRule == .modtime || skipRule == .checksum, let time = Self.modificationTime(of: input, element: element) else { return [:] }
        return [FileModificationTime.header: time.text]
    }

    /// The file's checksum of `algorithm` in base64, read for it (off the caller's thread).
    static func localChecksum(of input: FileInput, algorithm: UploadChecksum, isCancelled: @escaping @Sendable () -> Bool) async throws
        -> String? {
        switch input {
        case .bytes(let bytes, _, _): return algorithm.base64(of: bytes)
        case .path(let path, _):
            return try await BlockingWork.run {
                guard var hasher = algorithm.makeHasher() else { return nil }
                try ReadableFile(path: path).forEachChunk { chunk in
                    hasher.update(chunk)
                    return !isCancelled()
                }
                if isCancelled() { throw CancellationError() }
                return hasher.base64
            }
        }
    }
}
