import Flow
import Foundation
import NIOCore

/// An upload the store no longer has because an earlier try completed it: a coordinator killed
/// while `CompleteMultipartUpload` was in flight left a checkpoint naming an upload id that is
/// now an object, and `ListParts` answers `NoSuchUpload`. Sending the whole file again would be
/// correct but wasteful (60 MiB re-sent in the case that found it), so the object is checked
/// against the file first: its size, and its checksum of the upload's algorithm where the store
/// returns one (a full-object CRC64NVME, or a composite `…-N`) or its multipart ETag (the MD5 of
/// its parts' MD5s, `…-N`). Only an object proven so is kept; anything else is uploaded again.
extension S3Upload {
    /// What the file would be as a multipart upload in parts of `partSize`: every part's MD5 ETag
    /// and checksum, the whole file's CRC64NVME when that is the algorithm, and the multipart ETag.
    struct LocalParts: Sendable {
        var parts: [SentPart]
        var wholeCRC64: String?
        var multipartETag: String
    }

    /// The completed object, as an ``Outcome``, when the store holds exactly this file under the
    /// key; `nil` when it does not or that cannot be shown (then the upload starts again).
    func completedObject(_ source: PartSource, partSize: Int, uploadID: String, deadline: NIODeadline) async throws -> Outcome? {
        let head: ObjectHead
        do {
            head = try await client.head(key: key, checksumMode: checksum.s3Name != nil, deadline: deadline,
                                         action: "checking whether \(objectURI) was completed by an earlier try")
        } catch let error as FlowStandardOpError {
            log("could not check whether \(objectURI) was completed by an earlier try (\(error.message))")
            return nil
        }
        guard head.exists, head.size == source.size else { return nil }
        let local = try await localParts(source, partSize: partSize)
        let stored = head.checksum(checksum)
        let expected: String? = switch checksum {
        case .crc64nvme: local.wholeCRC64
        case .crc32c, .sha256: Self.compositeChecksum(checksum, parts: local.parts.compactMap(\.checksum))
        case .md5, .none: nil
        }
        // Either proves it: a store's checksum can be computed otherwise than the SDKs' (moto's
        // FULL_OBJECT CRC64NVME is 4 bytes), and a store behind SSE-KMS keeps no MD5 ETags.
        let checksumMatches = checksum.s3Name != nil && stored != nil && stored == expected
        let etag = head.etag?.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        guard checksumMatches || etag == local.multipartETag else { return nil }
        let proof = checksumMatches ? "its \(checksum.s3Name ?? "") checksum" : "its multipart ETag"
        log("multipart upload \(uploadID) of \(objectURI) was completed by an earlier try: the object matches the file "
            + "(size and \(proof)); not sending it again")
        // Recorded as a completion records it: the store's checksum where it is the file's, else
        // a composite made from the file's parts (a full-object CRC64NVME only a store can say).
        let recorded = checksumMatches ? stored : (checksum == .crc64nvme ? nil : expected)
        return Outcome(size: source.size, parts: local.parts.count, checksum: recorded, etag: head.etag, uploadID: uploadID,
                       partSize: partSize, completedParts: local.parts, partsAlreadyStored: local.parts.count)
    }

    /// Reads the file part by part, in order, and hashes each as ``localParts`` says.
    func localParts(_ source: PartSource, partSize: Int) async throws -> LocalParts {
        let size = source.size
        let partCount = Int((size + Int64(partSize) - 1) / Int64(partSize))
        var parts: [SentPart] = []
        var digests: [UInt8] = []
        var whole = checksum == .crc64nvme ? UploadChecksumHasher(.crc64nvme) : nil
        for number in 1...max(1, partCount) {
            try Task.checkCancellation()
            let offset = Int64(number - 1) * Int64(partSize)
            let length = Int(Self.length(ofPart: number, size: size, partSize: partSize))
            let (bytes, _, value) = try await source.read(at: offset, count: length, checksum: checksum)
            var md5 = UploadChecksumHasher(.md5)
            bytes.withUnsafeReadableBytes { pointer in
                md5.update(pointer)
                whole?.update(pointer)
            }
            let digest = md5.digest
            digests += digest
            parts.append(SentPart(etag: "\"" + digest.map { String(format: "%02x", $0) }.joined() + "\"",
                                  checksum: checksum == .md5 ? nil : value))
        }
        var combined = UploadChecksumHasher(.md5)
        combined.update(digests)
        let etag = combined.digest.map { String(format: "%02x", $0) }.joined() + "-\(parts.count)"
        return LocalParts(parts: parts, wholeCRC64: whole?.base64, multipartETag: etag)
    }
}
