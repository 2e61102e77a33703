import Crypto
import Flow
import Foundation
import NIOCore
import NIOHTTP1

/// The checksums of ``S3Upload``: sent so that the store checks each body, computed while the file
/// is read, never in a second read.
///
/// - A single `PUT` of a file on disk goes `aws-chunked` (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`),
///   with the checksum in a trailer after the last byte, as the AWS SDKs stream uploads: the
///   file is still streamed, and hashed chunk by chunk as it is read. `md5` cannot go in a trailer
///   (`Content-MD5` is a header): the file, at most a part's size, is read once into memory,
///   hashed there and sent from there.
/// - A body in memory (a part, a file the coordinator sent) is hashed when it is read and sent
///   with `x-amz-checksum-ALG` (or `Content-MD5`) and `x-amz-sdk-checksum-algorithm`.
/// - A multipart upload names the algorithm at its start (`x-amz-checksum-algorithm`), sends each
///   part's checksum with the part and lists them in `CompleteMultipartUpload`: the store makes
///   a COMPOSITE checksum for CRC32C and SHA-256 (`VALUE-N`) and a FULL_OBJECT one for CRC64NVME.
extension S3Upload {
    /// The headers that carry a body's checksum `value`: none for ``UploadChecksum/none``.
    static func checksumHeaders(_ checksum: UploadChecksum, value: String?) -> [(String, String)] {
        guard let value, let header = checksum.s3Header else { return [] }
        guard let name = checksum.s3Name else { return [(header, value)] }
        return [(header, value), ("x-amz-sdk-checksum-algorithm", name)]
    }

    /// A COMPOSITE checksum of parts: the algorithm over their digests one after the other, in
    /// base64, then `-N`; `nil` for CRC64NVME (FULL_OBJECT, which only the store says) and `md5`.
    static func compositeChecksum(_ checksum: UploadChecksum, parts: [String]) -> String? {
        guard [.crc32c, .sha256].contains(checksum), !parts.isEmpty, var hasher = checksum.makeHasher() else { return nil }
        for part in parts {
            guard let digest = Data(base64Encoded: part) else { return nil }
            hasher.update(Array(digest))
        }
        return "\(hasher.base64)-\(parts.count)"
    }

    /// Sends the whole file in one `PUT` with its checksum.
    func putWhole(_ source: PartSource, deadline: NIODeadline, action: String) async throws -> Outcome {
        var headers = client.objectHeaders
        let body: S3Client.Body
        var value: String?
        switch source {
        case .file(let file, let size) where checksum.s3Name != nil:
            // Streamed aws-chunked, the checksum in the trailer (S3Upload+TrailerFallback.swift).
            return try await putWholeTrailing(file, size: size, source: source, deadline: deadline, action: action)
        case .file(let file, let size) where checksum == .md5:
            // Content-MD5 goes before the body: read once into memory (at most a part's size).
            let (bytes, hash, md5) = try await source.read(at: 0, count: Int(size), checksum: .md5)
            _ = file
            value = md5
            try await Self.reportProgress(bytes.readableBytes)
            headers += Self.checksumHeaders(.md5, value: md5)
            body = .hashedBytes(bytes, sha256: hash)
        case .file(let file, let size):
            body = .file(FileUpload(file: file, size: size, prefix: nil, suffix: nil))
        case .bytes(let bytes):
            value = checksum.base64(of: bytes)
            headers += Self.checksumHeaders(checksum, value: value)
            body = .bytes(ByteBuffer(bytes: bytes))
        }
        let answer = try await explainingChecksum(action: action) {
            try await client.expectSuccess(.PUT, key: key, headers: headers, body: body, deadline: deadline, action: action)
        }
        return Outcome(size: source.size, parts: 0, checksum: value, etag: answer.headers.first(name: "ETag"))
    }

    /// Streams the file `aws-chunked` with its checksum in the trailer, hashed as it is read.
    func putWholeStreamed(_ file: OpenFile, size: Int64, source: PartSource, deadline: NIODeadline, action: String) async throws -> Outcome {
        var headers = client.objectHeaders
        let recorder = UploadChecksumRecorder(checksum)
        var upload = FileUpload(file: file, size: size, prefix: nil, suffix: nil)
        upload.checksum = recorder
        upload.awsChunked = true
        let encoding = headers.first { $0.0.lowercased() == "content-encoding" }?.1
        headers.removeAll { $0.0.lowercased() == "content-encoding" }
        headers.append(("Content-Encoding", encoding.map { "aws-chunked,\($0)" } ?? "aws-chunked"))
        headers.append(("x-amz-trailer", checksum.s3Header ?? ""))
        headers.append(("x-amz-sdk-checksum-algorithm", checksum.s3Name ?? ""))
        // Not explained as changed bytes: this form has no payload hash, so a store's
        // XAmzContentSHA256Mismatch means it does not take the form (putWholeTrailing).
        let answer = try await client.expectSuccess(.PUT, key: key, headers: headers, body: .file(upload), deadline: deadline,
                                                    action: action)
        return Outcome(size: source.size, parts: 0, checksum: recorder.value, etag: answer.headers.first(name: "ETag"))
    }

    /// Runs a request, making a store's refusal of a body for its checksum (`BadDigest`,
    /// `XAmzContentChecksumMismatch`) say so, with the algorithm; it stays transient, so the step's
    /// `retry` sends the body again.
    func explainingChecksum<T>(action: String, _ request: () async throws -> T) async throws -> T {
        do {
            return try await request()
        } catch let error as FlowStandardOpError where Self.checksumRefusals.contains(error.serviceCode ?? "") {
            let name = checksum == .none ? "SHA-256" : (checksum.s3Name ?? "MD5")
            let reason = error.message.hasPrefix(action + ": ") ? String(error.message.dropFirst(action.count + 2)) : error.message
            throw FlowStandardOpError(error.code, "\(action): the store refused the body because its \(name) checksum did not match "
                                      + "what arrived (the bytes changed on the way; sent again under the step's retry): \(reason)",
                                      status: error.status, retryAfter: error.retryAfter, serviceCode: error.serviceCode)
        }
    }

    /// The codes of a store that refused a body for its checksum or content hash.
    static let checksumRefusals: Set<String> = ["BadDigest", "XAmzContentChecksumMismatch", "XAmzContentSHA256Mismatch"]
}
