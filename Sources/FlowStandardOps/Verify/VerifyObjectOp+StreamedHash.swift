import Foundation
import NIOCore
import Synchronization

extension VerifyObjectOp {
    /// What a deep check hashes as the body streams by: the whole object with the entry's
    /// algorithm and with MD5, and, for a multipart entry, each part (at the entry's part size)
    /// the same two ways, so that it can be compared with whatever the run recorded.
    ///
    /// Fed by one task at a time, from the body's loop; the lock makes that the compiler's
    /// knowledge rather than a promise (uncontended, once a chunk).
    final class StreamedHash: Sendable {
        /// What the read hashed to.
        struct Digests {
            /// Bytes read.
            var count: Int64
            /// The whole object's checksum of the entry's algorithm in base64, `nil` for `none`.
            var whole: String?
            /// The whole object's MD5 in lowercase hex.
            var md5: String
            /// Each part's checksum of the entry's algorithm (`nil` for `md5` and `none`) and MD5,
            /// in order; empty for an entry without parts.
            var parts: [(checksum: String?, md5: String)]

        }

        private struct State {
            var whole: UploadChecksumHasher?
            var wholeMD5 = UploadChecksumHasher(.md5)
            let partSize: Int64?
            let partAlgorithm: UploadChecksum?
            var part: UploadChecksumHasher?
            var partMD5 = UploadChecksumHasher(.md5)
            var inPart: Int64 = 0
            var parts: [(checksum: String?, md5: String)] = []
            var count: Int64 = 0

            mutating func closePart() {
                parts.append((part?.base64, Self.hex(partMD5.digest)))
                part = partAlgorithm.map(UploadChecksumHasher.init)
                partMD5 = UploadChecksumHasher(.md5)
                inPart = 0
            }

            static func hex(_ digest: [UInt8]) -> String { digest.map { String(format: "%02x", $0) }.joined() }
        }

        private let state: Mutex<State>

        /// Starts the hashes an entry can be compared with.
        init(_ entry: UploadManifestEntry) {
            let algorithm = UploadChecksum(rawValue: entry.algorithm) ?? .none
            let partSize = entry.parts?.isEmpty == false ? entry.partSize.map(Int64.init).flatMap { $0 > 0 ? $0 : nil } : nil
            let partAlgorithm: UploadChecksum? = partSize != nil && algorithm != .none && algorithm != .md5 ? algorithm : nil
            state = Mutex(State(whole: algorithm == .none ? nil : UploadChecksumHasher(algorithm), partSize: partSize,
                                partAlgorithm: partAlgorithm, part: partAlgorithm.map(UploadChecksumHasher.init)))
        }

        func consume(_ buffer: ByteBuffer) {
            state.withLock { state in
                buffer.withUnsafeReadableBytes { bytes in
                    state.count += Int64(bytes.count)
                    state.whole?.update(bytes)
                    state.wholeMD5.update(bytes)
                    guard let partSize = state.partSize else { return }
                    var rest = bytes[...]
                    while !rest.isEmpty {
                        let take = Int(min(Int64(rest.count), partSize - state.inPart))
                        let slice = UnsafeRawBufferPointer(rebasing: rest.prefix(take))
                        state.part?.update(slice)
                        state.partMD5.update(slice)
                        state.inPart += Int64(take)
                        rest = rest.dropFirst(take)
                        if state.inPart == partSize { state.closePart() }
                    }
                }
            }
        }

        /// What was consumed hashed to, the last part closed.
        func digests() -> Digests {
            state.withLock { state in
                var parts = state.parts
                if state.partSize != nil, state.inPart > 0 || parts.isEmpty {
                    parts.append((state.part?.base64, State.hex(state.partMD5.digest)))
                }
                return Digests(count: state.count, whole: state.whole?.base64, md5: State.hex(state.wholeMD5.digest), parts: parts)
            }
        }
    }
}

extension ObjectCheck {
    /// The differences between what was recorded and what a deep check read back, and what was
    /// compared: the size, then the whole-object checksum the run recorded, else each recorded
    /// part's checksum, else each part's MD5 against its plain-MD5 ETag, else the object's MD5
    /// against a plain-MD5 ETag of a single `PUT`, else nothing more.
    static func compare(_ entry: UploadManifestEntry, read: VerifyObjectOp.StreamedHash.Digests) -> (differences: [String], basis: Basis) {
        var found: [String] = []
        if read.count != entry.size { found.append("size \(entry.size) ≠ \(read.count)") }
        if let recorded = entry.checksum, !recorded.contains("-"), let whole = read.whole {
            if recorded != whole { found.append("\(entry.algorithm) \(recorded) ≠ \(whole)") }
            return (found, .checksum)
        }
        let parts = (entry.parts ?? []).sorted { $0.number < $1.number }
        if !parts.isEmpty, read.parts.count != parts.count {
            found.append("parts \(parts.count) ≠ \(read.parts.count)")
            return (found, .size)
        }
        if !parts.isEmpty, parts.allSatisfy({ $0.checksum != nil }), read.parts.allSatisfy({ $0.checksum != nil }) {
            for (part, hashed) in zip(parts, read.parts) where part.checksum != hashed.checksum {
                found.append("part \(part.number) \(entry.algorithm) \(part.checksum ?? "") ≠ \(hashed.checksum ?? "")")
            }
            return (found, .checksum)
        }
        let partMD5s = parts.map { S3Upload.plainMD5(etag: $0.etag) }
        if !parts.isEmpty, partMD5s.allSatisfy({ $0 != nil }) {
            for (index, (part, hashed)) in zip(parts, read.parts).enumerated() where partMD5s[index] != hashed.md5 {
                found.append("part \(part.number) etag \"\(partMD5s[index] ?? "")\" ≠ MD5 \(hashed.md5)")
            }
            return (found, .etag)
        }
        if parts.isEmpty, let md5 = entry.etag.flatMap(S3Upload.plainMD5(etag:)) {
            if md5 != read.md5 { found.append("etag \"\(md5)\" ≠ MD5 \(read.md5)") }
            return (found, .etag)
        }
        return (found, .size)
    }
}
